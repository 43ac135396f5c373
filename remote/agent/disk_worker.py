"""The built-in disk engine's worker: one descriptor, one buffer, I/Os in a loop until the job's end.

Each worker has its own descriptor and a page-aligned mmap buffer (O_DIRECT needs aligned memory,
which bytes objects are not): preadv/pwritev into it on 3.7+, lseek + readv/writev on 3.6 (the
descriptor is the worker's own, so the seek is safe). Latency: perf_counter around each I/O (write +
fdatasync counts as one I/O) into a Histogram; I/Os started in the warm-up are not counted.
"""
import bisect
import math
import mmap
import os
import random
import time
from typing import Any, Dict, List, Tuple  # noqa: F401 - List in a type comment

from .common import interval_count, rate_interval
from .disk_latency import CELLS_PER_S, Histogram, cell_buckets
from .disk_latency import UPPER as HIST_UPPER

STOP_CHECK_SECONDS = 0.05   # between looks at the stop flag / the parent
HAS_PV = hasattr(os, "preadv") and hasattr(os, "pwritev")


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



def io_call(writing: bool, fdatasync: bool) -> Any:
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


def run_worker(job: Dict[str, Any], direct: bool, seed: int, t_start: float,
            should_stop: Any) -> Dict[str, Any]:
    """Runs I/Os until the job's end; returns {"hist", "ios", "bytes", "first", "last", "per_interval"}.

    Every Python operation in the measured loop costs CPU that fio does not spend, so the loop holds only
    what each I/O needs: its offset, two clock reads, its histogram bucket (a lookup by ~30 ns cell; bisect only
    above 1 ms or near a bucket's edge: see disk_latency) and total/min/max. The
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
    io = io_call(writing, writing and job.get("sync") == "fdatasync")
    blocks = max(1, int(job["size"]) // bs)
    # random() is one C call; randrange() is several Python ones, per I/O (blocks < 2**53: uniform enough);
    # floor() returns an int without int()'s argument tuple
    rnd, floor = random.Random(seed).random, math.floor
    hist = Histogram()
    counts, upper, bucket = hist.counts, HIST_UPPER, bisect.bisect_right
    cells, per_s = cell_buckets(), CELLS_PER_S
    ncells = len(cells)
    total, low, high = 0.0, math.inf, 0.0
    perf = time.perf_counter
    warm_end = t_start + float(job["warmup"])
    end = warm_end + float(job["runtime"])
    first = last = 0.0
    interval, slots = intervals(job)
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
        # the next offset is written out in both loops, not a function: a call per I/O is what these loops avoid
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
                cell = floor(took * per_s)
                index = cells[cell] if cell < ncells else -1
                if index < 0:
                    index = bucket(upper, took)
                counts[index] += 1
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


def intervals(job: Dict[str, Any]) -> Tuple[float, int]:
    """(interval length, how many) of the measured window's per-interval rates."""
    interval = rate_interval(float(job["runtime"]))
    return interval, interval_count(float(job["runtime"]), interval)

