"""The "disk" test: random/sync/sequential I/O, a concurrency sweep and a read-ahead sweep, via fio or built-in.

One test file in the test directory (default: the run directory), written with real data once and used
by every job, removed afterwards whatever happens (registered with ctx before it exists + removed in
finally). Each job is one phase; results are disk/<job>.<quantity>. IOPS and MB/s come with their
per-interval rates over the measured window (fio's own interval logs, or the built-in engine's counts),
from which the workbench knows how much they varied.
"""
import os
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - List in a type comment

from . import disk_builtin, disk_fio
from .common import emit_result
from .disk_file import check_path, o_direct_supported, prepare_file, remove_file, unique_file_name
from .disk_place import MEMORY_FS, mount_of, resolve
from .disk_readahead import ReadAhead

MIB = 1 << 20
KIB = 1 << 10
ALL_TESTS = ("randread_4k", "randread_1m", "syncwrite_4k", "syncwrite_1m", "seqread", "seqwrite", "sweep",
             "readahead")
PRESETS = {
    "quick": {"file_size": 256 * MIB, "runtime": 5.0, "warmup": 1.0, "sweep_workers": [1, 4, 16],
              "tests": [t for t in ALL_TESTS if t != "readahead"]},
    "full": {"file_size": 2048 * MIB, "runtime": 30.0, "warmup": 5.0, "sweep_workers": [1, 2, 4, 8, 16, 32],
             "tests": list(ALL_TESTS)},
}
DEFAULTS = {"test_dir": "", "direct": True, "engine": "auto", "sync_mode": "fdatasync",
            "readahead_kb": [16, 128, 1024, 4096], "allow_system_dir": False}
MAX_WORKERS = 256
ENGINES = ("auto", "fio", "builtin")
SYNC_MODES = ("osync", "fdatasync")
# the parameters validate() takes: name, kind, default (None: the preset's), limits, unit
PARAMS = (
    {"name": "preset", "kind": "choice", "default": "quick", "choices": ("quick", "full")},
    {"name": "test_dir", "kind": "path", "default": DEFAULTS["test_dir"]},
    {"name": "file_size", "kind": "size", "default": None, "low": MIB, "high": 1 << 50, "unit": "B"},
    {"name": "runtime", "kind": "float", "default": None, "low": 0.1, "high": 24 * 3600.0, "unit": "s"},
    {"name": "warmup", "kind": "float", "default": None, "low": 0.0, "high": 3600.0, "unit": "s"},
    {"name": "direct", "kind": "bool", "default": DEFAULTS["direct"]},
    {"name": "engine", "kind": "choice", "default": DEFAULTS["engine"], "choices": ENGINES},
    {"name": "sync_mode", "kind": "choice", "default": DEFAULTS["sync_mode"], "choices": SYNC_MODES},
    {"name": "tests", "kind": "list", "default": None, "choices": ALL_TESTS},
    {"name": "sweep_workers", "kind": "list", "default": None, "low": 1, "high": MAX_WORKERS},
    {"name": "readahead_kb", "kind": "list", "default": DEFAULTS["readahead_kb"], "low": 0, "high": 1 << 20,
     "unit": "KiB"},
    {"name": "allow_system_dir", "kind": "bool", "default": DEFAULTS["allow_system_dir"]},
)
KNOWN = {param["name"] for param in PARAMS}
LIMITS = {param["name"]: (param["low"], param["high"]) for param in PARAMS if "low" in param}
# test name -> (job name, label, rw, bs); sync for writes comes from sync_mode
SIMPLE = {
    "randread_4k": ("randread_4k", "Random read 4 KiB", "randread", 4 * KIB),
    "randread_1m": ("randread_1m", "Random read 1 MiB", "randread", MIB),
    "syncwrite_4k": ("syncwrite_4k", "Sync random write 4 KiB", "randwrite", 4 * KIB),
    "syncwrite_1m": ("syncwrite_1m", "Sync random write 1 MiB", "randwrite", MIB),
    "seqread": ("seqread_1m", "Sequential read 1 MiB", "read", MIB),
    "seqwrite": ("seqwrite_1m", "Sequential write 1 MiB", "write", MIB),
}
READAHEAD_BS = 64 * KIB  # buffered reads smaller than the read-ahead window: the kernel's read-ahead shows
UNITS = {"iops": "IOPS", "mbps": "MB/s"}
LATENCIES = ("mean", "p50", "p95", "p99", "p99.9")
# the jobs of the two series, by the test that runs them ({workers}, {kb} filled in)
SERIES_JOBS = {"sweep": "sweep_randread_4k_w{workers}", "readahead": "readahead_seqread_ra{kb}"}
NEEDS_ROOT = ("readahead",)   # changes the block device's read-ahead (and restores it)
# what run() reports per job: metric name (with {job}, {latency} filled in) and unit
METRICS = (("{job}.iops", UNITS["iops"]), ("{job}.mbps", UNITS["mbps"]), ("{job}.lat_{latency}", "ms"))


def describe() -> Dict[str, Any]:
    """The parameters, presets, jobs and metrics, as data: the workbench builds its test catalogue from it."""
    jobs = tuple({"key": test, "job": SIMPLE[test][0] if test in SIMPLE else SERIES_JOBS[test],
                  "presets": tuple(name for name in PRESETS if test in PRESETS[name]["tests"]),
                  "needs_root": test in NEEDS_ROOT, "series": test in SERIES_JOBS}
                 for test in ALL_TESTS)
    return {"params": PARAMS, "presets": PRESETS, "jobs": jobs, "metrics": METRICS}


def _size(value: Any, name: str) -> int:
    """Bytes from an int or "256M", "2G", "16MiB", "4k"."""
    if isinstance(value, bool):
        raise ValueError("disk: {} must be a size, not {!r}".format(name, value))
    if isinstance(value, (int, float)):
        return int(value)
    text = str(value).strip().lower().replace("ib", "").replace("b", "")
    scale = {"k": KIB, "m": MIB, "g": 1 << 30, "t": 1 << 40}.get(text[-1:], 1)
    try:
        return int(float(text[:-1] if scale > 1 else text) * scale)
    except ValueError:
        raise ValueError("disk: {} must be a size like 256M or 2G, not {!r}".format(name, value)) from None


def _number(value: Any, name: str, low: float, high: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError("disk: {} must be a number, not {!r}".format(name, value)) from None
    if not low <= number <= high:
        raise ValueError("disk: {} must be {:g}-{:g}, not {:g}".format(name, low, high, number))
    return number


def _list(value: Any) -> List[Any]:
    if isinstance(value, str):
        return [v.strip() for v in value.strip("[]").split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ValueError("disk: expected a list, not {!r}".format(value))


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in ("1", "true", "yes", "on"):
        return True
    if str(value).strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("disk: {} must be true or false, not {!r}".format(name, value))


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(params) - KNOWN)
    if unknown:
        raise ValueError("disk: unknown parameter(s) {}".format(", ".join(unknown)))
    preset = params.get("preset", "quick")
    if preset not in PRESETS:
        raise ValueError("disk: preset must be quick or full, not {!r}".format(preset))
    merged = dict(DEFAULTS)
    merged.update(PRESETS[preset])
    merged.update(params)
    out = {"preset": preset}  # type: Dict[str, Any]
    out["file_size"] = _size(merged["file_size"], "file_size")
    if not LIMITS["file_size"][0] <= out["file_size"] <= LIMITS["file_size"][1]:
        raise ValueError("disk: file_size must be at least 1 MiB, not {}".format(out["file_size"]))
    out["runtime"] = _number(merged["runtime"], "runtime", *LIMITS["runtime"])
    out["warmup"] = _number(merged["warmup"], "warmup", *LIMITS["warmup"])
    out["direct"] = _bool(merged["direct"], "direct")
    out["allow_system_dir"] = _bool(merged["allow_system_dir"], "allow_system_dir")
    if merged["engine"] not in ENGINES:
        raise ValueError("disk: engine must be auto, fio or builtin, not {!r}".format(merged["engine"]))
    out["engine"] = merged["engine"]
    if merged["sync_mode"] not in SYNC_MODES:
        raise ValueError("disk: sync_mode must be osync or fdatasync, not {!r}".format(merged["sync_mode"]))
    out["sync_mode"] = merged["sync_mode"]
    tests = [str(t) for t in _list(merged["tests"])]
    bad = [t for t in tests if t not in ALL_TESTS]
    if bad or not tests:
        raise ValueError("disk: tests must be some of {}, not {!r}".format(", ".join(ALL_TESTS), bad or tests))
    out["tests"] = [t for t in ALL_TESTS if t in tests]  # a fixed order: reads before writes dirty anything
    out["sweep_workers"] = sorted({int(_number(w, "sweep_workers", *LIMITS["sweep_workers"]))
                                   for w in _list(merged["sweep_workers"])})
    out["readahead_kb"] = sorted({int(_number(k, "readahead_kb", *LIMITS["readahead_kb"]))
                                  for k in _list(merged["readahead_kb"])})
    if ("sweep" in tests and not out["sweep_workers"]) or ("readahead" in tests and not out["readahead_kb"]):
        raise ValueError("disk: sweep_workers and readahead_kb must not be empty")
    test_dir = str(merged["test_dir"] or "")
    if test_dir and not os.path.isabs(test_dir):
        raise ValueError("disk: test_dir must be an absolute path, not {!r}".format(test_dir))
    out["test_dir"] = test_dir
    return out


def jobs(params: Dict[str, Any], path: str) -> List[Dict[str, Any]]:
    """The JobSpecs with their phase labels, in run order."""
    out = []
    common = {"size": params["file_size"], "file": path, "direct": params["direct"], "runtime": params["runtime"],
              "warmup": params["warmup"], "workers": 1, "sync": "none"}

    def add(name: str, label: str, rw: str, bs: int, **extra: Any) -> None:
        job = dict(common, name=name, label=label, rw=rw, bs=bs)
        if rw in ("write", "randwrite") and name.startswith("syncwrite"):
            job["sync"] = params["sync_mode"]
        job.update(extra)
        out.append(job)

    for test in params["tests"]:
        if test in SIMPLE:
            add(*SIMPLE[test])
        elif test == "sweep":
            for n in params["sweep_workers"]:
                label = "Random read 4 KiB, {} worker{}".format(n, "" if n == 1 else "s")
                add(SERIES_JOBS["sweep"].format(workers=n), label, "randread", 4 * KIB, workers=n)
        elif test == "readahead":
            for kb in params["readahead_kb"]:  # buffered: read-ahead does nothing for O_DIRECT
                add(SERIES_JOBS["readahead"].format(kb=kb), "Sequential read, read-ahead {} KiB".format(kb), "read",
                    READAHEAD_BS, direct=False, readahead_kb=kb)
    return out


PREPARE_GUESS_BPS = 300e6   # a typical disk's sequential write, for the first time-left guess


def expected_seconds(params: Dict[str, Any]) -> float:
    count = len(jobs(params, "x"))
    prepare = params["file_size"] / 50e6 + 5.0  # writing the file at a slow disk's 50 MB/s
    return prepare + count * (params["runtime"] + params["warmup"] + 2.0)


def _ram_bytes() -> int:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * KIB
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _engine(params: Dict[str, Any]) -> Any:
    if params["engine"] == "builtin":
        return disk_builtin
    version = disk_fio.available()
    if params["engine"] == "fio" and version is None:
        raise RuntimeError("engine fio was asked for but fio is not installed on this host")
    return disk_fio if version else disk_builtin


def _place(ctx: Any, params: Dict[str, Any]) -> Tuple[str, str, str]:
    """(resolved test dir, its filesystem type, the test file's path); says so in the events."""
    requested = params["test_dir"] or ctx.run_dir
    if params["test_dir"]:
        test_dir, fstype, problem = resolve(requested, params["allow_system_dir"])
    else:  # the run's own directory
        test_dir, problem = os.path.realpath(requested), None
        fstype = mount_of(test_dir)[1]
    path = check_path(os.path.join(test_dir, unique_file_name()), test_dir)
    ctx.emit("test_file", path=path, test_dir=test_dir, requested=requested, fstype=fstype or "unknown")
    if problem:
        ctx.warning("test_dir {} is {}: used because allow_system_dir=true".format(test_dir, problem))
    elif test_dir != requested.rstrip("/"):
        ctx.warning("test_dir {} leads to {} ({}): the test file goes there".format(
            requested, test_dir, fstype or "unknown filesystem"))
    return test_dir, fstype, path


def run(ctx: Any, params: Dict[str, Any]) -> None:
    test_dir, fstype, path = _place(ctx, params)
    engine = _engine(params)
    todo = jobs(params, path)
    direct = params["direct"]
    if fstype in MEMORY_FS:
        direct = False   # tmpfs takes O_DIRECT since Linux 6.6, but it is still RAM
        ctx.warning("{} is on {}, in memory: the results measure RAM, not a disk; they are labelled "
                    "cached".format(test_dir, fstype))
    elif direct and not o_direct_supported(test_dir):
        direct = False
        ctx.warning("O_DIRECT is not supported in {} ({}): results are labelled cached, they measure the page "
                    "cache".format(test_dir, fstype or "unknown filesystem"))
    elif not direct and params["file_size"] < _ram_bytes():
        ctx.warning("the test file ({} MiB) is smaller than RAM and direct I/O is off: the page cache is measured, "
                    "not the disk".format(params["file_size"] >> 20))
    readahead = None  # type: Optional[ReadAhead]
    if any("readahead_kb" in job for job in todo):
        readahead, why = ReadAhead.for_dir(test_dir)
        if readahead is None:
            ctx.warning("read-ahead sweep skipped: " + why)
            todo = [job for job in todo if "readahead_kb" not in job]
        else:
            ctx.add_cleanup_callback(readahead.restore)  # also on cancel and on the deadline
    # the workbench's progress and time left: the jobs are timed, writing the file is a guess
    ctx.emit("plan", phases=[{"phase": "prepare", "label": "Writing the test file",
                              "seconds": round(params["file_size"] / PREPARE_GUESS_BPS + 0.5, 3), "timed": False}]
             + [{"phase": job["name"], "label": job["label"], "seconds": job["runtime"] + job["warmup"], "timed": True}
                for job in todo])
    meta_common = {"test_dir": test_dir, "test_file": path, "fstype": fstype, "file_size": params["file_size"],
                   "runtime": params["runtime"], "warmup": params["warmup"]}
    try:
        with ctx.phase("prepare", "Writing the test file"):
            prepare_file(path, params["file_size"], ctx, test_dir,
                         on_progress=lambda f: ctx.progress("prepare", f))
        for job in todo:
            with ctx.phase(job["name"], job["label"]):
                job_direct = direct and job["direct"]
                if "readahead_kb" in job and readahead is not None:
                    readahead.set(job["readahead_kb"])
                    _drop_cache(path)
                result = engine.run_job(job, ctx, direct=job_direct)
                ctx.progress(job["name"], 1.0, eta_s=0.0)
            _report(ctx, job, result, meta_common)
    finally:
        if readahead is not None:
            readahead.restore()
        remove_file(path)


def _drop_cache(path: str) -> None:
    """Buffered sequential reads must come from the disk: evict the file's pages first."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _report(ctx: Any, job: Dict[str, Any], result: Dict[str, Any], common: Dict[str, Any]) -> None:
    meta = dict(common, engine=result["engine"], engine_version=result["engine_version"], flags=result["flags"],
                direct=result["direct"], cached=not result["direct"], sync=result["sync"], bs=job["bs"],
                workers=job["workers"], ios=result["ios"], seconds=result["seconds"])
    if "readahead_kb" in job:
        meta["readahead_kb"] = job["readahead_kb"]
    name = job["name"]
    per_interval = result.get("rates") or {}
    for quantity in ("iops", "mbps"):
        emit_result(ctx, "disk", "{}.{}".format(name, quantity), round(result[quantity], 3), UNITS[quantity], meta,
                    per_interval.get(quantity))
    for key in ("mean", "p50", "p95", "p99", "p99.9"):
        ctx.result("disk", "{}.lat_{}".format(name, key), result["lat"][key], "ms", meta)
