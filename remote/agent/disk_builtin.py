"""The built-in disk engine: stdlib only, what fio's psync engine does, for hosts without fio.

Each worker has its own descriptor and a page-aligned mmap buffer (O_DIRECT needs aligned memory,
which bytes objects are not): preadv/pwritev into it on 3.7+, lseek + readv/writev on 3.6 (the
descriptor is the worker's own, so the seek is safe). One worker runs in this thread; more run in
forked processes (one per CPU, each running its share of the workers as threads) sending their figures
back over a pipe: the threads of one process alone contend for its GIL after every syscall and fall behind
fio at 16 workers, while every further process costs CPU per I/O (its own interpreter's memory to bring
back into the caches and TLB at each switch to it): 2 or 4 processes per CPU, or one per worker, spent
more than one per CPU (see the report in benchmarks/). Latency: perf_counter around each I/O (write +
fdatasync counts as one I/O) into a Histogram; I/Os started in the warm-up are not counted.
"""
import bisect
import contextlib
import gc
import json
import math
import mmap
import os
import platform
import random
import signal
import threading
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - List in a type comment

from .common import interval_count, rate_interval, rates
from .disk_latency import UPPER as HIST_UPPER
from .disk_latency import Histogram

ENGINE = "builtin"
START_DELAY = 0.05       # seconds: all workers start on the same clock tick
PROGRESS_EVERY = 0.5     # seconds
STOP_CHECK_SECONDS = 0.05   # between looks at the stop flag / the parent
# "mixed": workers spread as threads over a few forked processes (see process_count); "processes": one
# forked process per worker; "threads": all in this process (for comparison)
WORKER_MODE = "mixed"
PROCESSES_PER_CPU = 1    # "mixed": processes per CPU, the workers spread over them as threads
HAS_PV = hasattr(os, "preadv") and hasattr(os, "pwritev")


def version() -> str:
    return "benchbay-builtin ({} {})".format(platform.python_implementation(), platform.python_version())


def open_flags(job: Dict[str, Any], direct: bool) -> Tuple[int, List[str]]:
    writing = job["rw"] in ("write", "randwrite")
    flags = os.O_WRONLY if writing else os.O_RDONLY
    names = ["O_WRONLY" if writing else "O_RDONLY"]
    if direct:
        flags |= os.O_DIRECT
        names.append("O_DIRECT")
    if writing and job.get("sync") == "osync":
        flags |= os.O_SYNC
        names.append("O_SYNC")
    # O_NOFOLLOW: never through a link someone put in the test file's place
    return flags | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0), names


def describe(job: Dict[str, Any], direct: bool, mode: str) -> str:
    _, names = open_flags(job, direct)
    writing = job["rw"] in ("write", "randwrite")
    call = ("pwritev" if writing else "preadv") if HAS_PV else ("lseek+writev" if writing else "lseek+readv")
    if writing and job.get("sync") == "fdatasync":
        call += "+fdatasync"
    order = "random bs-aligned offsets" if job["rw"].startswith("rand") else "sequential"
    return "{}, {}, bs={}, {} {}, {}".format("|".join(names), call, job["bs"], job["workers"], mode, order)


def _io_call(writing: bool, fdatasync: bool) -> Any:
    """The one call an I/O makes, (fd, bufs, offset): preadv/pwritev themselves where they exist, else a
    function (a sync write or an lseek on 3.6 costs far more than the extra Python call)."""
    if HAS_PV and not fdatasync:
        return os.pwritev if writing else os.preadv  # novermin - only where HAS_PV

    def io(fd: int, bufs: List[Any], offset: int) -> None:
        if HAS_PV:
            os.pwritev(fd, bufs, offset)  # novermin - only where HAS_PV
        else:
            os.lseek(fd, offset, os.SEEK_SET)
            if writing:
                os.writev(fd, bufs)
            else:
                os.readv(fd, bufs)
        if fdatasync:
            os.fdatasync(fd)
    return io


def _worker(job: Dict[str, Any], direct: bool, seed: int, t_start: float,
            should_stop: Any) -> Dict[str, Any]:
    """Runs I/Os until the job's end; returns {"hist", "ios", "bytes", "first", "last", "per_interval"}.

    Every Python operation in the measured loop costs CPU that fio does not spend, so the loop holds only
    what each I/O needs: its offset, two clock reads, one bisect into the histogram and total/min/max. The
    count of I/Os is the histogram's, an interval's is the difference of two such counts; interval ends, the
    window's end and the stop flag are looked at only once the clock passes the nearest of them (`mark`)."""
    flags, _ = open_flags(job, direct)
    fd = os.open(job["file"], flags)
    bs = int(job["bs"])
    buf = mmap.mmap(-1, bs)  # anonymous mmap: page-aligned, as O_DIRECT wants
    buf.write(os.urandom(bs))
    bufs = [buf]
    writing = job["rw"] in ("write", "randwrite")
    rand = job["rw"].startswith("rand")
    io = _io_call(writing, writing and job.get("sync") == "fdatasync")
    blocks = max(1, int(job["size"]) // bs)
    # random() is one C call; randrange() is several Python ones, per I/O (blocks < 2**53: uniform enough);
    # floor() returns an int without int()'s argument tuple
    rnd, floor = random.Random(seed).random, math.floor
    hist = Histogram()
    counts, upper, bucket = hist.counts, HIST_UPPER, bisect.bisect_right
    total, low, high = 0.0, math.inf, 0.0
    perf = time.perf_counter
    warm_end = t_start + float(job["warmup"])
    end = warm_end + float(job["runtime"])
    first = last = 0.0
    interval, slots = _intervals(job)
    per_interval = [0] * (slots + 1)   # the last: I/Os that end past the window (in the IOPS, in no interval)
    position = (seed % blocks) if not rand else 0
    if not rand and job["workers"] > 1:
        position = (blocks // job["workers"]) * (seed % job["workers"])
    try:
        delay = t_start - perf()
        if delay > 0:
            time.sleep(delay)
        stopped = False
        next_stop = perf() + STOP_CHECK_SECONDS
        while True:   # the warm-up: I/Os that start before warm_end are done but not counted
            if rand:
                offset = floor(rnd() * blocks) * bs
            else:
                offset = position * bs
                position = position + 1 if position + 1 < blocks else 0
            t0 = perf()
            if t0 >= warm_end:
                break
            io(fd, bufs, offset)
            if t0 >= next_stop:
                next_stop = t0 + STOP_CHECK_SECONDS
                if should_stop():
                    stopped = True
                    break
        if not stopped:
            first = t1 = t0
            slot, slot_end = 0, warm_end + interval
            base = 0   # measured I/Os that ended before this slot: an interval's count is a difference of sums
            mark = min(slot_end, end, next_stop)
            while True:
                io(fd, bufs, offset)
                t1 = perf()
                took = t1 - t0
                counts[bucket(upper, took)] += 1
                total += took
                if took < low:
                    low = took
                if took > high:
                    high = took
                if t1 >= mark:
                    if t1 >= slot_end and slot < slots:
                        done = sum(counts) - 1   # this I/O ended in a later slot
                        while t1 >= slot_end and slot < slots:
                            per_interval[slot] = done - base
                            base = done
                            slot += 1
                            slot_end += interval
                    if t1 >= end:
                        break
                    if t1 >= next_stop:
                        next_stop = t1 + STOP_CHECK_SECONDS
                        if should_stop():
                            break
                    mark = min(slot_end, end, next_stop)
                if rand:
                    offset = floor(rnd() * blocks) * bs
                else:
                    offset = position * bs
                    position = position + 1 if position + 1 < blocks else 0
                t0 = perf()
            last = t1
            per_interval[slot] = sum(counts) - base   # the slot of the last I/O (past the window: the extra one)
    finally:
        os.close(fd)
        buf.close()
    ios = sum(counts)
    hist.count, hist.total, hist.min, hist.max = ios, total, low, high
    return {"hist": hist.to_state(), "ios": ios, "bytes": ios * bs, "first": first, "last": last,
            "per_interval": per_interval[:slots]}


def _intervals(job: Dict[str, Any]) -> Tuple[float, int]:
    """(interval length, how many) of the measured window's per-interval rates."""
    interval = rate_interval(float(job["runtime"]))
    return interval, interval_count(float(job["runtime"]), interval)


def _run_threads(ctx: Any, job: Dict[str, Any], direct: bool, base_seed: int,
                 t_start: float) -> List[Dict[str, Any]]:
    stop = threading.Event()
    boxes = [{} for _ in range(int(job["workers"]))]  # type: List[Dict[str, Any]]

    def target(box: Dict[str, Any], seed: int) -> None:
        try:
            box["out"] = _worker(job, direct, seed, t_start, stop.is_set)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    threads = [threading.Thread(target=target, args=(box, base_seed + i), name="benchbay-disk-worker", daemon=True)
               for i, box in enumerate(boxes)]
    for thread in threads:
        thread.start()
    try:
        _wait(ctx, job, t_start, lambda: not any(t.is_alive() for t in threads))
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    for box in boxes:
        if "error" in box:
            raise box["error"]
    return [box["out"] for box in boxes]


def _threads_here(job: Dict[str, Any], direct: bool, seeds: List[int], t_start: float,
                  parent_gone: Any) -> List[Dict[str, Any]]:
    """In a forked child: one thread per seed; the first error ends them all."""
    stop = threading.Event()
    boxes = [{} for _ in seeds]  # type: List[Dict[str, Any]]

    def should_stop() -> bool:
        return stop.is_set() or parent_gone()

    def target(box: Dict[str, Any], seed: int) -> None:
        try:
            box["out"] = _worker(job, direct, seed, t_start, should_stop)
        except OSError as exc:
            box["error"] = "{}: {}".format(type(exc).__name__, exc)
            stop.set()

    threads = [threading.Thread(target=target, args=(box, seed), daemon=True) for box, seed in zip(boxes, seeds)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    errors = [box["error"] for box in boxes if "error" in box]
    if errors:
        return [{"error": errors[0]}]
    return [box["out"] for box in boxes]


def _fork_worker(job: Dict[str, Any], direct: bool, seeds: List[int], t_start: float) -> Tuple[int, int]:
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: I/O, one JSON line to the pipe, _exit (no atexit, no parent's locks)
        code = 0
        try:
            os.close(read_end)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            # no cycles are made here; a collection would walk (and copy, page by page) the parent's objects
            gc.disable()
            try:
                out = _threads_here(job, direct, seeds, t_start, lambda: os.getppid() != parent)
            except OSError as exc:
                out = [{"error": "{}: {}".format(type(exc).__name__, exc)}]
            data = (json.dumps(out) + "\n").encode()
            view = memoryview(data)
            while view:
                view = view[os.write(write_end, view):]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def process_count(workers: int) -> int:
    """How many processes carry `workers` workers, each running its share as threads: a process per
    worker costs more CPU per I/O (each its own interpreter to keep in cache) than sharing a lock by
    threads does, and one process alone is bound by its lock: one per CPU (two at least)."""
    if WORKER_MODE == "processes":
        return workers
    return max(1, min(workers, PROCESSES_PER_CPU * max(os.cpu_count() or 1, 2)))


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _wait(ctx: Any, job: Dict[str, Any], t_start: float, done: Any) -> None:
    """Progress while the workers run; ctx.sleep raises Cancelled when the run stops."""
    total = float(job["warmup"]) + float(job["runtime"])
    while not done():
        now = time.perf_counter()
        left = t_start + total - now
        if ctx is not None:
            elapsed = max(now - t_start, 0.0)
            ctx.progress(job["name"], elapsed / total if total else 1.0, eta_s=max(left, 0.0))
            ctx.sleep(min(PROGRESS_EVERY, max(left, 0.02)))
        else:
            time.sleep(min(PROGRESS_EVERY, max(left, 0.02)))


def run_job(job: Dict[str, Any], ctx: Any = None, direct: Optional[bool] = None) -> Dict[str, Any]:
    """One job (see SPEC4 JobSpec) → JobResult. `direct` overrides job["direct"] (cached fallback)."""
    direct = bool(job["direct"] if direct is None else direct)
    workers = int(job["workers"])
    t_start = time.perf_counter() + START_DELAY
    wall_start = time.time() + START_DELAY   # the wall clock at t_start: where the rates begin
    base_seed = random.SystemRandom().randrange(1 << 30)
    if workers == 1 or WORKER_MODE == "threads":  # in-process threads; the main thread reports progress
        mode = "thread" if workers == 1 else "threads"
        outs = _run_threads(ctx, job, direct, base_seed, t_start)
    else:
        count = process_count(workers)
        mode = "processes" if count == workers else "threads in {} processes".format(count)
        children = []  # type: List[Tuple[int, int]]
        raws = []  # type: List[bytes]
        finished = False
        try:
            for i in range(count):
                children.append(_fork_worker(job, direct, [base_seed + w for w in range(i, workers, count)],
                                             t_start))
            _wait(ctx, job, t_start, lambda: all(_exited(pid) for pid, _ in children))
            finished = True
        finally:
            if not finished:  # cancelled or failed: stop the workers now
                for pid, _ in children:
                    _kill(pid)
            for pid, fd in children:  # every pipe closed and every child reaped, whatever happened
                raws.append(_read_all(fd))
                _reap(pid)
        outs = []
        for raw in raws:
            if not raw:
                raise OSError("a disk worker died without a result")
            for out in json.loads(raw.decode()):
                if "error" in out:
                    raise OSError(out["error"])
                outs.append(out)
    return _combine(job, outs, direct, describe(job, direct, mode), wall_start)


_EXITED = set()  # type: set


def _exited(pid: int) -> bool:
    if pid in _EXITED:
        return True
    try:
        got, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        got = pid
    if got == pid:
        _EXITED.add(pid)
        return True
    return False


def _reap(pid: int) -> None:
    if pid in _EXITED:
        _EXITED.discard(pid)
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _kill(pid: int) -> None:
    if pid not in _EXITED:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _combine(job: Dict[str, Any], outs: List[Dict[str, Any]], direct: bool, flags: str,
             wall_start: float = 0.0) -> Dict[str, Any]:
    hist = Histogram()
    ios = nbytes = 0
    first = min((o["first"] for o in outs if o["ios"]), default=0.0)
    last = max((o["last"] for o in outs if o["ios"]), default=0.0)
    for out in outs:
        hist.merge(Histogram.from_state(out["hist"]))
        ios += out["ios"]
        nbytes += out["bytes"]
    seconds = max(last - first, 1e-9) if ios else 0.0
    interval, slots = _intervals(job)
    counts = [sum(out.get("per_interval", [0] * slots)[i] for out in outs) for i in range(slots)] if ios else []
    t0 = wall_start + float(job["warmup"])
    return {
        "rates": {"iops": rates(counts, interval, t0), "mbps": rates(counts, interval, t0, int(job["bs"]) / 1e6)},
        "name": job["name"], "iops": ios / seconds if seconds else 0.0,
        "mbps": nbytes / seconds / 1e6 if seconds else 0.0, "ios": ios, "seconds": round(seconds, 6),
        "lat": hist.summary_ms(), "engine": ENGINE, "engine_version": version(), "flags": flags,
        "direct": direct, "sync": job.get("sync", "none"),
    }
