"""The built-in disk engine: stdlib only, what fio's psync engine does, for hosts without fio.

Each worker has its own descriptor and a page-aligned mmap buffer (O_DIRECT needs aligned memory,
which bytes objects are not): preadv/pwritev into it on 3.7+, lseek + readv/writev on 3.6 (the
descriptor is the worker's own, so the seek is safe). One worker runs in this thread; more run in
forked processes (two per CPU, each running its share of the workers as threads) sending their figures
back over a pipe: the threads of one process contend for the GIL after every syscall and fall behind fio
at 16 workers, and a process per worker spends more CPU per I/O than a few threads sharing a lock (see
the report in benchmarks/). Latency: perf_counter
around each I/O (write + fdatasync counts as one I/O) into a Histogram; I/Os started in the warm-up
are not counted.
"""
import contextlib
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
from .disk_latency import MIN_S as HIST_MIN_S
from .disk_latency import Histogram
from .disk_latency import K as HIST_K

ENGINE = "builtin"
START_DELAY = 0.05       # seconds: all workers start on the same clock tick
PROGRESS_EVERY = 0.5     # seconds
STOP_CHECK_EVERY = 64    # I/Os between looks at the stop flag / the parent
# "mixed": workers spread as threads over a few forked processes (see process_count); "processes": one
# forked process per worker; "threads": all in this process (for comparison)
WORKER_MODE = "mixed"
PROCESSES_PER_CPU = 2    # "mixed": processes per CPU, the workers spread over them as threads
HAS_PV = hasattr(os, "preadv") and hasattr(os, "pwritev")
HIST_INV_MIN = 1.0 / HIST_MIN_S


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


def _worker(job: Dict[str, Any], direct: bool, seed: int, t_start: float,
            should_stop: Any) -> Dict[str, Any]:
    """Runs I/Os until the job's end; returns {"hist", "ios", "bytes", "first", "last", "per_interval"}."""
    flags, _ = open_flags(job, direct)
    fd = os.open(job["file"], flags)
    bs = int(job["bs"])
    buf = mmap.mmap(-1, bs)  # anonymous mmap: page-aligned, as O_DIRECT wants
    buf.write(os.urandom(bs))
    bufs = [buf]
    writing = job["rw"] in ("write", "randwrite")
    rand = job["rw"].startswith("rand")
    fdatasync = writing and job.get("sync") == "fdatasync"
    blocks = max(1, int(job["size"]) // bs)
    # random() is one C call; randrange() is several Python ones, per I/O (blocks < 2**53: uniform enough)
    rnd = random.Random(seed).random
    hist = Histogram()
    # the histogram's record() inlined: a method call per I/O costs what fio spends on the whole I/O
    counts, log, k, last_bucket = hist.counts, math.log, HIST_K, len(hist.counts) - 1
    total, low, high = 0.0, math.inf, 0.0
    perf = time.perf_counter
    warm_end = t_start + float(job["warmup"])
    end = warm_end + float(job["runtime"])
    ios = 0
    first = last = 0.0
    interval, slots = _intervals(job)
    per_interval = [0] * slots   # I/Os completed in each interval of the measured window
    slot, slot_end = 0, warm_end + interval
    position = (seed % blocks) if not rand else 0
    if not rand and job["workers"] > 1:
        position = (blocks // job["workers"]) * (seed % job["workers"])
    read = os.preadv if HAS_PV and not writing else None  # novermin - only where HAS_PV
    write = os.pwritev if HAS_PV and writing else None  # novermin - only where HAS_PV
    try:
        delay = t_start - perf()
        if delay > 0:
            time.sleep(delay)
        n = 0
        while True:
            if rand:
                offset = int(rnd() * blocks) * bs
            else:
                offset = position * bs
                position = position + 1 if position + 1 < blocks else 0
            t0 = perf()
            if read is not None:
                read(fd, bufs, offset)
            elif write is not None:
                write(fd, bufs, offset)
            else:
                os.lseek(fd, offset, os.SEEK_SET)
                if writing:
                    os.writev(fd, bufs)
                else:
                    os.readv(fd, bufs)
            if fdatasync:
                os.fdatasync(fd)
            t1 = perf()
            if t0 >= warm_end:
                took = t1 - t0
                if took > HIST_MIN_S:
                    index = int(log(took * HIST_INV_MIN) * k)
                    counts[index if index < last_bucket else last_bucket] += 1
                else:
                    counts[0] += 1
                total += took
                if took < low:
                    low = took
                if took > high:
                    high = took
                if not ios:
                    first = t0
                ios += 1
                last = t1
                while t1 >= slot_end and slot < slots:
                    slot += 1
                    slot_end += interval
                if slot < slots:
                    per_interval[slot] += 1
            if t1 >= end:
                break
            n += 1
            if n >= STOP_CHECK_EVERY:
                n = 0
                if should_stop():
                    break
    finally:
        os.close(fd)
        buf.close()
    hist.count, hist.total, hist.min, hist.max = ios, total, low, high
    return {"hist": hist.to_state(), "ios": ios, "bytes": ios * bs, "first": first, "last": last,
            "per_interval": per_interval}


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
    worker costs more CPU per I/O (each its own interpreter to keep in cache) than sharing a lock by a
    few threads does, and one process alone is bound by its lock."""
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
