"""The client runs of a run from several client hosts (a database load, a shared-storage sweep), found again in
the store after the workbench that started them went away: their TOTAL is made once the last one is collected
(app.engine.dbload_regroup, app.engine.shared_regroup).

The client runs carry their group and their index in their parameters; the TOTAL run, once made, carries the
group's tag.
"""
from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from app.engine.dbload_reattach import aware

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


def has_total(workbench: Any, tag: str) -> bool:
    """Whether the group tagged `tag` has its TOTAL run already."""
    return any(run.host_name.startswith("TOTAL ") for run in workbench.store.runs.list(tag=tag))
