"""The "shared-storage" test: one client of many against one shared directory, in synchronized steps.

The workbench runs this test on N client hosts at once. Each client works in a directory of its own
inside the shared directory (made new, removed at the end), one file per thread, and runs the sweep's
steps (clients x threads) at instants it is given on its own clock: in a step with c clients, the
clients 0..c-1 work and the others wait. With wait_for_start the client first prepares its files,
says "shared_ready", and waits for the workbench's start signal: a file "go" in its run directory
holding {"start_at": instant on this host's clock}. Without it (a run on one host) it starts at once.

Results per step it worked in: <step>.ops and .mbps with their per-second rates (t0 = the step's
planned start on this host's clock), latency percentiles, and in the metadata the planned start and
when its first thread really began, on this host's clock: the workbench corrects them by the host's
clock offset and says how closely the clients started.
"""
import os
import re
import threading
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - List in a type comment

from . import client_sync, shared_io
from .common import emit_result, rates
from .disk_place import resolve

KIB, MIB = 1 << 10, 1 << 20
RW = ("write", "read")
NAME_CHARS = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
GO_FILE = client_sync.GO_FILE
TICK = 1.0                 # seconds: the rates' interval and the live ticks'
CALIBRATION_S = 0.5        # seconds the engine runs against /dev/null per thread count, to know its own ceiling
PARAMS = (
    {"name": "test_dir", "kind": "path", "default": ""},
    {"name": "rw", "kind": "choice", "default": "write", "choices": RW},
    {"name": "bs", "kind": "size", "default": 4 * KIB, "low": 1, "high": 16 * MIB, "unit": "B"},
    {"name": "file_size", "kind": "size", "default": MIB, "low": 1, "high": 1 << 40, "unit": "B"},
    {"name": "runtime", "kind": "int", "default": 10, "low": 2, "high": 3600, "unit": "s"},
    {"name": "gap", "kind": "float", "default": 2.0, "low": 0.5, "high": 600.0, "unit": "s"},
    {"name": "direct", "kind": "bool", "default": True},
    {"name": "sync", "kind": "bool", "default": True},
    {"name": "clients", "kind": "list", "default": [1], "low": 1, "high": 256},
    {"name": "threads", "kind": "list", "default": [1, 2, 4, 8, 16, 32], "low": 1, "high": 256},
    {"name": "client_index", "kind": "int", "default": 0, "low": 0, "high": 255},
    {"name": "client_name", "kind": "text", "default": "c1"},
    {"name": "group", "kind": "text", "default": "solo"},
    {"name": "wait_for_start", "kind": "bool", "default": False},
    {"name": "start_wait", "kind": "float", "default": 600.0, "low": 1.0, "high": 24 * 3600.0, "unit": "s"},
    {"name": "allow_system_dir", "kind": "bool", "default": False},
)
DEFAULTS = {p["name"]: p["default"] for p in PARAMS}
LIMITS = {p["name"]: (p["low"], p["high"]) for p in PARAMS if "low" in p}
UNITS = {"ops": "op/s", "mbps": "MB/s"}
LATENCIES = ("mean", "p50", "p95", "p99", "p99.9")
METRICS = (("{step}.ops", UNITS["ops"]), ("{step}.mbps", UNITS["mbps"]), ("{step}.lat_{latency}", "ms"))


def describe() -> Dict[str, Any]:
    return {"params": PARAMS, "presets": {}, "jobs": (), "metrics": METRICS}


def step_name(clients: int, threads: int) -> str:
    return "c{}t{}".format(clients, threads)


def steps(params: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The sweep in run order (clients outer, threads inner), each at its offset from the first start."""
    out = []
    every = params["runtime"] + params["gap"]
    for clients in params["clients"]:
        for threads in params["threads"]:
            out.append({"name": step_name(clients, threads), "clients": clients, "threads": threads,
                        "offset": len(out) * every, "active": params["client_index"] < clients})
    return out


def _fail(text: str) -> None:
    raise ValueError("shared-storage: " + text)


def _int_list(value: Any, name: str) -> List[int]:
    if isinstance(value, str):
        value = [v for v in value.strip("[]").split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not value:
        _fail("{} must be a non-empty list of numbers like 1,2,4, not {!r}".format(name, value))
    low, high = LIMITS[name]
    out = set()
    for item in value:
        try:
            number = int(str(item).strip())
        except ValueError:
            _fail("{} must be whole numbers, not {!r}".format(name, item))
        if not low <= number <= high:
            _fail("{} must each be {}-{}, not {}".format(name, low, high, number))
        out.add(number)
    return sorted(out)


def _number(value: Any, name: str, kind: type) -> Any:
    if isinstance(value, bool):
        _fail("{} must be a number, not {!r}".format(name, value))
    try:
        number = kind(float(value)) if kind is int else kind(value)
    except (TypeError, ValueError):
        _fail("{} must be a number, not {!r}".format(name, value))
    low, high = LIMITS[name]
    if not low <= number <= high:
        _fail("{} must be {:g}-{:g}, not {:g}".format(name, low, high, number))
    return number


def _size(value: Any, name: str) -> int:
    if isinstance(value, bool):
        _fail("{} must be a size, not {!r}".format(name, value))
    if isinstance(value, (int, float)):
        number = int(value)
    else:
        text = str(value).strip().lower().replace("ib", "").replace("b", "")
        scale = {"k": KIB, "m": MIB, "g": 1 << 30}.get(text[-1:], 1)
        try:
            number = int(float(text[:-1] if scale > 1 else text) * scale)
        except ValueError:
            _fail("{} must be a size like 1, 4k or 1M, not {!r}".format(name, value))
    low, high = LIMITS[name]
    if not low <= number <= high:
        _fail("{} must be {}-{} bytes, not {}".format(name, low, high, number))
    return number


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    _fail("{} must be true or false, not {!r}".format(name, value))
    return False


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        _fail("unknown parameter(s) {}".format(", ".join(unknown)))
    merged = dict(DEFAULTS)
    merged.update(params)
    out = {}  # type: Dict[str, Any]
    test_dir = str(merged["test_dir"] or "")   # "" = the run directory: one host, nothing shared
    if test_dir and not os.path.isabs(test_dir):
        _fail("test_dir must be an absolute path, not {!r}".format(test_dir))
    out["test_dir"] = test_dir
    if merged["rw"] not in RW:
        _fail("rw must be write or read, not {!r}".format(merged["rw"]))
    out["rw"] = merged["rw"]
    out["bs"] = _size(merged["bs"], "bs")
    out["file_size"] = _size(merged["file_size"], "file_size")
    if out["file_size"] < out["bs"]:
        _fail("file_size ({}) must be at least bs ({})".format(out["file_size"], out["bs"]))
    out["runtime"] = _number(merged["runtime"], "runtime", int)
    for name in ("gap", "start_wait"):
        out[name] = _number(merged[name], name, float)
    out["client_index"] = _number(merged["client_index"], "client_index", int)
    for name in ("direct", "sync", "wait_for_start", "allow_system_dir"):
        out[name] = _bool(merged[name], name)
    out["clients"] = _int_list(merged["clients"], "clients")
    out["threads"] = _int_list(merged["threads"], "threads")
    for name in ("client_name", "group"):
        text = str(merged[name])
        if not NAME_CHARS.match(text):
            _fail("{} must be 1-64 letters, digits, '_', '.' or '-', not {!r}".format(name, text))
        out[name] = text
    return out


def expected_seconds(params: Dict[str, Any]) -> float:
    wait = params["start_wait"] if params["wait_for_start"] else 0.0
    count = len(params["clients"]) * len(params["threads"])
    return wait + count * (params["runtime"] + params["gap"]) + 30.0   # + preparing the files


def _free_bytes(directory: str) -> int:
    stat = os.statvfs(directory)
    return stat.f_bavail * stat.f_frsize


def _place(ctx: Any, params: Dict[str, Any]) -> Dict[str, Any]:
    """The client's own directory in the shared one, made new; its path, the file system and threads."""
    if not params["test_dir"]:
        params = dict(params, test_dir=ctx.run_dir)
        ctx.warning("no test_dir: the run directory is used, which no other client shares; name the shared "
                    "directory (test_dir=/mnt/shared) to measure shared storage")
    try:
        test_dir, fstype, problem = resolve(params["test_dir"], params["allow_system_dir"])
    except ValueError as exc:
        raise ValueError(str(exc).replace("disk:", "shared-storage:", 1)) from None
    if not os.path.isdir(test_dir):
        raise ValueError("shared-storage: test_dir {} is not a directory on this host: mount the shared storage "
                         "there first".format(params["test_dir"]))
    if problem:
        ctx.warning("test_dir {} is {}: used because allow_system_dir=true".format(test_dir, problem))
    threads = max(params["threads"])
    need = threads * params["file_size"]
    free = _free_bytes(test_dir)
    if free < need + need // 10:
        raise ValueError("shared-storage: {} has {} MiB free, the test needs {} MiB ({} files of {} bytes) and "
                         "10 % to spare: free some space or lower file_size or threads".format(
                             test_dir, free >> 20, (need + need // 10 + MIB - 1) >> 20, threads,
                             params["file_size"]))
    mine = os.path.join(test_dir, "benchbay-shared-{}-{}".format(params["group"], params["client_name"]))
    try:
        os.mkdir(mine, 0o700)   # fails when it exists: never another client's (or run's) directory
    except FileExistsError:
        raise ValueError("shared-storage: {} already exists: another client or run uses this name; it is left "
                         "alone, give each client host its own name".format(mine)) from None
    ctx.add_cleanup_path(mine)
    ctx.emit("test_file", path=mine, test_dir=test_dir, requested=params["test_dir"], fstype=fstype or "unknown")
    return {"dir": mine, "test_dir": test_dir, "fstype": fstype or "unknown", "threads": threads}


def _choose_direct(ctx: Any, params: Dict[str, Any], place: Dict[str, Any], first_file: str) -> Dict[str, Any]:
    """O_DIRECT when asked and the file system takes it at this request size; else a stored note."""
    if not params["direct"]:
        return {"direct": False, "direct_note": "O_DIRECT off (direct=false): the page cache may answer"}
    writing = params["rw"] == "write"
    why = shared_io.direct_refused(first_file, params["bs"], writing, params["sync"])
    if why is None:
        return {"direct": True, "direct_note": ""}
    note = ("O_DIRECT refused by {} in {} ({}): requests go through this client's page cache{}".format(
        place["fstype"], place["test_dir"], why,
        ", O_SYNC still makes each write reach the server" if writing and params["sync"] else
        "; reads may be answered from it and read high"))
    ctx.warning(note)
    return {"direct": False, "direct_note": note}


def _wait_for_go(ctx: Any, params: Dict[str, Any], place: Dict[str, Any]) -> float:
    """The first step's start on this host's clock: now + a moment, or what the workbench sends."""
    if not params["wait_for_start"]:
        return time.time() + 1.0
    return client_sync.wait_for_go(ctx, params["start_wait"], "", client=params["client_name"], dir=place["dir"])


def run(ctx: Any, params: Dict[str, Any]) -> None:
    place = _place(ctx, params)
    todo = steps(params)
    files = [os.path.join(place["dir"], "t{:03d}.dat".format(i)) for i in range(place["threads"])]
    calibration = CALIBRATION_S * len({s["threads"] for s in todo if s["active"]})
    ctx.emit("plan", phases=[{"phase": "prepare", "label": "Preparing the client's files",
                              "seconds": 2.0 + calibration, "timed": False}]
             + [{"phase": s["name"], "label": _label(s), "seconds": params["runtime"] + params["gap"],
                 "timed": True} for s in todo])
    with ctx.phase("prepare", "Preparing the client's files"):
        for path in files:
            shared_io.prepare_file(path, params["file_size"])
            ctx.check()
        direct = _choose_direct(ctx, params, place, files[0])
        ceilings = _engine_ceilings(ctx, params, sorted({s["threads"] for s in todo if s["active"]}))
    start_at = _wait_for_go(ctx, params, place)
    writing = params["rw"] == "write"
    common = {"test_dir": place["test_dir"], "fstype": place["fstype"], "client": params["client_name"],
              "client_index": params["client_index"], "group": params["group"], "rw": params["rw"],
              "bs": params["bs"], "file_size": params["file_size"], "runtime": params["runtime"],
              "sync": params["sync"] and writing, "engine": "builtin",
              "flags": shared_io.flag_names(writing, direct["direct"], params["sync"])}
    common.update(direct)
    for step in todo:
        with ctx.phase(step["name"], _label(step)):
            planned = start_at + step["offset"]
            if not step["active"]:
                _idle_until(ctx, planned + params["runtime"], step["name"])
                continue
            outcome = _run_step(ctx, params, step, files[:step["threads"]], planned, direct["direct"])
        _report(ctx, step, outcome, dict(common, step=step["name"], clients=step["clients"],
                                         threads=step["threads"], engine_ceiling=ceilings.get(step["threads"])),
                params)


def _engine_ceiling(params: Dict[str, Any], threads: int) -> Optional[float]:
    """op/s this engine reaches on this host with `threads` threads when no storage is involved (requests to
    /dev/null, or from /dev/zero): the client's own ceiling. A step near it measured the client, not the storage."""
    writing = params["rw"] == "write"
    stop = threading.Event()
    start = time.perf_counter() + 0.01
    workers = [shared_io.StepWorker("/dev/null" if writing else "/dev/zero", params["bs"], params["bs"], writing,
                                    False, False, start, CALIBRATION_S, stop) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if any(worker.error is not None for worker in workers):
        return None
    return round(sum(sum(worker.per_second) for worker in workers) / CALIBRATION_S, 1)


def _engine_ceilings(ctx: Any, params: Dict[str, Any], thread_counts: List[int]) -> Dict[int, Optional[float]]:
    ceilings = {}  # type: Dict[int, Optional[float]]
    for threads in thread_counts:
        ctx.check()
        ceilings[threads] = _engine_ceiling(params, threads)
    return ceilings


def _label(step: Dict[str, Any]) -> str:
    return "{} client{} x {} thread{}".format(step["clients"], "" if step["clients"] == 1 else "s",
                                              step["threads"], "" if step["threads"] == 1 else "s")


def _idle_until(ctx: Any, until: float, name: str) -> None:
    while True:
        left = until - time.time()
        if left <= 0:
            return
        ctx.progress(name, 0.0, eta_s=left, message="not in this step")
        ctx.sleep(min(TICK, left))


def _run_step(ctx: Any, params: Dict[str, Any], step: Dict[str, Any], files: List[str], planned: float,
              direct: bool) -> Dict[str, Any]:
    """Threads from the planned instant (this host's clock) for runtime seconds; a tick event per second."""
    stop = threading.Event()
    start_perf = time.perf_counter() + (planned - time.time())
    workers = [shared_io.StepWorker(path, params["bs"], params["file_size"], params["rw"] == "write", direct,
                                    params["sync"], start_perf, params["runtime"], stop) for path in files]
    for worker in workers:
        worker.start()
    cpu_before, host_before = os.times(), client_sync.host_cpu()
    try:
        for second in range(params["runtime"]):
            # a second is complete once it is over: the threads count into the next one by then
            until = start_perf + second + 1 + 0.02
            while True:
                left = until - time.perf_counter()
                if left <= 0:
                    break
                ctx.sleep(min(left, 0.25))
            ops = shared_io.sum_seconds(workers, second)
            ctx.emit("shared_tick", step=step["name"], second=second, t=planned + second + 1, ops=ops,
                     bytes=ops * params["bs"])
            ctx.progress(step["name"], (second + 1.0) / params["runtime"], eta_s=params["runtime"] - second - 1.0)
    finally:
        if ctx.stopping:
            stop.set()
        for worker in workers:
            worker.join()
    cpu_after, host_after = os.times(), client_sync.host_cpu()
    for worker in workers:
        if worker.error is not None:
            raise worker.error
    began = [w.first_issue for w in workers if w.first_issue is not None]
    wall = planned - start_perf    # perf_counter -> this host's wall clock
    out = shared_io.merged(workers)
    out["began_first"] = round(min(began) + wall, 6) if began else None
    out["began_last"] = round(max(began) + wall, 6) if began else None
    out["planned"] = round(planned, 6)
    # this client's CPU during the step, in cores: Python code runs one thread at a time, so user time near one
    # core means the engine, not the storage, set the pace (the system time of the requests runs in parallel)
    out["cpu_user"] = round((cpu_after[0] - cpu_before[0]) / params["runtime"], 3)
    out["cpu_system"] = round((cpu_after[1] - cpu_before[1]) / params["runtime"], 3)
    # and the whole host's (the kernel's writeback threads too): busy share of all its CPUs, None without /proc
    if host_before is not None and host_after is not None and host_after[1] > host_before[1]:
        out["host_cpu_busy"] = round((host_after[0] - host_before[0]) / (host_after[1] - host_before[1]), 3)
    return out


def _report(ctx: Any, step: Dict[str, Any], outcome: Dict[str, Any], meta: Dict[str, Any],
            params: Dict[str, Any]) -> None:
    per_second = outcome["per_second"]
    seconds = float(len(per_second)) or 1.0
    ops = sum(per_second)
    meta.update(planned=outcome["planned"], began_first=outcome["began_first"], began_last=outcome["began_last"],
                ios=ops, seconds=seconds, cpu_user=outcome.get("cpu_user"), cpu_system=outcome.get("cpu_system"),
                cpus=os.cpu_count() or 1, host_cpu_busy=outcome.get("host_cpu_busy"))
    name = step["name"]
    emit_result(ctx, "shared-storage", name + ".ops", round(ops / seconds, 3), UNITS["ops"], meta,
                rates(per_second, TICK, outcome["planned"]))
    emit_result(ctx, "shared-storage", name + ".mbps", round(ops * params["bs"] / seconds / 1e6, 6),
                UNITS["mbps"], meta, rates(per_second, TICK, outcome["planned"], params["bs"] / 1e6))
    latency = outcome["hist"].summary_ms()
    for key in LATENCIES:
        ctx.result("shared-storage", "{}.lat_{}".format(name, key), latency[key], "ms", meta)
