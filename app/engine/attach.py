"""Re-attaching to runs whose workbench went away (killed, crashed, a laptop that slept too long).

The host side of a run outlives its workbench until the run's deadline (its expected end plus a
margin; the workbench renews it while connected). A run stored as "running" whose owner lock is free
(app.engine.lock) lost its workbench; re-attaching takes the lock, reconnects, renews the deadline at
once, reads the run's files again from offset 0 (nothing of them is stored before the end, so no
sample can be stored twice or go missing) and stores the run as if it had never been away. When the
host no longer has the run directory, the run is stored as "interrupted" with what was stored.

Who does it: `benchbay runs attach ID` (follows the run to its end); `benchbay run` and
`benchbay monitor` at start (only collect runs already over on the host, and say which are still
running); the window at start-up (follows every one to its end, in workers).
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.engine import dbload_regroup, shared_regroup
from app.engine.dbload_reattach import ServerAlongside, tie, waits_for_its_load
from app.engine.lock import RunBusy, claim, this_machine
from app.engine.orchestrator import (
    EventCallback,
    LeftRunning,
    RunControl,
    RunOutcome,
    RunRequest,
    RunRequestError,
    RunServices,
    SampleCallback,
    drive_run,
    new_session,
    validate_request,
)
from app.engine.pool import START_GATE
from app.errors import USER_ERRORS, AppError
from remote.run_session import DEFAULT_MARGIN, MONITOR, RunSession
from storage.errors import NotFound
from storage.records import FINAL_STATUSES, AttachableRun, RunStatus

log = logging.getLogger(__name__)

LEFT_RUNNING = RunStatus.RUNNING.value   # still running on its host: left for a later attach
NOT_ATTACHED = "not attached"   # the host could not be reached now (or needs a password)
FINAL = tuple(status.value for status in FINAL_STATUSES)


@dataclass(frozen=True)
class AttachOutcome:
    run_id: int
    host: str
    status: str      # the stored final status, or LEFT_RUNNING / NOT_ATTACHED
    message: str     # one line for the user
    samples: int = 0


def _running(workbench: RunServices, run_id: int) -> AttachableRun | None:
    return next((run for run in workbench.store.runs.running(lost_link=True) if run.id == run_id), None)


def _request(run: AttachableRun) -> RunRequest:
    parameters = run.parameters
    duration = parameters.get("duration")
    return RunRequest(host=run.host_name, test=run.test, params=dict(parameters.get("params") or {}),
                      interval=float(parameters.get("interval") or 1.0),
                      duration=float(duration) if duration is not None else None,
                      margin=float(parameters.get("margin") or DEFAULT_MARGIN))


def attach_run(
    workbench: RunServices,
    run_id: int,
    follow: bool = True,
    force: bool = False,
    control: RunControl | None = None,
    on_sample: SampleCallback | None = None,
    on_event: EventCallback | None = None,
    password: str | None = None,
    keep_open: bool = False,
) -> AttachOutcome:
    """Take over run `run_id` and store it (follow: to its end; else only when it is over on the host).
    keep_open: an open-ended monitor is followed until control.stop() (else collected at once).

    Raises NotFound / AppError when there is nothing to attach to, RunBusy when a live workbench
    drives it, and what Workbench.connect raises when the host cannot be reached (the run stays
    running then, to try again before its deadline).
    """
    run = _running(workbench, run_id)
    if run is None:
        detail = workbench.store.runs.get(run_id)
        if detail is None:
            raise NotFound(f"no run with id {run_id}: see `benchbay runs list`")
        raise AppError(f"run {run_id} is {detail.run.status}, not running or lost link: there is nothing to "
                       "re-attach to")
    lock = claim(run.id, run.owner, workbench.home, force)
    try:
        run = _running(workbench, run_id)   # again, under the lock: it may have been stored meanwhile
        if run is None:
            status = workbench.store.runs.get(run_id).run.status
            return AttachOutcome(run_id, "", status, f"run {run_id} was stored meanwhile ({status})")
        workbench.store.runs.set_owner(run.id, lock.owner if lock else None)
        # a database load's server monitor: followed beside it, then tied to it (app.engine.dbload_reattach)
        server = ServerAlongside(workbench, run, follow, lambda monitor, watch, keep: attach_run(
            workbench, monitor, follow=True, control=watch, password=None, keep_open=keep))
        outcome = None
        try:
            outcome = _attach(workbench, run, follow, control or RunControl(), on_sample, on_event, password,
                              keep_open, connected=server.connected)
        finally:
            server.done(outcome is not None and outcome.status in FINAL)
        if outcome.status in FINAL:
            tie(workbench, run.id)   # a server monitor collected after its load runs: tied now
            total = _rebuild_total(workbench, run.id)
            if total is not None:
                outcome = replace(outcome, message=f"{outcome.message}; every client of its load is stored: "
                                                   f"their TOTAL is run {total}")
        return outcome
    finally:
        if lock:
            lock.release()


def _rebuild_total(workbench: RunServices, run_id: int) -> int | None:
    """The TOTAL of a several-client database load or shared-storage sweep, once its last client is stored."""
    try:
        return dbload_regroup.rebuild_total(workbench, run_id) or shared_regroup.rebuild_total(workbench, run_id)
    except Exception:   # the clients' runs are stored: a TOTAL that cannot be made must not hide that
        log.warning("the TOTAL of run %s's several clients could not be made", run_id, exc_info=True)
        return None


def _attach(workbench: RunServices, run: AttachableRun, follow: bool, control: RunControl,
            on_sample: SampleCallback | None, on_event: EventCallback | None, password: str | None,
            keep_open: bool = False, connected: Callable[[], None] = lambda: None) -> AttachOutcome:
    host, runs = run.host_name, workbench.store.runs
    if run.remote is None:
        reason = (f"{host}: its workbench went away before it recorded where the run lives on the host; "
                  "nothing could be collected (the host removes what the run left at its deadline)")
        runs.finish(run.id, RunStatus.INTERRUPTED, error=reason)
        return AttachOutcome(run.id, host, RunStatus.INTERRUPTED, f"run {run.id} on {reason}")
    request = _request(run)
    try:
        params = validate_request(request)
    except RunRequestError as exc:
        reason = f"{host}: cannot re-attach: the stored parameters are not valid any more ({exc})"
        runs.finish(run.id, RunStatus.FAILED, error=reason)
        return AttachOutcome(run.id, host, RunStatus.FAILED, f"run {run.id} on {reason}")
    # re-attaching many runs at start-up connects to many hosts: they take turns (app.engine.pool)
    turn = START_GATE.enter(host)
    try:
        transport = workbench.connect(host, password)
    except BaseException:
        turn.leave()
        raise
    connected()
    if request.test == MONITOR and request.duration is None and not keep_open:
        control.stop()   # an open-ended monitor ends with its user, who is gone: collect it now
    session = new_session(workbench, transport, request, params, run.id, control, on_sample, on_event, password)
    turn.counted()
    remote = run.remote

    def begin() -> None:
        try:
            session.resume(remote.run_dir, remote.deadline, remote.boot_id)
        finally:
            turn.leave()
        if not follow and not _over(session, control):
            raise LeftRunning(
                f"run {run.id} on {host} is still running on the host (its workbench went away); "
                f"`benchbay runs attach {run.id}` follows it to its end (the host keeps it at least "
                f"{session.margin:.0f} s more)")

    try:
        outcome = drive_run(workbench, run.id, request, session, control, begin, reattached=True)
    except LeftRunning as exc:
        left = LEFT_RUNNING
        if run.status == RunStatus.LOST_LINK:   # still lost link: collected later, as it was
            left, exc = RunStatus.LOST_LINK.value, LeftRunning(str(exc).replace("its workbench went away",
                                                                                "its link was lost"))
        return AttachOutcome(run.id, host, left, str(exc))
    finally:
        turn.leave()
    return AttachOutcome(run.id, host, outcome.status, _said(outcome, run.status), outcome.samples)


def _over(session: RunSession, control: RunControl) -> bool:
    """Whether a run can be collected at once (one read of what the host has)."""
    session.poll()
    if session.uses_agent:
        return session.done is not None or bool(session.failure)
    return control.stopped or session.finished


def _said(outcome: RunOutcome, was: str = RunStatus.RUNNING.value) -> str:
    if outcome.status == RunStatus.INTERRUPTED:
        return f"run {outcome.run_id} stored as interrupted: {outcome.error}"
    if outcome.status == RunStatus.LOST_LINK:
        return f"run {outcome.run_id}: {outcome.error}"
    why = "its link was lost" if was == RunStatus.LOST_LINK else "its workbench went away"
    text = (f"run {outcome.run_id} on {outcome.host}: re-attached after {why}; stored as "
            f"{outcome.status} with {outcome.samples} samples")
    return text + (f" ({outcome.error})" if outcome.error else "")


def orphan_candidates(workbench: RunServices) -> list[AttachableRun]:
    """Running runs this machine may take over (the lock tells whether their workbench lives)."""
    here = this_machine()
    # a database server's monitor waits for its load run: collected alone, it would stop before the load ends
    return [run for run in workbench.store.runs.running(lost_link=True)
            if (run.owner is None or run.owner.machine == here) and not waits_for_its_load(workbench, run)]


def collect_orphans(workbench: RunServices, follow: bool = False) -> list[AttachOutcome]:
    """The automatic attempt: every run whose workbench went away, one after the other.

    Runs a live workbench drives are skipped without a word; nothing here raises for one run.
    """
    outcomes = []
    for run in orphan_candidates(workbench):
        try:
            if workbench.needs_password(run.host_name):
                lost = "lost its link" if run.status == RunStatus.LOST_LINK else "lost its workbench"
                outcomes.append(AttachOutcome(run.id, run.host_name, NOT_ATTACHED,
                                              f"run {run.id} on {run.host_name} {lost}; its host needs "
                                              f"a password: `benchbay runs attach {run.id}`"))
                continue
            outcomes.append(attach_run(workbench, run.id, follow=follow))
        except RunBusy:
            continue
        except USER_ERRORS as exc:
            lost = "lost its link" if run.status == RunStatus.LOST_LINK else "lost its workbench"
            outcomes.append(AttachOutcome(run.id, run.host_name, NOT_ATTACHED,
                                          f"run {run.id} on {run.host_name} {lost} and could not be "
                                          f"re-attached now ({exc}); try `benchbay runs attach {run.id}` before "
                                          "its deadline"))
        except Exception as exc:  # one broken run must not stop the command the user asked for
            log.debug("re-attaching run %s failed", run.id, exc_info=True)
            outcomes.append(AttachOutcome(run.id, run.host_name, NOT_ATTACHED,
                                          f"run {run.id}: re-attaching failed: {type(exc).__name__}: {exc}"))
    return outcomes
