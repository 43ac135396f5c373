"""Where the built-in disk engine's workers run: one in a thread of this process; more in forked processes
(one per CPU, each running its share of the workers as threads) sending their figures back over a pipe.

The threads of one process alone contend for its GIL after every syscall and fall behind fio at 16 workers,
while every further process costs CPU per I/O (its own interpreter's memory to bring back into the caches
and TLB at each switch to it): 2 or 4 processes per CPU, or one per worker, spent more than one per CPU
(see the report in benchmarks/). A cancel kills and reaps them all.
"""
import contextlib
import gc
import json
import os
import signal
import threading
import time
from typing import Any, Dict, List, Tuple  # noqa: F401 - List in a type comment

from .disk_worker import run_worker

PROGRESS_EVERY = 0.5     # seconds
# "mixed": workers spread as threads over a few forked processes (see process_count); "processes": one
# forked process per worker; "threads": all in this process (for comparison)
WORKER_MODE = "mixed"
PROCESSES_PER_CPU = 1    # "mixed": processes per CPU, the workers spread over them as threads


def run_threads(ctx: Any, job: Dict[str, Any], direct: bool, base_seed: int,
                t_start: float) -> List[Dict[str, Any]]:
    stop = threading.Event()
    boxes = [{} for _ in range(int(job["workers"]))]  # type: List[Dict[str, Any]]

    def target(box: Dict[str, Any], seed: int) -> None:
        try:
            box["out"] = run_worker(job, direct, seed, t_start, stop.is_set)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    threads = [threading.Thread(target=target, args=(box, base_seed + i), name="benchbay-disk-worker", daemon=True)
               for i, box in enumerate(boxes)]
    for thread in threads:
        thread.start()
    try:
        wait(ctx, job, t_start, lambda: not any(t.is_alive() for t in threads))
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
            box["out"] = run_worker(job, direct, seed, t_start, should_stop)
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


def run_forked(ctx: Any, job: Dict[str, Any], direct: bool, base_seed: int, t_start: float,
               count: int) -> List[Dict[str, Any]]:
    """The job's workers spread over `count` forked processes; their results, or OSError."""
    workers = int(job["workers"])
    children = []  # type: List[Tuple[int, int]]
    raws = []  # type: List[bytes]
    finished = False
    try:
        for i in range(count):
            children.append(_fork_worker(job, direct, [base_seed + w for w in range(i, workers, count)],
                                         t_start))
        wait(ctx, job, t_start, lambda: all(_exited(pid) for pid, _ in children))
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
    return outs


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def wait(ctx: Any, job: Dict[str, Any], t_start: float, done: Any) -> None:
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


