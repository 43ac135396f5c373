"""The shared-storage test on N client hosts at once: clocks measured, one start instant, totals stored.

1. Each client host's clock offset is measured over its own SSH connection (remote.clock_offset).
2. The test runs on every host as an ordinary run (execute_run, one worker each) with wait_for_start:
   each agent prepares its files in its own directory of the shared one and says "shared_ready".
3. Once all are ready, the offsets are measured again and every agent gets the same instant (now +
   LEAD), each in its own clock, as a file "go" in its run directory. A host that fails before that
   cancels the others: no step runs with fewer clients than it says.
4. Afterwards the clients' per-second counts are summed per step (app.engine.shared_totals) and stored
   as one more run, host "TOTAL ...": totals, per-client and total series, start spreads, the knee.
"""
from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from app.engine.client_groups import member_status
from app.engine.clients_together import (
    TogetherOutcome,
    TogetherRequest,
    client_name,
    run_together,
)
from app.engine.orchestrator import (
    EventCallback,
    RunControl,
    RunOutcome,
    RunRequestError,
    SampleCallback,
)
from app.engine.shared_totals import (
    ClientStep,
    Knee,
    StepTotal,
    client_bound,
    client_limit_text,
    find_knee,
    step_total,
)
from remote.agent import benches
from storage.records import ResultSample, RunStatus, SeriesData
from storage.spread import spread_of

TEST = "shared-storage"
TAG_PREFIX = "shared-"

TickCallback = Callable[[str, str, int, float, float], None]   # host, step, second, op/s, MB/s


@dataclass(frozen=True)
class SharedRequest(TogetherRequest):
    """params: the agent's parameters (test_dir, rw, bs, clients, threads ...)."""


@dataclass
class SharedOutcome(TogetherOutcome):
    steps: list[StepTotal] = field(default_factory=list)
    knee: Knee | None = None
    flags: list[str] = field(default_factory=list)           # how the clients opened their files, as they said
    seconds: float = 0.0                                      # from that start to the end of the last step, as planned
    step_seconds: float = 0.0                                 # each step's length
    gap: float = 0.0                                          # seconds between two steps
    planned_steps: int = 0


def sweep_steps(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sweep's steps in run order, as the agent runs them."""
    return benches.load(TEST).steps(dict(params))


def default_clients(hosts: int) -> list[int]:
    """1, 2, 4 ... up to the number of hosts, and all of them."""
    out, n = [], 1
    while n < hosts:
        out.append(n)
        n *= 2
    return out + [hosts]


def plan(request: SharedRequest, group: str) -> list[dict[str, Any]]:
    """Each host's parameters; RunRequestError when the request is wrong."""
    hosts = list(request.hosts)
    if len(set(hosts)) != len(hosts):
        raise RunRequestError("shared-storage: a host is named twice; each client host once")
    params = dict(request.params)
    params.setdefault("clients", default_clients(len(hosts)))
    if not str(params.get("test_dir") or ""):
        raise RunRequestError("shared-storage: name the shared directory (--dir PATH, mounted there on every "
                              "client host)")
    for key in ("client_index", "client_name", "group", "wait_for_start"):
        if key in params:
            raise RunRequestError(f"shared-storage: {key} is set by the workbench, not by hand")
    try:
        base = benches.validate(TEST, dict(params, wait_for_start=True, group=group))
    except ValueError as exc:
        raise RunRequestError(str(exc)) from None
    if max(base["clients"]) > len(hosts):
        raise RunRequestError(f"shared-storage: clients goes up to {max(base['clients'])} but {len(hosts)} "
                              f"host{'s are' if len(hosts) != 1 else ' is'} given: name more hosts or lower clients")
    return [dict(base, client_index=i, client_name=client_name(i, host)) for i, host in enumerate(hosts)]


def run_shared(bench: Any, request: SharedRequest, control: RunControl | None = None,
               on_event: EventCallback | None = None, on_tick: TickCallback | None = None,
               passwords: Mapping[str, str | None] | None = None,
               on_sample: SampleCallback | None = None) -> SharedOutcome:
    """Run the sweep on every host together and store the runs and their total; blocks."""
    control = control or RunControl()
    passwords = passwords or {}
    group = secrets.token_hex(4)
    per_host = plan(request, group)
    hosts = tuple(bench.get_host(h).name for h in request.hosts)
    outcome = SharedOutcome(group, hosts, [None] * len(hosts))

    def events(host: str, event: dict) -> None:
        if event.get("type") == "shared_tick" and on_tick is not None:
            ops = float(event.get("ops") or 0)
            on_tick(host, str(event.get("step")), int(event.get("second") or 0), ops,
                    ops * int(per_host[0]["bs"]) / 1e6)
        if on_event is not None:
            on_event(host, event)

    together = run_together(bench, TEST, hosts, per_host, request.interval, control, passwords, events, on_sample)
    outcome.outcomes, outcome.offsets = together.outcomes, together.offsets
    outcome.error, outcome.started = together.error, together.started
    set_timing(outcome, per_host[0])
    store_total(bench, request, per_host[0], outcome, outcome.started)
    return outcome


def set_timing(outcome: SharedOutcome, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sweep's planned steps and times into `outcome`; the steps, in run order."""
    steps = sweep_steps(params)
    outcome.step_seconds, outcome.gap = float(params["runtime"]), float(params["gap"])
    outcome.planned_steps = len(steps)
    outcome.seconds = len(steps) * outcome.step_seconds + max(0, len(steps) - 1) * outcome.gap
    return steps


def _client_steps(bench: Any, outcome: SharedOutcome) -> dict[str, list[ClientStep]]:
    """step name -> the clients' figures, read back from their stored runs."""
    by_step: dict[str, list[ClientStep]] = {}
    for host, result in zip(outcome.hosts, outcome.outcomes, strict=True):
        if not isinstance(result, RunOutcome):
            continue
        detail = bench.find_run(result.run_id)
        if detail is None:
            continue
        # a client whose clock could not be read still adds its counts; only its start is not placed
        clock = outcome.offsets.get(host)
        ops = [r for r in detail.results if r.metric.endswith(".ops") and r.metadata.get("planned") is not None]
        for r in ops:   # O_DIRECT may have been refused on one client and not another
            if r.metadata.get("flags") and r.metadata["flags"] not in outcome.flags:
                outcome.flags.append(str(r.metadata["flags"]))
        series = {s.name: s for s in bench.run_series(result.run_id, [(f"rate.{r.metric}", "") for r in ops])}
        for r in ops:
            values = series.get(f"rate.{r.metric}")
            by_step.setdefault(str(r.metadata.get("step")), []).append(ClientStep(
                host, tuple(values.values) if values else (), int(r.metadata.get("bs") or 0),
                r.metadata.get("began_first") if clock else None, float(r.metadata["planned"]),
                clock.offset if clock else 0.0, clock.uncertainty if clock else 0.0,
                _cpu_busy(r.metadata), _number(r.metadata.get("engine_ceiling"))))
    return by_step


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _cpu_busy(meta: Mapping[str, Any]) -> float | None:
    """How busy the client's CPUs were in the step, as its agent measured: the whole host's share (/proc/stat,
    the kernel's writeback included) or, where larger or alone, the agent's own (user + system per CPU)."""
    shares = []
    with contextlib.suppress(KeyError, TypeError, ValueError):
        shares.append((float(meta["cpu_user"]) + float(meta["cpu_system"])) / max(1, int(meta["cpus"])))
    if isinstance(meta.get("host_cpu_busy"), (int, float)):
        shares.append(float(meta["host_cpu_busy"]))
    return min(1.0, max(shares)) if shares else None


def store_total(bench: Any, request: SharedRequest, params: Mapping[str, Any], outcome: SharedOutcome,
                start: float | None, note: str = "") -> None:
    """Store the TOTAL run of the clients' stored runs (outcome.total_run_id); note: a warning it carries."""
    by_step = _client_steps(bench, outcome)
    order = sweep_steps(dict(params, client_index=0))
    outcome.steps = [step_total(s["name"], s["clients"], s["threads"], by_step[s["name"]])
                     for s in order if len(by_step.get(s["name"], ())) == s["clients"]]
    outcome.knee = find_knee(outcome.steps) if outcome.steps else None
    member_ids = [r.run_id for r in outcome.outcomes if isinstance(r, RunOutcome)]
    if not member_ids:
        return   # no client run was stored: no total either
    runs = bench.store.runs
    tag = TAG_PREFIX + outcome.group
    count = len(outcome.hosts)
    name = f"TOTAL {params['test_dir']} ({count} client{'s' if count != 1 else ''})"[:200]
    run_id = runs.create(name, TEST, {"params": dict(params, client_index=None, client_name=None),
                                      "hosts": list(outcome.hosts), "members": member_ids,
                                      "member_status": member_status(outcome.outcomes),
                                      "interval": request.interval})
    outcome.total_run_id = run_id
    results, series = _total_figures(outcome, params, start)
    runs.add_results(run_id, results)
    runs.add_series(run_id, series)
    runs.add_events(run_id, [{"seq": 1, "t": time.time(), "type": "shared_total", "group": outcome.group,
                              "knee": outcome.knee.text if outcome.knee else "no complete step",
                              "offsets": {h: {"offset_s": o.offset, "uncertainty_s": o.uncertainty, "rtt_s": o.rtt}
                                          for h, o in outcome.offsets.items()}}])
    if note:
        runs.add_events(run_id, [{"seq": 2, "t": time.time(), "type": "warning", "message": note}])
    for member in [*member_ids, run_id]:
        runs.set_tags(member, [tag])
    failed = [r for r in outcome.outcomes if not (isinstance(r, RunOutcome) and r.status == RunStatus.DONE)]
    expected = len(order)
    missing = expected - len(outcome.steps)
    error = outcome.error or (f"{len(failed)} client run(s) did not finish" if failed else "")
    if missing and not error:
        error = f"{missing} of {expected} steps incomplete"
    runs.finish(run_id, RunStatus.DONE if not error else RunStatus.FAILED, error=error, engine="agent")
    if start is not None:   # the run's time is the sweep's, not the moment its totals were stored
        runs.set_times(run_id, _utc(start), _utc(sweep_end(start, params, outcome.steps) or time.time()))


def sweep_end(start: float, params: Mapping[str, Any], steps: Sequence[StepTotal]) -> float | None:
    """The end of the last complete step on the common clock (None: no step completed)."""
    order = {s["name"]: s["offset"] for s in sweep_steps(dict(params, client_index=0))}
    ends = [order[s.name] + float(params["runtime"]) for s in steps if s.name in order]
    return start + max(ends) if ends else None


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc)


def _total_figures(outcome: SharedOutcome, params: Mapping[str, Any],
                   start: float | None) -> tuple[list[ResultSample], list[SeriesData]]:
    results: list[ResultSample] = []
    series: list[SeriesData] = []
    every = float(params["runtime"]) + float(params["gap"])
    order = {s["name"]: s["offset"] for s in sweep_steps(dict(params, client_index=0))}
    for step in outcome.steps:
        meta = {"step": step.name, "clients": step.clients, "threads": step.threads, "total": True,
                "hosts": sorted(step.per_client_ops), "start_spread_s": step.start_spread,
                "start_spread_uncertainty_s": step.spread_uncertainty, "late_s": step.late,
                "bs": params["bs"], "rw": params["rw"], "flags": list(outcome.flags),
                "busiest_client": step.busiest[0] if step.busiest else None,
                "busiest_cpu_share": round(step.busiest[1], 3) if step.busiest else None,
                "client_limit": client_limit_text(step) if client_bound(step) else ""}
        results.append(ResultSample(TEST, f"{step.name}.ops", round(step.ops, 3), "op/s", meta,
                                    spread_of(list(step.total_ops), 1.0) if step.total_ops else None))
        results.append(ResultSample(TEST, f"{step.name}.mbps", round(step.mbps, 6), "MB/s", meta,
                                    spread_of(list(step.total_mbps), 1.0) if step.total_mbps else None))
        if step.start_spread is not None:
            results.append(ResultSample(TEST, f"{step.name}.start_spread", round(step.start_spread * 1e3, 3), "ms",
                                        dict(meta, uncertainty_ms=round(step.spread_uncertainty * 1e3, 3))))
        # seconds since the first step's start on the common clock, each point at the end of its second
        base = order.get(step.name, 0.0)
        t = [base + i + 1.0 for i in range(len(step.total_ops))]
        series.append(SeriesData(f"rate.{step.name}.ops", "", "op/s", t, list(step.total_ops)))
        series.append(SeriesData(f"rate.{step.name}.mbps", "", "MB/s", t, list(step.total_mbps)))
        for host, values in sorted(step.per_client_ops.items()):
            series.append(SeriesData(f"rate.{step.name}.ops", host, "op/s", t[:len(values)], list(values)))
    if outcome.steps:
        best = max(outcome.steps, key=lambda s: s.ops)
        knee = outcome.knee or Knee(None, "")
        results.append(ResultSample(TEST, "sweep.best_ops", round(best.ops, 3), "op/s",
                                    {"step": best.name, "knee": knee.step, "knee_text": knee.text,
                                     "step_seconds": every, "runtime": params["runtime"], "start": start,
                                     "end": sweep_end(start, params, outcome.steps) if start is not None else None,
                                     "flags": list(outcome.flags)}))
    return results, series
