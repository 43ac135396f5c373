"""Re-attaching a database load run ties the database server's telemetry to it, as a run never left would.

A load run whose target is an inventory host has a monitor run on that host beside it (app.engine.dbload_watch),
tagged with the load it watches (parameters: watching=dbload, the client hosts, the several-client group). When
the workbench went away, both are left running. Re-attaching the load run takes its monitor too: the monitor is
followed until the load run is stored (so it covers every step), then both are tied: the load run gets the
"target_telemetry" event and the server's figures per step, the monitor the names of its load runs.

The monitor of a load still running is not collected on its own (orphan_candidates leaves it to its load run):
stopped alone, it would end before the load does.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from app.engine.dbload_watch import TEST, WatchResult, record
from app.engine.orchestrator import RunControl
from remote.run_session import MONITOR
from storage.records import RunStatus

log = logging.getLogger(__name__)

NEAR = timedelta(minutes=10)   # a load run starts seconds after its monitor; the window allows a slow connect
UNFINISHED = (RunStatus.RUNNING.value, RunStatus.LOST_LINK.value)


def _params(run: Any) -> dict[str, Any]:
    return dict((run.parameters or {}).get("params") or {})


def is_watch(run: Any) -> bool:
    """Whether a run is the monitor of a database server under load."""
    return run.test == MONITOR and _params(run).get("watching") == TEST


def _watches(monitor: Any, load: Any) -> bool:
    """Whether `monitor` watched the server of `load` (same client, same group, started about together)."""
    tag, params = _params(monitor), _params(load)
    group = str(params.get("group") or "") if params.get("wait_for_start") else ""   # one client's: no group
    if load.host_name not in (tag.get("clients") or []) or str(tag.get("group") or "") != group:
        return False
    return abs(aware(load.started_at) - aware(monitor.started_at)) <= NEAR


def aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _monitors_near(workbench: Any, load: Any) -> list[Any]:
    start = aware(load.started_at)
    return [run for run in workbench.store.runs.list(test=MONITOR, since=start - NEAR, until=start + NEAR)
            if is_watch(run) and _watches(run, load)]


def monitor_of(workbench: Any, load: Any) -> Any | None:
    """The monitor run that watched load run `load`'s server (the nearest in start time), or None."""
    if load.test != TEST:
        return None
    found = _monitors_near(workbench, load)
    start = aware(load.started_at)
    return min(found, key=lambda run: abs(aware(run.started_at) - start)) if found else None


def loads_of(workbench: Any, monitor: Any) -> list[Any]:
    """The load runs whose server `monitor` watched."""
    if not is_watch(monitor):
        return []
    start = aware(monitor.started_at)
    runs = workbench.store.runs.list(test=TEST, since=start - NEAR, until=start + NEAR)
    return [run for run in runs if _watches(monitor, run)]


def waits_for_its_load(workbench: Any, run: Any) -> bool:
    """A server monitor whose load run is still to be collected: collected with it, not alone."""
    return is_watch(run) and any(load.status in UNFINISHED for load in loads_of(workbench, run))


def tie(workbench: Any, monitor_id: int) -> list[int]:
    """Tie a stored monitor to its stored load runs not tied yet, as a run never left would be; their ids."""
    detail = workbench.store.runs.get(monitor_id)
    if detail is None or detail.run.status in UNFINISHED:
        return []
    loads = [run for run in loads_of(workbench, detail.run) if run.status not in UNFINISHED
             and not any(e.get("type") == "target_telemetry" for e in workbench.store.runs.events(run.id))]
    if not loads:
        return []
    ids = sorted(run.id for run in loads)
    record(workbench, stored_watch(workbench, detail.run), ids, timing_run=ids[0] if len(ids) > 1 else None)
    return ids


def stored_watch(workbench: Any, monitor: Any) -> WatchResult:
    """A stored monitor run as the watch of its server (an error when no sample came)."""
    samples = any(s.values for s in workbench.store.runs.series(monitor.id))
    return WatchResult(monitor.host_name, monitor.id, "" if samples else "no sample came from the target")


class MonitorFollower:
    """The load run's monitor re-attached in a thread of its own, followed until stop() (the load run stored)."""

    def __init__(self, attach: Callable[..., Any], monitor_id: int, control: Any) -> None:
        self.monitor_id = monitor_id
        self.control = control
        self.error: BaseException | None = None
        self._attach = attach
        self._thread = threading.Thread(target=self._run, name=f"dbload-target-reattach-{monitor_id}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._attach(self.monitor_id, self.control)
        except BaseException as exc:   # the server unreachable now: the load run is stored all the same
            log.debug("re-attaching the server's monitor %s failed", self.monitor_id, exc_info=True)
            self.error = exc

    def stop(self, timeout: float = 120.0) -> None:
        """The load is stored: the monitor is collected now and covers it."""
        self.control.stop()
        self._thread.join(timeout)

    def leave(self, timeout: float = 120.0) -> None:
        """The load went on without us: the monitor is left running beside it, to be collected with it later."""
        self.control.leave()
        self._thread.join(timeout)


class ServerAlongside:
    """Around the re-attach of one load run: its server's monitor followed meanwhile, collected after, tied.

    attach(run_id, control, keep_open) re-attaches a run (app.engine.attach.attach_run)."""

    def __init__(self, workbench: Any, load: Any, follow: bool, attach: Callable[[int, Any, bool], Any]) -> None:
        self.workbench = workbench
        self.attach = attach
        try:
            self.monitor = monitor_of(workbench, load)
        except Exception:   # the tie is a bonus: never in the way of collecting the load run
            log.debug("looking for the server's monitor of run %s failed", load.id, exc_info=True)
            self.monitor = None
        self.follow = follow
        self.follower: MonitorFollower | None = None

    def connected(self) -> None:
        """The load run's host answered: follow the monitor beside it from now. Not before: were the load run's
        host unreachable, the monitor would be collected now and miss the rest of the load it watches."""
        if self.monitor is not None and self.monitor.status in UNFINISHED and self.follow and self.follower is None:
            self.follower = MonitorFollower(lambda run_id, control: self.attach(run_id, control, True),
                                            self.monitor.id, RunControl())

    def done(self, stored: bool) -> None:
        """The load run's attach ended (stored: it is stored now); collect the monitor and tie the two. A load
        run not stored (its host unreachable, left running) leaves its monitor running as well, for later."""
        if self.monitor is None or (self.follower is None and not stored):
            return
        if self.follower is not None and not stored:
            # the load's host answered, then its link was lost again: the load goes on, and so must its monitor
            self.follower.leave()
            return
        if self.follower is not None:
            self.follower.stop()
        elif stored and self.monitor.status in UNFINISHED:
            try:   # the load is over: the open-ended monitor is collected at once and covers it
                self.attach(self.monitor.id, RunControl(), False)
            except Exception:
                log.debug("collecting the server's monitor %s failed", self.monitor.id, exc_info=True)
        if stored:
            tie(self.workbench, self.monitor.id)
