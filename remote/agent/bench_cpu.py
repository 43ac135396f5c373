"""The "cpu" test: fixed work in C-implemented code paths, with one worker and with every core.

One work unit ("op") = zlib compress (level 6) of a deterministic 1 MiB text-like buffer, decompress
it again, and SHA-256 over 64 MiB (the buffer 64 times). The score is ops per second: for "single"
one worker process, for "multi" one process per core (fork, so nothing is re-imported), summed.
The work is done by zlib and OpenSSL (or hashlib's own SHA-256), so their versions are recorded:
two hosts with different versions do not run exactly the same code. Each score comes with its
per-interval rates (ops of every worker in each interval; an op that spans two intervals counts partly
in each), from which the workbench knows how steady it was.
"""
import contextlib
import hashlib
import multiprocessing
import os
import platform
import queue
import signal
import time
import zlib
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from .common import emit_result, interval_count, rate_interval, rates, spread_spans

BUFFER_BYTES = 1 << 20
SHA_ROUNDS = 64                 # SHA-256 over 64 x 1 MiB per op
ZLIB_LEVEL = 6
PRESETS = {"quick": {"seconds": 5.0}, "full": {"seconds": 20.0}}   # seconds per phase
MAX_SECONDS = 3600.0
MAX_WORKERS = 1024
START_DELAY = 0.2               # seconds for the workers to be forked before the clock starts
PROGRESS_EVERY = 0.5            # seconds
POLL = 0.1                      # seconds between looks at the workers and at stop requests
DEATH_GRACE = 1.0               # seconds to wait for a stop request when a worker was killed
STRAGGLER_GRACE = 30.0          # seconds past the phase end a worker may take to report
KERNELS = ("zlib_compress", "zlib_decompress", "sha256")
# the parameters validate() takes: name, kind, default (None: the preset's or the host's), limits, unit
PARAMS = (
    {"name": "preset", "kind": "choice", "default": "quick", "choices": ("quick", "full")},
    {"name": "seconds", "kind": "float", "default": None, "low": 0.0, "high": MAX_SECONDS, "unit": "s"},
    {"name": "workers", "kind": "int", "default": None, "low": 1, "high": MAX_WORKERS},
)
KNOWN = tuple(param["name"] for param in PARAMS)
# what run() reports: metric name (with {phase}, {kernel} filled in) and unit
METRICS = (("single", "ops/s"), ("multi", "ops/s"), ("scaling", "x"), ("{phase}.{kernel}", "MB/s"))


def describe() -> Dict[str, Any]:
    """The parameters, presets and metrics, as data: the workbench builds its test catalogue from it."""
    return {"params": PARAMS, "presets": PRESETS, "jobs": (), "metrics": METRICS}


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(params) - set(KNOWN))
    if unknown:
        raise ValueError("cpu: unknown parameter(s) {} (known: {})".format(", ".join(unknown), ", ".join(KNOWN)))
    preset = params.get("preset", "quick")
    if preset not in PRESETS:
        raise ValueError("cpu: preset must be one of {}, not {!r}".format(", ".join(sorted(PRESETS)), preset))
    seconds = params.get("seconds")
    if seconds is None:
        seconds = PRESETS[preset]["seconds"]
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= MAX_SECONDS:
        raise ValueError("cpu: seconds must be a number of seconds per phase, 0-{:g}, not {!r}".format(
            MAX_SECONDS, seconds))
    workers = params.get("workers")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or not 1 <= workers <= MAX_WORKERS):
        raise ValueError("cpu: workers must be a whole number 1-{}, not {!r}".format(MAX_WORKERS, workers))
    return {"preset": preset, "seconds": float(seconds), "workers": workers}


def expected_seconds(params: Dict[str, Any]) -> float:
    # two phases, each may overrun by one op; plus the buffer and the forks
    return 2 * (params["seconds"] + 2.0) + 3.0


def make_buffer(size: int = BUFFER_BYTES) -> bytes:
    """Text-like bytes that compress about as well as logs do; the same on every host and Python.

    Built from SHA-256 in counter mode (not `random`, whose algorithms may change between versions).
    """
    words = []
    for i in range(256):
        digest = hashlib.sha256("benchbay-word-{}".format(i).encode()).digest()
        length = 1 + digest[0] % 9
        words.append(bytes(97 + b % 26 for b in digest[1:1 + length]))
    words[0], words[1] = b"\n", b"0x1f"   # some line structure and digits
    out = []  # type: List[bytes]
    total, counter = 0, 0
    while total < size:
        for b in hashlib.sha256("benchbay-text-{}".format(counter).encode()).digest():
            out.append(words[b])
            total += len(words[b]) + 1
        counter += 1
    return b" ".join(out)[:size]


def _versions() -> Dict[str, str]:
    try:
        import ssl
        openssl = ssl.OPENSSL_VERSION
    except ImportError:   # a Python built without ssl: hashlib then uses its own SHA-256
        openssl = "none"
    return {
        "python": "{} {}".format(platform.python_implementation(), platform.python_version()),
        "zlib": getattr(zlib, "ZLIB_RUNTIME_VERSION", zlib.ZLIB_VERSION),
        "openssl": openssl,
    }


def _worker(buf: bytes, start_at: float, end_at: float, stop: Any, results: Any, index: int) -> None:
    """One process: ops from start_at until end_at (at least one), then its counts on `results`."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)   # forked from the agent, whose handlers only set a flag
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    ops, spent, compressed = 0, [0.0, 0.0, 0.0], 0
    spans = []  # type: List[Tuple[float, float]]
    last = time.monotonic()
    while (ops == 0 or last < end_at) and not stop.is_set():
        t0 = time.monotonic()
        packed = zlib.compress(buf, ZLIB_LEVEL)
        t1 = time.monotonic()
        if zlib.decompress(packed) != buf:
            raise RuntimeError("zlib round trip changed the data")
        t2 = time.monotonic()
        digest = hashlib.sha256()
        for _ in range(SHA_ROUNDS):
            digest.update(buf)
        digest.digest()
        last = time.monotonic()
        spent[0] += t1 - t0
        spent[1] += t2 - t1
        spent[2] += last - t2
        compressed = len(packed)
        ops += 1
        spans.append((t0, last))
    interval = rate_interval(end_at - start_at)
    slots = interval_count(end_at - start_at, interval)
    results.put((index, ops, last - start_at, spent, compressed, spread_spans(spans, start_at, slots, interval)))


def _phase_figures(reports: List[Tuple[int, int, float, List[float], int, List[float]]]) -> Dict[str, float]:
    """Per-worker rates summed: each worker's ops over its own measured window."""
    figures = {"score": 0.0}  # type: Dict[str, float]
    per_op = (BUFFER_BYTES, BUFFER_BYTES, BUFFER_BYTES * SHA_ROUNDS)   # bytes each kernel handles per op
    for kernel in KERNELS:
        figures[kernel] = 0.0
    for _, ops, window, spent, _, _ in reports:
        figures["score"] += ops / window if window > 0 else 0.0
        for kernel, seconds, size in zip(KERNELS, spent, per_op):
            figures[kernel] += ops * size / seconds / 1e6 if seconds > 0 else 0.0
    return figures


def _kill(processes: List[Any]) -> None:
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + 2.0
    for proc in processes:
        proc.join(max(deadline - time.monotonic(), 0.0))
        if proc.is_alive():
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGKILL)
            proc.join(1.0)


def run_phase(ctx: Any, phase_id: str, buf: bytes, workers: int, seconds: float) -> Dict[str, Any]:
    """Runs `workers` processes for `seconds`; terminates them at once when the run must stop."""
    mp = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() \
        else multiprocessing.get_context()
    stop = mp.Event()
    results = mp.Queue()
    start_at = time.monotonic() + START_DELAY
    end_at = start_at + seconds
    wall_start = time.time() + START_DELAY
    processes = [mp.Process(target=_worker, args=(buf, start_at, end_at, stop, results, i), daemon=True)
                 for i in range(workers)]
    reports = []  # type: List[Tuple[int, int, float, List[float], int, List[float]]]
    try:
        for proc in processes:
            proc.start()
        next_progress = 0.0
        while len(reports) < workers:
            ctx.check()   # Cancelled: the finally below stops the workers
            now = time.monotonic()
            if now >= next_progress:
                next_progress = now + PROGRESS_EVERY
                ctx.progress(phase_id, (now - start_at) / seconds, eta_s=end_at - now)
            try:
                reports.append(results.get(timeout=POLL))
                continue
            except queue.Empty:
                pass
            dead = [p for p in processes if not p.is_alive() and p.exitcode != 0]
            if dead:
                # a cancel signals the whole process group: the workers die before our watchdog has
                # turned the signal into a stop request, so give it time to say so
                ctx.sleep(DEATH_GRACE)
                code = dead[0].exitcode
                raise RuntimeError("cpu: a worker process died ({})".format(
                    "signal {}".format(-code) if code < 0 else "exit code {}".format(code)))
            if time.monotonic() > end_at + STRAGGLER_GRACE:
                raise RuntimeError("cpu: workers did not report {:g} s after the phase".format(STRAGGLER_GRACE))
        for proc in processes:
            proc.join(5.0)
    finally:
        stop.set()
        _kill(processes)
        results.close()
    ctx.progress(phase_id, 1.0, eta_s=0.0)
    figures = _phase_figures(reports)
    figures["ops"] = sum(r[1] for r in reports)
    figures["compressed_bytes"] = reports[0][4] if reports else 0
    # ops of every worker in each interval of the phase: how steady the score was
    interval = rate_interval(seconds)
    slots = interval_count(seconds, interval)
    figures["rates"] = rates([sum(r[5][i] for r in reports) for i in range(slots)], interval, wall_start)
    return figures


def run(ctx: Any, params: Dict[str, Any]) -> None:
    cores = os.cpu_count() or 1
    workers = params["workers"] or cores
    seconds = params["seconds"]
    meta = _versions()
    meta.update({"cores": cores, "seconds": seconds, "preset": params["preset"],
                 "op": "zlib level {} compress+decompress of 1 MiB, SHA-256 of {} MiB".format(ZLIB_LEVEL, SHA_ROUNDS)})
    if hasattr(os, "sched_getaffinity"):
        allowed = len(os.sched_getaffinity(0))
        meta["cpus_allowed"] = allowed
        if allowed < workers and params["workers"] is None:
            ctx.warning("cpu: this process may use only {} of {} cores: the multi-core score is limited "
                        "by that".format(allowed, cores))
    buf = make_buffer()
    figures = {}  # type: Dict[str, Dict[str, Any]]
    phases = (("single", "Single core", 1), ("multi", "All cores ({})".format(workers), workers))
    # each phase lasts `seconds`: the workbench's progress and time left come from this plan
    ctx.emit("plan", phases=[{"phase": phase_id, "label": label, "seconds": seconds, "timed": True}
                             for phase_id, label, _ in phases])
    for phase_id, label, count in phases:
        with ctx.phase(phase_id, label):
            figures[phase_id] = run_phase(ctx, phase_id, buf, count, seconds)
        phase_meta = dict(meta, workers=count, ops=figures[phase_id]["ops"],
                          compressed_bytes=figures[phase_id]["compressed_bytes"])
        emit_result(ctx, "cpu", phase_id, round(figures[phase_id]["score"], 4), "ops/s", phase_meta,
                    figures[phase_id]["rates"])
        for kernel in KERNELS:
            ctx.result("cpu", "{}.{}".format(phase_id, kernel), round(figures[phase_id][kernel], 2), "MB/s",
                       phase_meta)
    single = figures["single"]["score"]
    scaling = figures["multi"]["score"] / single if single > 0 else 0.0
    ctx.result("cpu", "scaling", round(scaling, 3), "x", dict(meta, workers=workers))
