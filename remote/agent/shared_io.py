"""One client's I/O loop of the shared-storage test: N threads, each on its own file, for one step.

A thread writes (or reads) `bs` bytes at a time, sequentially through its file and round again, with
the flags the step was given (O_DIRECT|O_SYNC as the EFS benchmark did). Every completed request is
counted in the second of the step it completed in, counted from the step's planned start on this
host's clock: the workbench lines the seconds of all clients up on one clock, so they add up.
Threads (not processes): each request waits in a system call, where Python lets the others run.
"""
import errno
import mmap
import os
import threading
import time
from typing import Any, Dict, List, Optional  # noqa: F401 - List in a type comment

from .disk_latency import Histogram

HAS_PV = hasattr(os, "preadv") and hasattr(os, "pwritev")
STOP_CHECK_EVERY = 16    # requests between looks at the stop flag


def open_flags(writing: bool, direct: bool, sync: bool) -> int:
    flags = os.O_WRONLY if writing else os.O_RDONLY
    if direct:
        flags |= os.O_DIRECT
    if sync and writing:
        flags |= os.O_SYNC
    # never through a link someone put in the place of our file
    return flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def flag_names(writing: bool, direct: bool, sync: bool) -> str:
    names = ["O_WRONLY" if writing else "O_RDONLY"]
    if direct:
        names.append("O_DIRECT")
    if sync and writing:
        names.append("O_SYNC")
    return "|".join(names)


def aligned_buffer(bs: int) -> mmap.mmap:
    """Page-aligned memory (O_DIRECT wants it; bytes objects are not), filled with data."""
    buf = mmap.mmap(-1, max(bs, 1))
    buf.write(os.urandom(max(bs, 1)))
    return buf


def one_request(fd: int, view: Any, offset: int, writing: bool) -> int:
    if HAS_PV:
        if writing:
            return os.pwritev(fd, [view], offset)  # novermin - only where HAS_PV
        return os.preadv(fd, [view], offset)  # novermin - only where HAS_PV
    os.lseek(fd, offset, os.SEEK_SET)
    return os.writev(fd, [view]) if writing else os.readv(fd, [view])


def direct_refused(path: str, bs: int, writing: bool, sync: bool) -> Optional[str]:
    """Why this file system refuses O_DIRECT at `bs`-byte requests ("" = it takes them), by trying one.

    Returns None when it takes them. Only EINVAL (open or request) means a refusal: anything else
    is a real error and propagates.
    """
    buf = aligned_buffer(bs)
    try:
        try:
            fd = os.open(path, open_flags(writing, True, sync))
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return "open with O_DIRECT failed (EINVAL)"
            raise
        try:
            one_request(fd, memoryview(buf)[:bs], 0, writing)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return "a {}-byte O_DIRECT request failed (EINVAL)".format(bs)
            raise
        finally:
            os.close(fd)
    finally:
        buf.close()
    return None


class StepWorker(threading.Thread):
    """One thread of one step: requests until the step's end, counted per second from its start."""

    def __init__(self, path: str, bs: int, file_size: int, writing: bool, direct: bool, sync: bool,
                 start_perf: float, runtime: float, stop: threading.Event) -> None:
        threading.Thread.__init__(self, name="benchbay-shared-worker", daemon=True)
        self.path, self.bs, self.writing = path, bs, writing
        self.blocks = max(1, file_size // max(bs, 1))
        self.flags = open_flags(writing, direct, sync)
        self.start_perf, self.runtime, self.stop = start_perf, runtime, stop
        seconds = int(runtime + 0.999999)
        self.per_second = [0] * seconds     # requests completed in each second of the step
        self.hist = Histogram()
        self.first_issue = None  # type: Optional[float]   # perf_counter of the first request
        self.error = None  # type: Optional[BaseException]

    def run(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # handed to the step, which reports it
            self.error = exc

    def _loop(self) -> None:
        fd = os.open(self.path, self.flags)
        buf = aligned_buffer(self.bs)
        view = memoryview(buf)[:self.bs]
        perf = time.perf_counter
        end = self.start_perf + self.runtime
        slots = len(self.per_second)
        try:
            delay = self.start_perf - perf()
            if delay > 0:
                time.sleep(delay)
            block, n = 0, 0
            while True:
                t0 = perf()
                if t0 >= end:
                    break
                if self.first_issue is None:
                    self.first_issue = t0
                one_request(fd, view, block * self.bs, self.writing)
                t1 = perf()
                block = block + 1 if block + 1 < self.blocks else 0
                if t1 < end:   # a request that ends after the step is not counted in it
                    self.hist.record(t1 - t0)
                    slot = int(t1 - self.start_perf)
                    if 0 <= slot < slots:
                        self.per_second[slot] += 1
                n += 1
                if n >= STOP_CHECK_EVERY:
                    n = 0
                    if self.stop.is_set():
                        break
        finally:
            view.release()
            buf.close()
            os.close(fd)


def prepare_file(path: str, size: int) -> None:
    """The thread's own file, new (O_EXCL: never someone else's), written with data so reads find some."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    try:
        chunk = os.urandom(min(size, 1 << 20))
        left = size
        while left > 0:
            left -= os.write(fd, chunk[:left])
        os.fsync(fd)
    finally:
        os.close(fd)


def sum_seconds(workers: List[StepWorker], upto: int) -> int:
    """Requests all threads completed in second `upto` of the step."""
    return sum(w.per_second[upto] for w in workers if upto < len(w.per_second))


def merged(workers: List[StepWorker]) -> Dict[str, Any]:
    hist = Histogram()
    for worker in workers:
        hist.merge(worker.hist)
    seconds = max(len(w.per_second) for w in workers) if workers else 0
    return {"hist": hist, "per_second": [sum_seconds(workers, i) for i in range(seconds)]}
