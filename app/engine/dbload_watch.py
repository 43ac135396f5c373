"""The database server's own telemetry during a database load, when the server is a host in the inventory.

The load comes from the client host(s); the storyline is the server's disks and CPU under it. When the
target (target=ADDR[:PORT]) is the address or name of an inventory host, or target_host=NAME names one,
that host is sampled as a monitor (iostat, CPU, load, steal) from before the first step to after the last,
stored as a run of its own, and tied to the load run(s): an event "target_telemetry" in each names the
monitor run, and each step gets the server's figures over that step (target_cpu_pct, target_iowait_pct,
target_steal_pct, target_load1, target_disk_util_pct: means over the step's seconds, the busiest disk).
A target on a client host itself (loopback, or the same host) is not watched twice: that host's own
telemetry is already the run's.
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.orchestrator import RunControl, RunOutcome, RunRequest, RunRequestError
from remote.run_session import MONITOR
from storage.records import ResultSample

TEST = "dbload"
TARGET_METRICS = (("target_cpu_pct", "%"), ("target_iowait_pct", "%"), ("target_steal_pct", "%"),
                  ("target_load1", ""), ("target_disk_util_pct", "%"))
LOOPBACK = ("localhost", "::1", "")


def _address(target: str) -> str:
    """The address of target=ADDR[:PORT] / [IPv6]:PORT."""
    text = target.strip()
    if text.startswith("["):
        return text[1:].partition("]")[0]
    return text.rpartition(":")[0] if text.count(":") == 1 else text


def target_host(workbench: Any, params: Mapping[str, Any], clients: Sequence[str]) -> str | None:
    """The inventory host that is the load's database server, or None (not known, or one of the clients).

    target_host=NAME is taken as said (RunRequestError when no such host); else the host whose address or
    name is the target's address, other than loopback (the client's own server)."""
    named = str(params.get("target_host") or "").strip()
    hosts = workbench.list_hosts()
    if named:
        found = next((h.name for h in hosts if named in (h.name, h.address)), None)
        if found is None:
            raise RunRequestError(f"dbload: target_host={named} is not a host of the inventory: add it "
                                  "(benchbay host add) or leave target_host out")
        return None if found in clients else found
    address = _address(str(params.get("target") or ""))
    if address in LOOPBACK or address.startswith("127."):
        return None
    found = next((h.name for h in hosts if address in (h.address, h.name)), None)
    return None if found is None or found in clients else found


@dataclass
class WatchResult:
    host: str
    run_id: int | None
    error: str


class TargetWatch:
    """A monitor run on the target host in a thread of its own, from start() until stop()."""

    def __init__(self, workbench: Any, host: str, interval: float,
                 on_sample: Callable[[str, Any], None] | None = None, tag: Mapping[str, Any] | None = None) -> None:
        self.workbench = workbench
        self.host = host
        self.interval = interval
        self.tag = dict(tag or {})   # stored as the monitor's parameters: a re-attach finds it by them
        self.control = RunControl()
        self.on_sample = on_sample
        self.outcome: Any = None
        self._thread = threading.Thread(target=self._run, name=f"dbload-target-{host}", daemon=True)

    def _run(self) -> None:
        try:
            self.outcome = self.workbench.run(RunRequest(self.host, MONITOR, self.tag, interval=self.interval),
                                              self.control, self.on_sample)
        except BaseException as exc:   # an unreachable target: the load goes on, the run says why
            self.outcome = exc

    def start(self) -> TargetWatch:
        self._thread.start()
        return self

    def stop(self, timeout: float = 120.0) -> WatchResult:
        self.control.stop()
        self._thread.join(timeout)
        outcome = self.outcome
        if self._thread.is_alive():
            return WatchResult(self.host, None, "the target's monitor did not end in time")
        if isinstance(outcome, BaseException) or outcome is None:
            return WatchResult(self.host, None, str(outcome) or type(outcome).__name__)
        return WatchResult(self.host, outcome.run_id, "" if outcome.samples else "no sample came from the target")


def watch_tag(clients: Sequence[str], group: str = "") -> dict[str, Any]:
    """The target monitor's parameters: which load it watches (app.engine.dbload_reattach reads them back)."""
    return {"watching": TEST, "clients": list(clients), "group": group}


def start_watch(workbench: Any, params: Mapping[str, Any], clients: Sequence[str], interval: float,
                on_sample: Callable[[str, Any], None] | None = None, group: str = "") -> TargetWatch | None:
    host = target_host(workbench, params, clients)
    return TargetWatch(workbench, host, interval, on_sample, watch_tag(clients, group)).start() if host else None


def step_windows(events: Sequence[Mapping[str, Any]]) -> dict[int, tuple[float, float]]:
    """step -> (start, end) on the workbench's clock, from a load run's stored phase events."""
    starts: dict[int, float] = {}
    out: dict[int, tuple[float, float]] = {}
    for event in events:
        phase = str(event.get("phase") or "")
        if not phase.startswith("step") or not phase[4:].isdigit() or not isinstance(event.get("t"), (int, float)):
            continue
        step = int(phase[4:])
        if event.get("type") == "phase_start":
            starts[step] = float(event["t"])
        elif event.get("type") == "phase_end" and step in starts:
            out[step] = (starts[step], float(event["t"]))
    return out


def _t0(events: Sequence[Mapping[str, Any]]) -> float | None:
    found = [e.get("t0") for e in events if e.get("type") == "telemetry" and isinstance(e.get("t0"), (int, float))]
    return float(found[-1]) if found else None


def _mean(values: list[float]) -> float | None:
    finite = [v for v in values if math.isfinite(v)]
    return math.fsum(finite) / len(finite) if finite else None


def step_figures(series: Sequence[Any], t0: float, window: tuple[float, float]) -> dict[str, Any]:
    """The target's means over one step: a sample counts when the middle of its interval lies in the step."""
    start, end = window
    intervals = {round(t, 6): v for s in series if s.name == "interval" for t, v in zip(s.t, s.values, strict=True)}

    def inside(t: float) -> bool:
        middle = t0 + t - intervals.get(round(t, 6), 0.0) / 2.0
        return start <= middle <= end

    def values(name: str, device: str = "") -> list[float]:
        return [v for s in series if s.name == name and s.device == device
                for t, v in zip(s.t, s.values, strict=True) if inside(t)]

    idle, iowait, steal = values("cpu.idle"), values("cpu.iowait"), values("cpu.steal")
    out: dict[str, Any] = {"samples": len(idle)}
    busy = [100.0 - i - w for i, w in zip(idle, iowait, strict=False)] if iowait else [100.0 - i for i in idle]
    out["target_cpu_pct"] = _mean(busy)
    out["target_iowait_pct"] = _mean(iowait)
    out["target_steal_pct"] = _mean(steal)
    out["target_load1"] = _mean(values("load.1"))
    disks = {s.device for s in series if s.name == "disk.util" and s.device}
    utils = {d: _mean(values("disk.util", d)) for d in sorted(disks)}
    utils = {d: u for d, u in utils.items() if u is not None}
    if utils:
        disk = max(utils, key=lambda d: utils[d])
        out["target_disk_util_pct"], out["disk"] = utils[disk], disk
    else:
        out["target_disk_util_pct"] = None
    return out


def target_results(workbench: Any, watch: WatchResult, load_run: int,
                   timing_run: int | None = None) -> list[ResultSample]:
    """The target's figures for each step of a stored load run (none when the monitor stored nothing); the
    steps' times from timing_run's phase events (a TOTAL run has none of its own: its client 0's)."""
    if watch.run_id is None:
        return []
    t0 = _t0(workbench.run_events(watch.run_id))
    detail = workbench.find_run(load_run)
    if t0 is None or detail is None:
        return []
    clients = {r.metadata["step"]: r.metadata.get("clients") for r in detail.results
               if r.metric == "ops_per_s" and isinstance(r.metadata.get("step"), int)}
    series = workbench.run_series(watch.run_id)
    windows = step_windows(workbench.run_events(load_run if timing_run is None else timing_run))
    out = []
    for step, window in sorted(windows.items()):
        if step not in clients:
            continue
        figures = step_figures(series, t0, window)
        if not figures["samples"]:
            continue
        for metric, unit in TARGET_METRICS:
            value = figures.get(metric)
            if value is None:
                continue
            meta = {"step": step, "clients": clients[step], "target_host": watch.host,
                    "target_run_id": watch.run_id, "samples": figures["samples"]}
            if metric == "target_disk_util_pct":
                meta["disk"] = figures["disk"]
            out.append(ResultSample(TEST, metric, round(value, 2), unit, meta))
    return out


def record(workbench: Any, watch: WatchResult, load_runs: Sequence[int], timing_run: int | None = None) -> None:
    """Tie the target's monitor run to the load runs and give each run's steps the target's figures."""
    runs = workbench.store.runs
    now = time.time()
    for run_id in load_runs:
        figures = target_results(workbench, watch, run_id, timing_run)
        if figures:
            runs.add_results(run_id, figures)
        events = [{"seq": None, "t": now, "type": "target_telemetry", "host": watch.host, "run_id": watch.run_id,
                   "error": watch.error, "message": _message(watch)}]
        if watch.error:   # shown with the run's other warnings
            events.append({"seq": None, "t": now, "type": "warning", "message": _message(watch)})
        runs.add_events(run_id, events)
    if watch.run_id is not None:
        runs.add_events(watch.run_id, [{"seq": None, "t": now, "type": "target_telemetry", "host": watch.host,
                                        "load_runs": list(load_runs),
                                        "message": "the database server's telemetry during load run(s) "
                                                   + ", ".join(f"#{r}" for r in load_runs)}])


def _message(watch: WatchResult) -> str:
    if watch.run_id is not None and not watch.error:
        return f"the database server {watch.host}'s telemetry (iostat, CPU, load, steal) is run #{watch.run_id}"
    return (f"the database server {watch.host}'s telemetry was not recorded: {watch.error or 'no reason given'}; "
            f"check that Benchbay reaches it (benchbay monitor {watch.host} --seconds 5)")


def run_watching_target(workbench: Any, request: RunRequest, run: Callable[[], RunOutcome],
                        on_sample: Callable[[str, Any], None] | None = None) -> RunOutcome:
    """run() (one host's load run), with the target server sampled meanwhile when it is an inventory host (its
    samples to on_sample too, under its own name). The clients of a load from several hosts are watched once
    for all (app.engine.dbload_multi)."""
    if request.test != TEST or request.params.get("wait_for_start"):
        return run()
    watch = start_watch(workbench, request.params, [workbench.get_host(request.host).name], request.interval,
                        on_sample)
    if watch is None:
        return run()
    try:
        outcome = run()
    except BaseException:
        ended = watch.stop()
        if ended.run_id is not None:   # the load run was never stored: its server's telemetry goes with it
            workbench.delete_run(ended.run_id)
        raise
    record(workbench, watch.stop(), [outcome.run_id])
    return outcome
