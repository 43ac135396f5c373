"""redis-benchmark as the load tool: one process per command (GET and SET at once, the clients split by
get_ratio), parsed from its own output.

redis-benchmark runs one command per process and stops after -n requests (it has no duration and prints
nothing when interrupted), so each step first runs a short calibration (its progress lines give the
rate), then the measured run with -n = that rate x the step's seconds x MARGIN. Figures, as it printed them:
- per second: the mean of its four 250 ms progress lines ("rps=..." and "avg_msec=..."): it prints no
  per-interval percentiles, so each second has an average latency only;
- per step: its closing report (of the whole process, which runs a little past the step: see MARGIN):
  "throughput summary", the p50/p99 of its "latency summary" and p99.9 as the first line at or above
  99.9 % of its "Latency by percentile distribution".
Keys: prefix + __rand_int__ (12 digits below -r keyspace), the names the built-in generator and the
fill use; the SET value comes on stdin (-x). redis-benchmark takes a password only as -a on its command
line, where anyone on the host sees it in ps: with a password this tool is refused.
"""
import contextlib
import os
import re
import select
import shutil
import subprocess
import time
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

BINARY = "redis-benchmark"
MEMTIER = "memtier_benchmark"
INSTALL_HINT = "redis-benchmark is not installed on this host: install redis-tools (apt-get install redis-tools, " \
               "dnf install redis) or use tool=builtin"
MEMTIER_HINT = "memtier_benchmark is not installed on this host: install memtier-benchmark or use " \
               "tool=redis-benchmark / tool=builtin"
PASSWORD_REFUSAL = "redis-benchmark takes a password only on its command line (-a), where every user of the " \
                   "host can read it in ps: use tool=builtin, which sends AUTH over its connection"
CALIBRATE_S = 1.5        # seconds of the calibration run
TICKS_PER_SECOND = 4     # redis-benchmark prints a progress line every 250 ms
MARGIN = 1.15           # -n covers this many times the step at the calibrated rate: both commands run to its end
OVERRUN = 2.0            # the measured run may take this many times the step's seconds (+ 10 s) before it is ended
_PROGRESS = re.compile(r"^(?P<title>.*?): rps=(?P<rps>[-\w.]+) \(overall: (?P<overall>[-\w.]+)\) "
                       r"avg_msec=(?P<avg>[-\w.]+) \(overall: (?P<avg_overall>[-\w.]+)\)\s*$")
_COMPLETED = re.compile(r"^\s*(\d+) requests completed in ([\d.]+) seconds")
_PERCENTILE = re.compile(r"^([\d.]+)% <= ([\d.]+) milliseconds \(cumulative count (\d+)\)")
_THROUGHPUT = re.compile(r"throughput summary: ([\d.]+) requests per second")
_CLIENTS = re.compile(r"^\s*(\d+) parallel clients")


class ToolError(Exception):
    """redis-benchmark could not run or said something we cannot read."""


def version(binary: str = BINARY) -> Optional[str]:
    """"7.0.15" from `redis-benchmark --version`, None when it is not installed."""
    path = shutil.which(binary)
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, timeout=10).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"(\d+\.\d+(?:\.\d+)?)", out)
    return match.group(1) if match else out.strip()[:40] or "unknown"


def split_clients(clients: int, get_ratio: float) -> Dict[str, int]:
    """Connections per command: redis-benchmark runs one command per process, so the mix is a split of the
    clients (at least one each when both have a share and there are two clients or more)."""
    if get_ratio >= 1.0 or clients == 1 and get_ratio >= 0.5:
        return {"get": clients}
    if get_ratio <= 0.0 or clients == 1:
        return {"set": clients}
    gets = min(max(int(round(clients * get_ratio)), 1), clients - 1)
    return {"get": gets, "set": clients - gets}


def argv(cfg: Dict[str, Any], op: str, clients: int, requests: int, path: str = BINARY) -> List[str]:
    """The command line of one process (no password: see PASSWORD_REFUSAL)."""
    if cfg.get("password"):
        raise ToolError(PASSWORD_REFUSAL)
    key = cfg["prefix"].decode("utf-8", "surrogateescape") + "__rand_int__"  # novermin: the prefix is bytes
    out = [path, "-h", str(cfg["host"]), "-p", str(cfg["port"]), "-c", str(clients), "-n", str(requests),
           "-P", str(int(cfg["pipeline"])), "-r", str(int(cfg["keyspace"])), "--dbnum", str(int(cfg.get("db") or 0)),
           "--precision", "3"]
    if op == "set":
        return out + ["-x", "SET", key]   # the value on stdin: -d applies to the built-in tests only
    return out + ["GET", key]


# -- parsing ---------------------------------------------------------------------------------------------

def _number(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if value != value else value   # -nan reads as NaN


def progress_lines(text: str) -> List[Dict[str, Optional[float]]]:
    """Its progress lines (separated by carriage returns), in order: rps, overall, avg_msec, avg_overall.

    The first line, printed before any request completed ("rps=0.0 (overall: -nan)"), is left out."""
    out = []
    for part in re.split(r"[\r\n]", text):
        match = _PROGRESS.match(part.strip())
        if not match:
            continue
        line = {"rps": _number(match.group("rps")), "overall": _number(match.group("overall")),
                "avg_ms": _number(match.group("avg")), "avg_overall_ms": _number(match.group("avg_overall"))}
        if not out and line["avg_ms"] is None and not line["rps"]:
            continue
        out.append(line)
    return out


def per_second(lines: List[Dict[str, Optional[float]]]) -> List[Dict[str, Optional[float]]]:
    """Whole seconds of four progress lines: ops/s = the mean of their rps, avg_ms their rps-weighted mean."""
    out = []
    for start in range(0, len(lines) - TICKS_PER_SECOND + 1, TICKS_PER_SECOND):
        group = lines[start:start + TICKS_PER_SECOND]
        rates = [line["rps"] or 0.0 for line in group]
        weighted = [(line["rps"] or 0.0, line["avg_ms"]) for line in group if line["avg_ms"] is not None]
        weight = sum(r for r, _ in weighted)
        avg = sum(r * a for r, a in weighted) / weight if weight else None
        out.append({"ops": round(sum(rates) / len(rates), 1), "avg_ms": None if avg is None else round(avg, 3)})
    return out


def parse_report(text: str) -> Dict[str, Any]:
    """Its closing report: requests, seconds, clients, throughput, latency summary and percentile table."""
    report = {"percentiles": []}  # type: Dict[str, Any]
    section = ""
    summary_next = False
    for line in text.replace("\r", "\n").split("\n"):
        if line.startswith("Latency by percentile distribution"):
            section = "percentiles"
            continue
        if line.startswith("Cumulative distribution of latencies"):
            section = "cumulative"
            continue
        match = _COMPLETED.match(line)
        if match:
            report["requests"], report["seconds"] = int(match.group(1)), float(match.group(2))
            continue
        match = _CLIENTS.match(line)
        if match:
            report["clients"] = int(match.group(1))
            continue
        match = _PERCENTILE.match(line)
        if match:
            if section == "percentiles":
                report["percentiles"].append((float(match.group(1)), float(match.group(2)), int(match.group(3))))
            continue
        match = _THROUGHPUT.search(line)
        if match:
            report["throughput"] = float(match.group(1))
            continue
        if line.split() == ["avg", "min", "p50", "p95", "p99", "max"]:
            summary_next = True
            continue
        if summary_next:
            values = line.split()
            if len(values) == 6:
                for name, value in zip(("avg", "min", "p50", "p95", "p99", "max"), values):
                    report[name + "_ms"] = float(value)
            summary_next = False
    report["p999_ms"], report["p999_line"] = _p999(report["percentiles"])
    if "throughput" not in report:
        raise ToolError("redis-benchmark printed no closing report")
    return report


def _p999(table: List[Tuple[float, float, int]]) -> Tuple[Optional[float], Optional[float]]:
    """(latency, percentile) of the first line at or above 99.9 % (its table has no line at exactly 99.9)."""
    for percent, millis, _ in table:
        if percent >= 99.9:
            return millis, percent
    return None, None


# -- running ---------------------------------------------------------------------------------------------

class _Proc:
    """One running redis-benchmark and what it printed so far."""

    def __init__(self, popen: Callable[..., "subprocess.Popen"], args: List[str], value: bytes) -> None:
        self.proc = popen(args, stdin=subprocess.PIPE if value else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.started = time.time()
        if value:
            with contextlib.suppress(OSError):
                self.proc.stdin.write(value)
                self.proc.stdin.close()
        self.chunks = []  # type: List[bytes]
        self.closed = False

    @property
    def fd(self) -> int:
        return self.proc.stdout.fileno()

    def read(self) -> None:
        chunk = os.read(self.fd, 1 << 16)
        if chunk:
            self.chunks.append(chunk)
        else:
            self.closed = True

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", "replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _pump(procs: Dict[str, "_Proc"], timeout: float) -> None:
    open_fds = {p.fd: p for p in procs.values() if not p.closed}
    if not open_fds:
        time.sleep(timeout)
        return
    readable, _, _ = select.select(list(open_fds), [], [], timeout)
    for fd in readable:
        open_fds[fd].read()


def _start(popen: Callable[..., "subprocess.Popen"], cfg: Dict[str, Any], split: Dict[str, int],
           requests: Dict[str, int], path: str) -> Dict[str, "_Proc"]:
    value = b"x" * int(cfg["value_size"])
    procs = {}  # type: Dict[str, _Proc]
    try:
        for op, clients in split.items():
            procs[op] = _Proc(popen, argv(cfg, op, clients, requests[op], path), value if op == "set" else b"")
    except BaseException:
        for proc in procs.values():
            proc.stop()
        raise
    return procs


def calibrate(popen: Callable[..., "subprocess.Popen"], cfg: Dict[str, Any], split: Dict[str, int], path: str,
              should_stop: Callable[[], bool]) -> Dict[str, float]:
    """Requests per second of each command with this split, from CALIBRATE_S of progress lines."""
    procs = _start(popen, cfg, split, {op: 2000000000 for op in split}, path)
    try:
        end = time.monotonic() + CALIBRATE_S
        while time.monotonic() < end and not should_stop():
            _pump(procs, 0.1)
            if all(p.closed for p in procs.values()):
                break
    finally:
        for proc in procs.values():
            proc.stop()
    rates = {}
    for op, proc in procs.items():
        lines = progress_lines(proc.text())
        tail = [line["rps"] for line in lines[-4:] if line["rps"]]
        if not tail:
            raise ToolError("redis-benchmark ({}) printed no progress: {}".format(op, _last_words(proc.text())))
        rates[op] = sum(tail) / len(tail)
    return rates


def _last_words(text: str) -> str:
    words = " ".join(line.strip() for line in text.replace("\r", "\n").split("\n") if line.strip()
                     and not _PROGRESS.match(line.strip()))
    return words[-300:] or "(nothing)"


def run_step(cfg: Dict[str, Any], clients: int, seconds: int, on_second: Callable[..., None],
             popen: Callable[..., "subprocess.Popen"], should_stop: Callable[[], bool] = lambda: False,
             path: str = BINARY) -> Dict[str, Any]:
    """One step: calibration, then the measured run; on_second(second, t, ops, lat_ms, errors, retries) per
    whole second of its progress lines. Returns the same structure as resp_load.run_load, plus tool_total
    and the parsed reports."""
    split = split_clients(clients, float(cfg["get_ratio"]))
    rates = calibrate(popen, cfg, split, path, should_stop)
    requests = {op: max(int(rates[op] * seconds * MARGIN), int(cfg["pipeline"]) * split[op]) for op in split}
    while cfg.get("start_at") and time.time() < float(cfg["start_at"]):   # several client hosts start together
        if should_stop():
            raise ToolError("stopped")
        time.sleep(min(0.1, max(float(cfg["start_at"]) - time.time(), 0.0)))
    procs = _start(popen, cfg, split, requests, path)
    emitted = 0
    by_op = {"get": [], "set": []}  # type: Dict[str, List[float]]
    totals = []  # type: List[float]
    overran = ""
    try:
        deadline = time.monotonic() + OVERRUN * seconds + 10.0
        while not all(p.closed for p in procs.values()):
            if should_stop():
                raise ToolError("stopped")
            if time.monotonic() > deadline:
                overran = "redis-benchmark was still running {:.0f} s into a {} s step (the server slowed down " \
                          "after the calibration) and was ended: its closing report (p50, p99, p99.9, total) is " \
                          "missing for this step".format(OVERRUN * seconds + 10, seconds)
                break
            _pump(procs, 0.25)
            emitted = _emit(procs, emitted, seconds, by_op, totals, on_second)
    finally:
        for proc in procs.values():
            proc.stop()
    reports = {}
    if not overran:
        for op, proc in procs.items():
            if proc.proc.returncode not in (0, None):
                raise ToolError("redis-benchmark ({}) failed: {}".format(op, _last_words(proc.text())))
            reports[op] = parse_report(proc.text())
    out = {"per_second": totals, "per_second_by_op": by_op, "errors": 0, "retries": 0,
           "tool_total": round(sum(r["throughput"] for r in reports.values()), 2) if reports else None,
           "tool_reports": {op: {k: v for k, v in r.items() if k != "percentiles"} for op, r in reports.items()},
           "clients_by_op": split, "requests": requests, "unfinished": 0}
    if overran:
        out["warning"] = overran
    for name, key in (("p50_ms", "p50_ms"), ("p99_ms", "p99_ms"), ("p999_ms", "p999_ms")):
        out[name] = {op: reports[op].get(key) if op in reports else None for op in ("get", "set")}
    return out


def _emit(procs: Dict[str, "_Proc"], emitted: int, step_seconds: int, by_op: Dict[str, List[float]],
          totals: List[float], on_second: Callable[..., None]) -> int:
    """Emits the whole seconds every process has printed, up to the step's length (the mix of commands holds
    only while both run; -n's margin lets both run past it)."""
    seconds = {op: per_second(progress_lines(p.text())) for op, p in procs.items()}
    ready = min(min(len(s) for s in seconds.values()), step_seconds)
    start = min(p.started for p in procs.values())
    while emitted < ready:
        ops = {}  # type: Dict[str, float]
        lat = {}  # type: Dict[str, Dict[str, Optional[float]]]
        for op in ("get", "set"):
            sec = seconds.get(op, [])
            if emitted < len(sec):
                ops[op] = sec[emitted]["ops"]
                lat[op] = {"avg": sec[emitted]["avg_ms"], "p50": None, "p99": None, "p999": None}
            else:
                ops[op] = 0.0
                lat[op] = {"avg": None, "p50": None, "p99": None, "p999": None}
        emitted += 1
        for op in ("get", "set"):
            by_op[op].append(ops[op])
        totals.append(round(sum(ops.values()), 1))
        on_second(emitted, start + emitted, ops, lat, 0, 0)
    return emitted
