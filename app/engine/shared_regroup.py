"""A shared-storage sweep from several client hosts whose workbench went away: its TOTAL run made once the last
client run is collected, as a sweep never left would have made it (app.engine.shared_run).

The client runs carry their group and their index in their parameters, so the re-attach finds its siblings in
the store. The TOTAL is made when none of them is left running or with a lost link, and only once; again only
when it was made while one of them had lost its link (app.engine.client_groups), keeping the start's clock
offsets. Each client's per-second counts are summed as they are; what needs the clients' clocks (how far apart
their first requests came) uses, after a workbench that went away, the clock offset measured when that client
run was collected (its "clock" event), since the offsets measured at the start were lost with the workbench:
the TOTAL says so.
"""
from __future__ import annotations

import logging
from typing import Any

from app.engine.client_groups import MAKING, client_runs, replaced_note, run_params, stale_totals, total_offsets
from app.engine.dbload_reattach import UNFINISHED
from app.engine.orchestrator import RunOutcome
from app.engine.shared_run import TAG_PREFIX, TEST, SharedOutcome, SharedRequest, set_timing, store_total
from remote.clock_offset import ClockOffset
from storage.records import RunStatus

log = logging.getLogger(__name__)

NOTE = ("made after the workbench that ran it went away: the clients' clock offsets measured at the start were "
        "lost with it; how far apart the clients started uses the offsets measured when each was collected")


def collected_offset(workbench: Any, run: Any) -> ClockOffset | None:
    """The clock offset measured when `run` was collected; zero for this computer's own runs (no "clock" event
    and no word that the clock could not be read); None when it could not be read."""
    events = workbench.store.runs.events(run.id)
    clocks = [e for e in events if e.get("type") == "clock" and isinstance(e.get("offset_s"), (int, float))]
    if clocks:
        last = clocks[-1]
        return ClockOffset(run.host_name, float(last["offset_s"]), float(last.get("uncertainty_s") or 0.0),
                           float(last.get("rtt_s") or 0.0), 1)
    unread = any(e.get("type") == "warning" and "clock could not be read" in str(e.get("message") or "")
                 for e in events)
    return None if unread else ClockOffset(run.host_name, 0.0, 0.0, 0.0, 1)


def rebuild_total(workbench: Any, run_id: int) -> int | None:
    """Once every client run of `run_id`'s sweep is stored, store their TOTAL; its id, or None when it is not
    time yet, was done before, or `run_id` is not such a client."""
    with MAKING:
        return _rebuild(workbench, run_id)


def _rebuild(workbench: Any, run_id: int) -> int | None:
    detail = workbench.store.runs.get(run_id)
    if detail is None:
        return None
    clients = client_runs(workbench, detail.run, TEST)
    params = run_params(detail.run)
    wanted = max((int(n) for n in params.get("clients") or [1]), default=1)
    indexes = [run_params(run).get("client_index") for run in clients]
    # every client the sweep was planned with is stored (the workbench makes them all before any starts)
    if len(clients) < wanted or indexes != list(range(len(clients))):
        return None
    if any(run.status in UNFINISHED for run in clients):
        return None
    group = str(params.get("group"))
    replaced = stale_totals(workbench, TAG_PREFIX + group, clients)
    if replaced is None:
        return None
    first = clients[0]
    hosts = tuple(run.host_name for run in clients)
    base = dict(run_params(first), client_index=0, client_name=None)
    request = SharedRequest(hosts=hosts, params=base,
                            interval=float((first.parameters or {}).get("interval") or 1.0))
    outcomes: list[Any] = [RunOutcome(run.id, run.host_name, RunStatus(run.status), run.error or "", 0)
                           for run in clients]
    outcome = SharedOutcome(group, hosts, outcomes)
    outcome.offsets = {run.host_name: offset for run in clients
                       if (offset := collected_offset(workbench, run)) is not None}
    # a TOTAL made again keeps the offsets its workbench measured at the start, where it has them
    outcome.offsets.update(total_offsets(workbench, replaced, "shared_total"))
    steps = set_timing(outcome, base)
    store_total(workbench, request, base, outcome, _start(workbench, clients, outcome, steps),
                note=replaced_note(replaced) if replaced else NOTE)
    total = outcome.total_run_id
    if total is not None:
        for old in replaced:    # the clients' runs stay; only the sum made without one of them goes
            workbench.delete_run(old)
        log.info("shared-storage group %s: TOTAL stored as run %s after re-attach%s", group, total,
                 f", replacing {replaced}" if replaced else "")
    return total


def _start(workbench: Any, clients: list[Any], outcome: SharedOutcome, steps: list[dict[str, Any]]) -> float | None:
    """The sweep's common start on this computer's clock, from the steps' planned starts the clients reported
    (each on its host's clock, less that host's offset and the step's place in the sweep)."""
    offsets = {s["name"]: float(s["offset"]) for s in steps}
    starts = []
    for run in clients:
        clock = outcome.offsets.get(run.host_name)
        found = workbench.find_run(run.id)
        if clock is None or found is None:
            continue
        for r in found.results:
            planned, step = r.metadata.get("planned"), str(r.metadata.get("step"))
            if r.metric.endswith(".ops") and isinstance(planned, (int, float)) and step in offsets:
                starts.append(clock.to_ours(float(planned)) - offsets[step])
    return min(starts) if starts else None
