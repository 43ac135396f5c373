"""The dbload test from N client hosts against one database server: one start instant, totals stored.

As the shared-storage test (app.engine.shared_run): each client runs the test as an ordinary run with
wait_for_start; client 0 makes and fills the scratch database (Redis: writes the keys under one shared key
prefix), then says "shared_ready"; the others say it at once. Once all are ready, each gets the same instant
in its own clock (a file "go"), and every step starts at that instant + its offset
(remote.agent.dbload_together). Client 0 drops the database (deletes the keys) at the end, after the others'
sessions are gone; the others load it as it is (reuse_database) and never drop it.
Afterwards the clients' per-second figures are summed (app.engine.dbload_totals) and stored as one more
run, host "TOTAL <target> (N clients)", with each step's start spread from the clients' stored events.
"""
from __future__ import annotations

import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from app.engine.client_groups import member_status
from app.engine.clients_together import TogetherOutcome, TogetherRequest, client_name, run_together
from app.engine.dbload_totals import KNEE_RULE, DbLoadTotal, dbload_total
from app.engine.dbload_watch import TargetWatch, WatchResult, record, start_watch
from app.engine.orchestrator import EventCallback, RunControl, RunOutcome, RunRequestError, SampleCallback
from app.engine.shared_totals import CLIENT_BUSY
from app.summary.dbload_series import dbload_of
from remote.agent import benches
from storage.records import ResultSample, RunStatus

TEST = "dbload"
# the share of a step a client's load tool waited for a CPU (per thread) from which other work on its host set
# the pace (on an idle host under 1 %)
CLIENT_STARVED = 0.25
TAG_PREFIX = "dbload-"
SET_BY_WORKBENCH = ("client_index", "client_name", "group", "wait_for_start")


@dataclass(frozen=True)
class DbMultiRequest(TogetherRequest):
    """params: the dbload test's parameters, the same for every client."""


@dataclass
class DbMultiOutcome(TogetherOutcome):
    total: DbLoadTotal | None = None
    spreads: dict[int, float] = field(default_factory=dict)  # step -> seconds between first and last client start
    cpu: dict[int, dict[str, float]] = field(default_factory=dict)   # step -> host -> its load tool's CPU share
    waits: dict[int, dict[str, float]] = field(default_factory=dict)  # step -> host -> its tool's wait for a CPU
    database: str = ""
    target: WatchResult | None = None                        # the database server's telemetry, when watched


def plan(request: DbMultiRequest, group: str) -> list[dict[str, Any]]:
    """Each client host's parameters (client 0 makes the database, the others reuse it); RunRequestError."""
    hosts = list(request.hosts)
    if len(hosts) < 2:
        raise RunRequestError("dbload: several client hosts need at least two")
    if len(set(hosts)) != len(hosts):
        raise RunRequestError("dbload: a host is named twice; each client host once")
    params = dict(request.params)
    for key in SET_BY_WORKBENCH:
        if key in params:
            raise RunRequestError(f"dbload: {key} is set by the workbench, not by hand")
    try:
        base = benches.validate(TEST, dict(params, wait_for_start=True, group=group))
    except ValueError as exc:
        raise RunRequestError(str(exc)) from None
    database = base["database"] or f"benchbay_dbload_m{group}"
    shared: dict[str, Any] = {"database": database}
    if base["engine"] == "redis":   # every client loads the keys client 0 writes under one prefix
        shared = {"key_prefix": base["key_prefix"] or f"benchbay:m{group}:"}
    out = []
    for index, host in enumerate(hosts):
        own = dict(params, wait_for_start=True, group=group, client_index=index,
                   client_name=client_name(index, host), reuse_database=bool(base["reuse_database"]) or index > 0,
                   **shared)
        out.append(own)
    return out


def run_dbload_multi(bench: Any, request: DbMultiRequest, control: RunControl | None = None,
                     on_event: EventCallback | None = None,
                     passwords: Mapping[str, str | None] | None = None,
                     on_sample: SampleCallback | None = None) -> DbMultiOutcome:
    """Run the sweep from every client host together against one target; store the runs and the total; blocks.
    on_sample: each client's telemetry and the target's (when it is an inventory host), as they come."""
    control = control or RunControl()
    passwords = passwords or {}
    group = secrets.token_hex(4)
    per_host = plan(request, group)
    hosts = tuple(bench.get_host(h).name for h in request.hosts)
    watch = start_watch(bench, request.params, hosts, request.interval, on_sample, group)   # the server's telemetry
    outcome = DbMultiOutcome(group, hosts, [None] * len(hosts),
                             database=str(per_host[0].get("database") or per_host[0].get("key_prefix") or ""))
    try:
        together = run_together(bench, TEST, hosts, per_host, request.interval, control, passwords, on_event,
                                on_sample)
    except BaseException:
        _drop_watch(bench, watch)
        raise
    watched = watch.stop() if watch is not None else None
    outcome.outcomes, outcome.offsets = together.outcomes, together.offsets
    outcome.error, outcome.started = together.error, together.started
    store_total(bench, request, per_host[0], outcome)
    if watched is not None:
        members = [r.run_id for r in outcome.outcomes if isinstance(r, RunOutcome)]
        if members:
            total = [outcome.total_run_id] if outcome.total_run_id is not None else []
            record(bench, watched, members + total, timing_run=members[0])
            outcome.target = watched
        elif watched.run_id is not None:
            bench.delete_run(watched.run_id)
    return outcome


def _drop_watch(bench: Any, watch: TargetWatch | None) -> None:
    """Nothing ran: the target's telemetry is not kept."""
    if watch is not None:
        ended = watch.stop()
        if ended.run_id is not None:
            bench.delete_run(ended.run_id)


def step_spreads(events_by_host: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[int, float]:
    """step -> seconds from the first client's start to the last's, from their stored "dbload_step_start"
    events (their times on the workbench's clock); only steps every client started."""
    starts: dict[int, dict[str, float]] = {}
    for host, events in events_by_host.items():
        for event in events:
            if event.get("type") == "dbload_step_start" and isinstance(event.get("t"), (int, float)):
                starts.setdefault(int(event["step"]), {})[host] = float(event["t"])
    return {step: max(at.values()) - min(at.values()) for step, at in sorted(starts.items())
            if len(at) == len(events_by_host)}


def store_total(bench: Any, request: DbMultiRequest, params: Mapping[str, Any], outcome: DbMultiOutcome,
                note: str = "", finished: float | None = None) -> None:
    """Store the TOTAL run of the clients' stored runs (outcome.total_run_id). note: a warning it carries;
    finished: its end (now when not given)."""
    member = {h: r for h, r in zip(outcome.hosts, outcome.outcomes, strict=True) if isinstance(r, RunOutcome)}
    loads = {}
    for host, result in member.items():
        detail = bench.find_run(result.run_id)
        load = dbload_of(detail.results) if detail is not None else None
        if load is not None:
            loads[host] = load
        for r in detail.results if detail is not None else ():
            step = r.metadata.get("step")
            if r.metric != "ops_per_s" or not isinstance(step, int):
                continue
            busy, waited = tool_busy(r.metadata), tool_wait(r.metadata)
            if busy is not None:
                outcome.cpu.setdefault(step, {})[host] = busy
            if waited is not None:
                outcome.waits.setdefault(step, {})[host] = waited
    if len(loads) == len(outcome.hosts):
        outcome.total = dbload_total(loads)
        outcome.spreads = step_spreads({h: bench.run_events(member[h].run_id) for h in outcome.hosts})
    if not member:
        return
    runs = bench.store.runs
    target = str(params.get("target") or "127.0.0.1")
    count = len(outcome.hosts)
    run_id = runs.create(f"TOTAL {target} ({count} clients)"[:200], TEST,
                         {"params": {k: v for k, v in params.items() if k not in (*SET_BY_WORKBENCH, "password")},
                          "hosts": list(outcome.hosts), "members": [r.run_id for r in member.values()],
                          "member_status": member_status(member.values()), "interval": request.interval})
    outcome.total_run_id = run_id
    runs.add_results(run_id, total_results(outcome, target))
    runs.add_events(run_id, [{"seq": 1, "t": time.time(), "type": "dbload_total", "group": outcome.group,
                              "knee": outcome.total.knee_text() if outcome.total else "no complete step",
                              "start_spread_s": {str(k): v for k, v in outcome.spreads.items()},
                              "offsets": {h: {"offset_s": o.offset, "uncertainty_s": o.uncertainty}
                                          for h, o in outcome.offsets.items()}}])
    if note:
        runs.add_events(run_id, [{"seq": 2, "t": time.time(), "type": "warning", "message": note}])
    for run in [*[r.run_id for r in member.values()], run_id]:
        runs.set_tags(run, [TAG_PREFIX + outcome.group])
    failed = [r for r in outcome.outcomes if not (isinstance(r, RunOutcome) and r.status == RunStatus.DONE)]
    error = outcome.error or (f"{len(failed)} client run(s) did not finish" if failed else "")
    if not error and (outcome.total is None or not outcome.total.steps):
        error = "no step was run by every client"
    runs.finish(run_id, RunStatus.DONE if not error else RunStatus.FAILED, error=error, engine="agent")
    if outcome.started is not None:
        runs.set_times(run_id, _utc(outcome.started), _utc(finished if finished is not None else time.time()))


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, timezone.utc)


def total_results(outcome: DbMultiOutcome, target: str) -> list[ResultSample]:
    """The TOTAL run's figures: per step ops_per_s (the per-second totals, shares, start spread), knee_clients."""
    total = outcome.total
    if total is None:
        return []
    out = []
    for step in total.steps:
        meta = {"step": step.step, "clients": step.clients, "total": True, "target": target,
                "hosts": list(total.hosts), "per_second": list(step.per_second), "cv": step.cv,
                "shares": dict(step.shares), "short_seconds": dict(step.short), "shares_text": step.shares_text(),
                "start_spread_s": outcome.spreads.get(step.step), "client_cpu_busy": outcome.cpu.get(step.step, {}),
                "client_cpu_wait": outcome.waits.get(step.step, {}),
                "client_limit": client_limit(outcome, step.step)}
        out.append(ResultSample(TEST, "ops_per_s", round(step.ops, 3), "ops/s", meta))
    knee = next((s for s in total.steps if s.step == total.knee), None)
    last = total.steps[-1] if total.steps else None
    if last is not None:
        value = (knee or last).clients
        out.append(ResultSample(TEST, "knee_clients", value, "clients", {
            "knee": total.knee, "rule": KNEE_RULE, "step": (knee or last).step, "clients": value, "total": True,
            "note": "" if knee else f"no knee up to {value} clients in all", "knee_text": total.knee_text()}))
    return out


def tool_busy(meta: Mapping[str, Any]) -> float | None:
    """The share of the CPU it could use a client's load tool used over a step (the agent's tool_cpu_busy);
    for runs stored before the agent measured it, the client host's whole CPU (host_cpu_busy)."""
    busy = _share(meta, "tool_cpu_busy")
    return busy if busy is not None else _share(meta, "host_cpu_busy")


def tool_wait(meta: Mapping[str, Any]) -> float | None:
    """The share of a step a client's load tool waited for a CPU, per thread it runs at once (the agent's
    tool_cpu_wait), or None (not measured)."""
    return _share(meta, "tool_cpu_wait")


def _share(meta: Mapping[str, Any], key: str) -> float | None:
    value = meta.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def limit_text(host: str, share: float) -> str:
    return f"{host}'s load tool used {share * 100:.0f} % of the CPU it could use"


def starved_text(host: str, share: float) -> str:
    return f"{host}'s load tool waited for a CPU {share * 100:.0f} % of the step (other work on {host} had it)"


def limit_note(busy: Mapping[str, float], waits: Mapping[str, float]) -> str:
    """Why a step's total may be a client's limit: the client whose tool was out of CPU (the busiest; of
    equals the first), else the one whose tool waited longest for a CPU while other work ran; "" when none
    (a machine busy with other work whose tool still got the CPU it asked for is not the client's limit)."""
    if busy:
        host, share = max(busy.items(), key=lambda item: item[1])
        if share >= CLIENT_BUSY:
            return limit_text(host, share)
    if waits:
        host, share = max(waits.items(), key=lambda item: item[1])
        if share >= CLIENT_STARVED:
            return starved_text(host, share)
    return ""


def client_limit(outcome: DbMultiOutcome, step: int) -> str:
    """ "c2's load tool used 93 % of the CPU it could use", or "c2's load tool waited for a CPU 40 % of the
    step (…)", when a client's tool was out of CPU in the step, else "" (limit_note)."""
    return limit_note(outcome.cpu.get(step, {}), outcome.waits.get(step, {}))
