"""The fio engine: one generated job per JobSpec, run with --output-format=json, parsed into a JobResult.

psync with iodepth 1 whatever `direct` is, so fio and the built-in engine do the same thing and can be
compared. Latencies: fio's completion latency (clat) percentiles; for fdatasync jobs fio times the
fdatasync separately (not in clat), which the flags say.

fio reads ':' in --filename as a list separator and cuts an option at ';' or '#', escapes or not: it
runs inside the test directory and gets the file's own name, which we choose (letters, digits, . - _).
JSON fields by fio version: bw_bytes (B/s) since 3.2, bw (KiB/s) always; clat_ns since 3.0, clat (µs)
before.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from typing import Any, Dict, List, Optional

from .common import interval_count, one_line, rate_interval, rates
from .disk_file import check_own_file

ENGINE = "fio"
PROGRESS_EVERY = 0.5


def available() -> Optional[str]:
    """fio's version ("fio-3.33") or None when the host has no working fio."""
    try:
        out = subprocess.run(["fio", "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.decode("utf-8", "replace").strip()
    return text or None


SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
SAFE_PATH = re.compile(r"^[A-Za-z0-9._/+-]+$")   # no ':' (a list separator), ',' ';' '#' or space


def command(job: Dict[str, Any], direct: bool, log_prefix: str = "") -> List[str]:
    """fio's argv; it runs in the file's directory (see fio_cwd) and names the file relative to it.
    With log_prefix, fio also writes its per-interval IOPS and bandwidth logs (see interval_rates)."""
    name = os.path.basename(job["file"])
    if not SAFE_NAME.match(name):
        raise ValueError("fio cannot be given the file name {!r}: only letters, digits, '.', '-' and '_' "
                         "pass its option parser unchanged".format(name))
    argv = [
        "fio", "--output-format=json", "--name=" + job["name"], "--filename=" + name,
        "--rw=" + job["rw"], "--bs={}".format(int(job["bs"])), "--size={}".format(int(job["size"])),
        "--numjobs={}".format(int(job["workers"])), "--group_reporting", "--ioengine=psync", "--iodepth=1",
        "--direct={}".format(1 if direct else 0), "--time_based", "--runtime={}ms".format(_ms(job["runtime"])),
        "--randrepeat=0", "--norandommap=1", "--percentile_list=50:95:99:99.9", "--create_on_open=0",
        "--allow_file_create=0", "--file_append=0", "--unlink=0",
    ]
    if float(job["warmup"]) > 0:
        argv.append("--ramp_time={}ms".format(_ms(job["warmup"])))
    if log_prefix:   # fio starts these logs when the ramp ends: the measured window only
        argv += ["--write_iops_log=" + log_prefix, "--write_bw_log=" + log_prefix,
                 "--log_avg_msec={}".format(_ms(rate_interval(float(job["runtime"]))))]
    if job["rw"] in ("write", "randwrite"):
        if job.get("sync") == "osync":
            argv.append("--sync=1")
        elif job.get("sync") == "fdatasync":
            argv.append("--fdatasync=1")
    return argv


def fio_cwd(job: Dict[str, Any]) -> str:
    return os.path.dirname(os.path.abspath(job["file"]))


def _ms(seconds: Any) -> int:
    return max(int(round(float(seconds) * 1000)), 1)


def _log_dir(ctx: Any) -> str:
    """A private directory for fio's logs, whose path fio's option parser takes as it is ("" if none)."""
    base = ctx.run_dir if ctx is not None else None
    try:
        directory = tempfile.mkdtemp(prefix="fio-logs-", dir=base)
    except OSError:
        return ""
    if not SAFE_PATH.match(directory):
        shutil.rmtree(directory, ignore_errors=True)
        return ""   # no per-interval rates rather than a path fio would cut in pieces
    if ctx is not None:
        ctx.add_cleanup_path(directory)   # also removed when the run is cancelled mid-job
    return directory


def run_job(job: Dict[str, Any], ctx: Any = None, direct: Optional[bool] = None) -> Dict[str, Any]:
    direct = bool(job["direct"] if direct is None else direct)
    log_dir = _log_dir(ctx)
    try:
        result = _run_job(job, ctx, direct, log_dir)
        if log_dir:
            result["rates"] = interval_rates(job, log_dir, result)
        return result
    finally:
        if log_dir:
            shutil.rmtree(log_dir, ignore_errors=True)


def _run_job(job: Dict[str, Any], ctx: Any, direct: bool, log_dir: str) -> Dict[str, Any]:
    argv = command(job, direct, os.path.join(log_dir, "job") if log_dir else "")
    total = float(job["warmup"]) + float(job["runtime"])
    check_own_file(job["file"])   # fio opens it by name: not through a link put in its place
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        if ctx is not None:
            proc = ctx.popen(argv, stdout=out, stderr=err, cwd=fio_cwd(job))
        else:
            proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=fio_cwd(job))
        started = time.monotonic()
        try:
            while proc.poll() is None:
                elapsed = time.monotonic() - started
                if ctx is not None:
                    ctx.progress(job["name"], elapsed / total if total else 1.0, eta_s=max(total - elapsed, 0.0))
                    ctx.sleep(PROGRESS_EVERY)
                else:
                    time.sleep(0.05)
        finally:
            if proc.poll() is None:  # cancelled: ctx already killed its group; make sure, and reap
                proc.kill()
            proc.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RuntimeError("fio failed (exit {}): {}".format(proc.returncode, one_line(stderr or stdout)))
    return parse(job, stdout, direct, " ".join(shlex.quote(a) for a in argv))


def parse(job: Dict[str, Any], stdout: str, direct: bool, flags: str) -> Dict[str, Any]:
    """fio's JSON (possibly after warning lines) → JobResult."""
    start = stdout.find("{")
    if start < 0:
        raise RuntimeError("fio printed no JSON: " + one_line(stdout))
    doc = json.loads(stdout[start:])
    fio_job = doc["jobs"][0]
    side = fio_job["write"] if job["rw"] in ("write", "randwrite") else fio_job["read"]
    clat, per_ms = side.get("clat_ns") or side.get("lat_ns"), 1e6
    if not clat:  # fio < 3.0: microseconds
        clat, per_ms = side.get("clat") or side.get("lat") or {}, 1e3
    pct = clat.get("percentile") or {}

    def at(p: str) -> float:
        for key, value in pct.items():
            if abs(float(key) - float(p)) < 1e-6:
                return round(float(value) / per_ms, 6)
        return 0.0

    runtime_ms = float(side.get("runtime") or 0)
    iops = float(side.get("iops") or 0.0)
    total_ios = side.get("total_ios")
    return {
        "end_ms": int(doc.get("timestamp_ms") or 0),   # the wall clock when fio finished (ms)
        "name": job["name"], "iops": iops, "mbps": bytes_per_second(side) / 1e6,
        "ios": int(total_ios) if total_ios is not None else int(round(iops * runtime_ms / 1000.0)),
        "seconds": runtime_ms / 1000.0,  # group_reporting: the longest job's runtime
        "lat": {"mean": round(float(clat.get("mean") or 0.0) / per_ms, 6), "p50": at("50"), "p95": at("95"),
                "p99": at("99"), "p99.9": at("99.9")},
        "engine": ENGINE, "engine_version": str(doc.get("fio version") or available() or "fio"),
        "flags": flags, "direct": direct, "sync": job.get("sync", "none"),
    }


def _read_log(path: str, window_ms: int) -> Dict[int, float]:
    """interval index -> value of one job's log ("time ms, value, direction, bs, offset" lines)."""
    out = {}  # type: Dict[int, float]
    with open(path) as handle:
        for line in handle:
            fields = line.split(",")
            try:
                at, value = int(fields[0]), float(fields[1])
            except (ValueError, IndexError):
                continue
            # an entry is stamped at the end of its window (fio's timer drifts a little)
            out[int(round(at / float(window_ms))) - 1] = value
    return out


def interval_rates(job: Dict[str, Any], log_dir: str, result: Dict[str, Any]) -> Dict[str, Any]:
    """Per-interval IOPS and MB/s, summed over the workers, from fio's logs; {} when they are missing."""
    interval = rate_interval(float(job["runtime"]))
    window_ms = _ms(interval)
    slots = interval_count(float(job["runtime"]), interval)
    out = {}  # type: Dict[str, Any]
    # the window starts where the run's measured part started: its end less its runtime
    t0 = (result.get("end_ms") or 0) / 1000.0 - float(result.get("seconds") or 0.0)
    for kind, quantity, scale in (("iops", "iops", 1.0), ("bw", "mbps", 1024.0 / 1e6)):
        paths = [os.path.join(log_dir, name) for name in sorted(os.listdir(log_dir))
                 if name.startswith("job_{}.".format(kind)) and name.endswith(".log")]
        logs = [_read_log(path, window_ms) for path in paths]
        if not logs:
            continue
        # intervals every worker logged, in order: a missing one would read low
        indexes = [i for i in range(slots) if all(i in log for log in logs)]
        if indexes != list(range(len(indexes))):
            indexes = indexes[:next(n for n, i in enumerate(indexes) if i != n)]
        values = [sum(log[i] for log in logs) * scale for i in indexes]
        # fio logs rates per second already: rates() divides by the interval, so hand it amounts
        out[quantity] = rates([v * interval for v in values], interval, t0)
    return out


def bytes_per_second(side: Dict[str, Any]) -> float:
    """Bandwidth in B/s: bw_bytes where fio has it (3.2+), else bw, which fio gives in KiB/s."""
    if side.get("bw_bytes") is not None:
        return float(side["bw_bytes"])
    return float(side.get("bw") or 0.0) * 1024.0
