"""The client runs of a run from several client hosts (a database load, a shared-storage sweep), found again in
the store after the workbench that started them went away: their TOTAL is made once the last one is collected
(app.engine.dbload_regroup, app.engine.shared_regroup).

The client runs carry their group and their index in their parameters; the TOTAL run, once made, carries the
group's tag and each client run's status at that moment. A TOTAL made while a client had lost its link (the
workbench stayed) is made again once that client is collected, and replaces the first.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from app.engine.dbload_reattach import UNFINISHED, aware
from remote.clock_offset import ClockOffset

NEAR = timedelta(minutes=10)   # the clients start together: their runs are made within seconds of each other
# the window collects the clients in workers of their own: the last two may end together, one TOTAL is made
MAKING = threading.Lock()


def run_params(run: Any) -> dict[str, Any]:
    """The agent's parameters a run was stored with."""
    return dict((run.parameters or {}).get("params") or {})


def client_runs(workbench: Any, run: Any, test: str) -> list[Any]:
    """The client runs of `run`'s group of `test` (itself included), by client index; [] for a run that is no
    client of such a group."""
    params = run_params(run)
    group = str(params.get("group") or "")
    if run.test != test or not params.get("wait_for_start") or not group:
        return []
    start = aware(run.started_at)
    found = [other for other in workbench.store.runs.list(test=test, since=start - NEAR, until=start + NEAR)
             if run_params(other).get("wait_for_start") and str(run_params(other).get("group") or "") == group]
    return sorted(found, key=lambda other: int(run_params(other).get("client_index") or 0))


def member_status(outcomes: Iterable[Any]) -> dict[str, str]:
    """{client run id: its status} as a TOTAL is made, kept in the TOTAL's parameters (stale_totals)."""
    return {str(r.run_id): str(getattr(r.status, "value", r.status)) for r in outcomes
            if getattr(r, "run_id", None) is not None}


def stale_totals(workbench: Any, tag: str, clients: Iterable[Any]) -> list[int] | None:
    """The TOTAL runs of the group tagged `tag` that a TOTAL made now replaces: [] when there is none yet; all of
    them when the newest was made while a client now stored was still running or had lost its link; None when
    the group's TOTAL stands (made with every client as it is now, or by a version that did not say)."""
    totals = [run for run in workbench.store.runs.list(tag=tag) if run.host_name.startswith("TOTAL ")]
    if not totals:
        return []
    seen = (max(totals, key=lambda run: run.id).parameters or {}).get("member_status") or {}
    if any(seen.get(str(run.id)) in UNFINISHED and run.status not in UNFINISHED for run in clients):
        return sorted(run.id for run in totals)
    return None


def total_offsets(workbench: Any, run_ids: Iterable[int], event_type: str) -> dict[str, ClockOffset]:
    """The clients' clock offsets measured at the start, as the TOTAL runs `run_ids` kept them ({} if none)."""
    for run_id in run_ids:
        for event in workbench.store.runs.events(run_id):
            if event.get("type") == event_type and event.get("offsets"):
                return {host: ClockOffset(host, float(kept.get("offset_s") or 0.0),
                                          float(kept.get("uncertainty_s") or 0.0), float(kept.get("rtt_s") or 0.0), 1)
                        for host, kept in event["offsets"].items()}
    return {}


def replaced_note(replaced: Iterable[int]) -> str:
    runs = ", ".join(str(r) for r in replaced)
    return (f"made again once every client was collected: replaces run {runs}, made while a client's link was "
            "lost")
