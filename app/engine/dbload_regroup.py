"""A database load from several client hosts whose workbench went away: its TOTAL run made once the last client
run is collected, as the run never left would have made it (app.engine.dbload_multi).

The client runs carry their group and their index in their parameters, so the re-attach finds its siblings in
the store. The TOTAL is made when none of them is left running or with a lost link, and only once; again only
when it was made while one of them had lost its link (app.engine.client_groups), keeping the start's clock
offsets. After a workbench that went away, the clients' clock offsets measured at the start are not known any
more: the TOTAL says so instead of showing none. The database server's monitor, when there was one, is tied to
the TOTAL as well.
"""
from __future__ import annotations

import logging
from typing import Any

from app.engine.client_groups import MAKING, client_runs, replaced_note, run_params, stale_totals, total_offsets
from app.engine.dbload_multi import TAG_PREFIX, TEST, DbMultiOutcome, DbMultiRequest, store_total
from app.engine.dbload_reattach import UNFINISHED, aware, monitor_of, stored_watch
from app.engine.dbload_watch import record
from app.engine.orchestrator import RunOutcome
from storage.records import RunStatus

log = logging.getLogger(__name__)


def siblings(workbench: Any, run: Any) -> list[Any]:
    """The client runs of `run`'s several-client load (itself included), by client index; [] for a lone load."""
    return client_runs(workbench, run, TEST)


def rebuild_total(workbench: Any, run_id: int) -> int | None:
    """Once every client run of `run_id`'s group is stored, store their TOTAL (and tie the server's monitor
    to it); its id, or None when it is not time yet, was done before, or `run_id` is not such a client."""
    with MAKING:
        return _rebuild(workbench, run_id)


def _rebuild(workbench: Any, run_id: int) -> int | None:
    detail = workbench.store.runs.get(run_id)
    if detail is None:
        return None
    clients = siblings(workbench, detail.run)
    if len(clients) < 2 or any(run.status in UNFINISHED for run in clients):
        return None
    group = str(run_params(detail.run).get("group"))
    replaced = stale_totals(workbench, TAG_PREFIX + group, clients)
    if replaced is None:
        return None
    first = clients[0]
    hosts = tuple(run.host_name for run in clients)
    params = run_params(first)
    request = DbMultiRequest(hosts=hosts, params=params,
                             interval=float((first.parameters or {}).get("interval") or 1.0))
    outcomes: list[Any] = [RunOutcome(run.id, run.host_name, RunStatus(run.status), run.error or "", 0)
                           for run in clients]
    outcome = DbMultiOutcome(group, hosts, outcomes,
                             database=str(params.get("database") or params.get("key_prefix") or ""))
    outcome.started = min(aware(run.started_at).timestamp() for run in clients)
    # a TOTAL made again kept the offsets its workbench measured at the start; after a killed workbench they are lost
    outcome.offsets = total_offsets(workbench, replaced, "dbload_total")
    store_total(workbench, request, params, outcome,
                note=replaced_note(replaced) if replaced else
                "made after the workbench that ran it went away: the clients' clock offsets measured at the start "
                "were lost with it",
                finished=max((aware(run.finished_at).timestamp() for run in clients if run.finished_at), default=None))
    total = outcome.total_run_id
    if total is None:
        return None
    _tie_server(workbench, first, total, clients[0].id)
    for old in replaced:    # the clients' runs stay; only the sum made without one of them goes
        workbench.delete_run(old)
    log.info("dbload group %s: TOTAL stored as run %s after re-attach%s", group, total,
             f", replacing {replaced}" if replaced else "")
    return total


def _tie_server(workbench: Any, client: Any, total: int, timing_run: int) -> None:
    monitor = monitor_of(workbench, client)
    if monitor is None or monitor.status in UNFINISHED:
        return
    record(workbench, stored_watch(workbench, monitor), [total], timing_run=timing_run)
