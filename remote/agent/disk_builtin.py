"""The built-in disk engine: stdlib only, what fio's psync engine does, for hosts without fio.

Each worker has its own descriptor and page-aligned buffer and times each I/O (disk_worker); one worker runs
in a thread of this process, more in forked processes, each running its share as threads (disk_spread).
Here: the job's description and the workers' figures combined into one result.
"""
import platform
import random
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - List in a type comment

from .common import rates
from .disk_latency import Histogram
from .disk_spread import WORKER_MODE, process_count, run_forked, run_threads
from .disk_worker import HAS_PV, intervals, open_flags

ENGINE = "builtin"
START_DELAY = 0.05       # seconds: all workers start on the same clock tick
__all__ = ["ENGINE", "describe", "open_flags", "process_count", "run_job", "version"]


def version() -> str:
    return "benchbay-builtin ({} {})".format(platform.python_implementation(), platform.python_version())


def describe(job: Dict[str, Any], direct: bool, mode: str) -> str:
    _, names = open_flags(job, direct)
    writing = job["rw"] in ("write", "randwrite")
    call = ("pwritev" if writing else "preadv") if HAS_PV else ("lseek+writev" if writing else "lseek+readv")
    if writing and job.get("sync") == "fdatasync":
        call += "+fdatasync"
    order = "random bs-aligned offsets" if job["rw"].startswith("rand") else "sequential"
    return "{}, {}, bs={}, {} {}, {}".format("|".join(names), call, job["bs"], job["workers"], mode, order)


def run_job(job: Dict[str, Any], ctx: Any = None, direct: Optional[bool] = None) -> Dict[str, Any]:
    """One job (see SPEC4 JobSpec) → JobResult. `direct` overrides job["direct"] (cached fallback)."""
    direct = bool(job["direct"] if direct is None else direct)
    workers = int(job["workers"])
    t_start = time.perf_counter() + START_DELAY
    wall_start = time.time() + START_DELAY   # the wall clock at t_start: where the rates begin
    base_seed = random.SystemRandom().randrange(1 << 30)
    if workers == 1 or WORKER_MODE == "threads":  # in-process threads; the main thread reports progress
        mode = "thread" if workers == 1 else "threads"
        outs = run_threads(ctx, job, direct, base_seed, t_start)
    else:
        count = process_count(workers)
        mode = "processes" if count == workers else "threads in {} processes".format(count)
        outs = run_forked(ctx, job, direct, base_seed, t_start, count)
    return _combine(job, outs, direct, describe(job, direct, mode), wall_start)


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
    interval, slots = intervals(job)
    counts = [sum(out.get("per_interval", [0] * slots)[i] for out in outs) for i in range(slots)] if ios else []
    t0 = wall_start + float(job["warmup"])
    return {
        "rates": {"iops": rates(counts, interval, t0), "mbps": rates(counts, interval, t0, int(job["bs"]) / 1e6)},
        "name": job["name"], "iops": ios / seconds if seconds else 0.0,
        "mbps": nbytes / seconds / 1e6 if seconds else 0.0, "ios": ios, "seconds": round(seconds, 6),
        "lat": hist.summary_ms(), "engine": ENGINE, "engine_version": version(), "flags": flags,
        "direct": direct, "sync": job.get("sync", "none"),
    }
