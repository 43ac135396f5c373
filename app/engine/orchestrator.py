"""Running a test or a monitor on one host and storing it: shared by the window and the command line.

One execute_run per host, each in its own worker thread. Nothing here is shared between them but
the Workbench, whose store opens a session per call and whose connect() makes a new transport.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from app.engine.consistency import PhaseSample
from app.engine.dbload_target import with_target_ram
from app.engine.lock import RunLock
from app.engine.pool import START_GATE
from app.engine.result_rates import stored_results, without_rates
from app.engine.run_control import RunControl  # noqa: F401 - this module's API too
from app.engine.run_files import FilesError, files_record, with_files
from app.engine.settings import Settings
from app.engine.test_dir import FROM_HOST, TestDirChoice, choose_test_dir
from app.errors import USER_ERRORS, AppError
from remote.agent import benches
from remote.agent_package import AGENT_VERSION
from remote.errors import ConnectError, NoPython
from remote.facts import gather_facts
from remote.hostspec import HostSpec
from remote.run_clock import on_our_clock
from remote.run_session import (
    DEFAULT_MARGIN,
    DEFAULT_RECONNECT_BUDGET,
    MONITOR,
    RunLeft,
    RunLost,
    RunSession,
    RunVanished,
)
from remote.run_tail import workbench_event
from remote.telemetry.compute import TelemetryComputer
from remote.telemetry.sample import TelemetrySample, samples_to_series
from remote.transport import Transport
from storage.db import Store
from storage.records import RemoteRunState, RunStatus

log = logging.getLogger(__name__)

MIN_INTERVAL, MAX_INTERVAL = 0.5, 10.0
MONITOR_FACTS_TIMEOUT = 60.0
# A shared store's server restarting (or its network gone) while a run ends: wait this long before giving up.
STORE_WAIT_S = 600.0

SampleCallback = Callable[[str, TelemetrySample], None]
EventCallback = Callable[[str, dict], None]


class RunServices(Protocol):
    """What the run engine uses of the Workbench: its internals take this, as the Workbench imports them."""

    @property
    def home(self) -> Path: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def store(self) -> Store: ...
    def get_host(self, name: str) -> HostSpec: ...
    def connect(self, name: str, password: str | None = None) -> Transport: ...
    def needs_password(self, name: str) -> bool: ...
    def list_hosts(self) -> list[HostSpec]: ...
    def latest_facts(self, name: str) -> dict | None: ...


class RunRequestError(AppError):
    """The request itself is wrong (unknown test, bad parameter, interval out of range)."""


@dataclass(frozen=True)
class RunRequest:
    host: str
    test: str                                  # "monitor" (telemetry only) or an agent test ("idle", ...)
    params: dict[str, Any] = field(default_factory=dict)
    interval: float = 1.0                      # seconds between telemetry ticks, 0.5-10
    duration: float | None = None              # monitor only; None = until RunControl.stop()
    margin: float = DEFAULT_MARGIN             # seconds the host side outlives a vanished workbench
    reconnect_budget: float | None = None      # seconds; None: the settings' (DEFAULT_RECONNECT_BUDGET)
    devices: tuple[str, ...] = ()              # shown besides the whole disks: partitions, hidden devices
    files: tuple[tuple[str, bytes], ...] = ()  # uploaded into the run directory: (plain name, content)
    file_sources: tuple[tuple[str, str, int, str], ...] = ()   # (name, local path, bytes, sha256) for the record


@dataclass(frozen=True)
class RunOutcome:
    run_id: int
    host: str
    status: RunStatus   # never RUNNING
    error: str
    samples: int


def validate_request(request: RunRequest) -> dict[str, Any]:
    """The test's parameters with defaults filled in; RunRequestError when something is wrong (a request
    naming a local file goes through with_files first)."""
    if not MIN_INTERVAL <= request.interval <= MAX_INTERVAL:
        raise RunRequestError(f"interval must be {MIN_INTERVAL:g}-{MAX_INTERVAL:g} s, not {request.interval:g}")
    if request.duration is not None and request.duration <= 0:
        raise RunRequestError(f"duration must be positive, not {request.duration:g}")
    if request.test == MONITOR:
        return dict(request.params)
    try:
        return benches.validate(request.test, request.params)
    except ValueError as exc:
        raise RunRequestError(str(exc)) from None


def with_test_dir(request: RunRequest, params: dict[str, Any],
                  spec: HostSpec) -> tuple[RunRequest, dict[str, Any], TestDirChoice | None]:
    """The request and its validated parameters with the host's test directory filled in where the run named
    none (validated again: the host's directory is checked as one given for the run would be)."""
    choice = choose_test_dir(request.test, request.params, params, spec)
    if choice is None or choice.source != FROM_HOST:
        return request, params, choice
    request = replace(request, params={**request.params, "test_dir": choice.directory})
    return request, validate_request(request), choice


def execute_run(
    workbench: RunServices,
    request: RunRequest,
    control: RunControl | None = None,
    on_sample: SampleCallback | None = None,
    on_event: EventCallback | None = None,
    password: str | None = None,
) -> RunOutcome:
    """Run `request` on its host and store it; blocks (call it from a worker thread).

    Raises before anything is stored when the request is wrong or the host cannot be reached
    (UnknownHostKey, PasswordRequired ... as Workbench.connect does). Once the run is stored as
    running, failures end up in the outcome (status failed) instead. Callbacks are called from
    this thread.
    """
    control = control or RunControl()
    try:
        request = with_files(request)   # a local query list: read here, uploaded with the agent
    except FilesError as exc:
        raise RunRequestError(str(exc)) from None
    params = validate_request(request)
    spec = workbench.get_host(request.host)
    host = spec.name
    # a test that writes files goes to the run's test_dir, else the host's, else the run directory
    request, params, test_dir = with_test_dir(request, params, spec)
    request, params = with_target_ram(workbench, request, params)   # dbload: data sized from the target's RAM
    # connecting, uploading and starting take a turn (app.engine.pool): many hosts start spread out
    turn = START_GATE.enter(host, control)
    try:
        transport = workbench.connect(host, password)
    except BaseException:
        turn.leave()
        raise
    parameters = {"interval": request.interval, "duration": request.duration, "margin": request.margin,
                  "params": benches.redact(params)}
    if request.file_sources:
        parameters["uploads"] = files_record(request)
    # held while this process drives the run: a later Benchbay sees it free only once we are gone
    lock = RunLock.create(workbench.home) if getattr(workbench, "home", None) else None
    try:
        run_id = workbench.store.runs.create(host, request.test, parameters, agent_version=AGENT_VERSION,
                                             owner=lock.owner if lock else None)
    except BaseException:
        turn.leave()
        transport.close()
        if lock:
            lock.release()
        raise
    session = new_session(workbench, transport, request, params, run_id, control, on_sample, on_event, password)
    turn.counted()

    def begin() -> dict | None:
        try:
            session.start()   # its first command is timed: the limits of the later ones follow from it
        finally:
            turn.leave()   # started (or not): polling is cheap, the next host may begin
        _remember_remote_state(workbench, run_id, session)
        if test_dir is not None:
            session.add_event(workbench_event("test_dir", **test_dir.event(session.run_dir)))
        return _monitor_facts(workbench, session) if request.test == MONITOR else None

    try:
        return drive_run(workbench, run_id, request, session, control, begin)
    finally:
        turn.leave()
        if lock:
            lock.release()


def new_session(workbench: RunServices, transport: Transport, request: RunRequest, params: dict[str, Any], run_id: int,
             control: RunControl, on_sample: SampleCallback | None, on_event: EventCallback | None,
             password: str | None) -> RunSession:
    host = transport.name
    return RunSession(
        transport, request.test, params, interval=request.interval, run_id=str(run_id), files=request.files,
        duration=request.duration, margin=request.margin, reconnect_budget=_budget(workbench, request),
        connect=lambda: workbench.connect(host, password), control=control,
        computer=TelemetryComputer(include=set(request.devices)),
        on_sample=(lambda sample: on_sample(host, sample)) if on_sample else None,
        on_event=(lambda event: on_event(host, event)) if on_event else None,
    )


def _budget(workbench: RunServices, request: RunRequest) -> float:
    if request.reconnect_budget is not None:
        return request.reconnect_budget
    settings = getattr(workbench, "settings", None)
    return float(getattr(settings, "reconnect_budget", DEFAULT_RECONNECT_BUDGET))


def lost_link_text(run_id: int, error: str) -> str:
    return (f"{error}; the run goes on on the host and is collected when it answers again (the next start of "
            f"Benchbay, the open window, or `benchbay runs attach {run_id}`)")


class LeftRunning(AppError):
    """A re-attach that only collects finished runs found this one still running on its host."""


def drive_run(workbench: RunServices, run_id: int, request: RunRequest, session: RunSession, control: RunControl,
              begin: Callable[[], dict | None], reattached: bool = False) -> RunOutcome:
    """begin() (start, or resume after a lost workbench), follow the run to its end, store it."""
    facts: dict | None = None
    status, error = RunStatus.FAILED, ""
    store = True
    try:
        facts = begin()
        session.run()
        status, error = RunStatus(session.status), session.error   # the agent's end: done, failed or cancelled
    except KeyboardInterrupt:
        status, error = RunStatus.CANCELLED, "interrupted"   # the error text, not a status
        session.abort()
        raise
    except RunVanished as exc:
        status, error = RunStatus.INTERRUPTED, str(exc)
    except LeftRunning:
        store = False   # still ours to collect later: nothing stored, nothing removed on the host
        raise
    except RunLeft as exc:
        store = False   # left while followed (RunControl.leave): the same, said the same way
        raise LeftRunning(f"run {run_id} on {exc}; `benchbay runs attach {run_id}` collects it") from None
    except RunLost as exc:
        status, error = RunStatus.FAILED, str(exc)
        if control.cancelled or control.stopped:   # the user ended it while the host was unreachable
            status = RunStatus.CANCELLED if control.cancelled or session.uses_agent else RunStatus.DONE
        elif session.run_dir and session.deadline:
            # the host keeps the run until its deadline: nothing stored now, all of it when collected
            store = False
            status, error = RunStatus.LOST_LINK, lost_link_text(run_id, str(exc))
            workbench.store.runs.mark_lost_link(run_id, error)
    except USER_ERRORS as exc:
        status, error = RunStatus.FAILED, str(exc) or type(exc).__name__
        session.abort()
    except BaseException as exc:
        status, error = RunStatus.FAILED, f"internal error: {type(exc).__name__}: {exc}"
        session.abort()
        raise
    finally:
        session.close()
        try:
            if store:
                if reattached or request.test == MONITOR:
                    _trim_to_run(session, request)
                # one transaction: a server restarting meanwhile gets all of it when it is back, or none
                workbench.store.write_when_answering(
                    lambda: store_run(workbench, run_id, request, session, facts, status, error, reattached),
                    STORE_WAIT_S, lambda message: session.add_event(workbench_event("warning", message=message)))
        finally:
            session.transport.close()
    return RunOutcome(run_id, session.host, status, error, len(session.samples))


def _remember_remote_state(workbench: RunServices, run_id: int, session: RunSession) -> None:
    """Where the run lives on its host, stored as soon as it runs there: a later Benchbay can find it."""
    expected = session.expected or 0.0
    state = RemoteRunState(
        run_dir=session.run_dir, agent_pid=session.read_agent_pid(), deadline=session.deadline,
        expected_end=session.deadline - session.margin if expected else 0.0, interval=session.interval,
        boot_id=session.boot_id)
    workbench.store.write_when_answering(
        lambda: workbench.store.runs.set_remote_state(run_id, state), STORE_WAIT_S,
        lambda message: session.add_event(workbench_event("warning", message=message)))


def _trim_to_run(session: RunSession, request: RunRequest) -> None:
    """A re-attached run's sampler kept ticking after the test ended: keep what the run covers, as a
    run followed to its end keeps it (up to the first tick at or after "done"; a monitor's duration)."""
    samples = session.samples
    if not samples:
        return
    if session.uses_agent and session.done is not None:
        end = float(session.done.get("t") or 0.0)
        keep = next((i + 1 for i, sample in enumerate(samples) if sample.t >= end), len(samples))
    elif request.duration is not None:
        began = samples[0].t - samples[0].interval
        keep = next((i + 1 for i, sample in enumerate(samples)
                     if sample.t - began >= request.duration - request.interval / 2), len(samples))
    else:
        return
    del samples[keep:]


def _monitor_facts(workbench: RunServices, session: RunSession) -> dict | None:
    """A monitor needs no python, but when the host has it the run gets its facts too."""
    try:
        return gather_facts(session.transport, timeout=min(workbench.settings.command_timeout,
                                                            MONITOR_FACTS_TIMEOUT))
    except NoPython:
        return None
    except ConnectError:
        return None   # the session's next poll notices and reconnects
    except USER_ERRORS as exc:
        session.add_event(workbench_event("warning", message=f"no facts: {exc}"))
        return None


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def store_run(workbench: RunServices, run_id: int, request: RunRequest, session: RunSession, facts: dict | None,
              status: RunStatus, error: str, reattached: bool = False) -> None:
    runs = workbench.store.runs
    events = list(session.events)
    agent_facts = [e.get("facts") for e in events if e.get("type") == "facts" and isinstance(e.get("facts"), dict)]
    facts = agent_facts[-1] if agent_facts else facts
    if facts:
        runs.add_facts(run_id, facts)
    samples = session.samples
    t0 = samples[0].t - samples[0].interval if samples else None
    # each figure with its spread and per-interval rates, and how steady the host was meanwhile
    steal = [PhaseSample(s.t, s.interval, float(s.cpu["steal"])) for s in samples if "steal" in s.cpu]
    stored = stored_results(events, request.test, t0, steal)
    runs.add_results(run_id, stored.results)
    if samples:
        runs.add_series(run_id, samples_to_series(samples, t0))
    runs.add_series(run_id, stored.series)
    tail = getattr(session, "sample_tail", None)
    # every stored time on this computer's clock; what the host's clock said is kept beside (remote.run_clock)
    clock = getattr(session, "clock", None)
    offset = clock.offset if clock is not None else 0.0
    # where the series' t = 0 lies (to place phase markers), and how telemetry went
    events.append(workbench_event(
        "telemetry", t0=t0 - offset if t0 is not None else None, host_t0=t0,
        clock_offset_s=round(offset, 6) if clock is not None else None, interval=request.interval,
        samples=len(samples), ticks=tail.ticks if tail else 0, bad_ticks=tail.bad_ticks if tail else 0,
        duplicates=tail.duplicates if tail else 0, reconnects=session.reconnects))
    if clock is not None:
        events = [on_our_clock(e, offset) for e in events]
    # the facts document is stored once, as facts, not again inside its event
    runs.add_events(run_id, [{**e, "facts": "stored as the run's facts"} if e.get("type") == "facts" else e
                             for e in without_rates(events)])
    engine = "agent" if session.uses_agent else "sampler"
    runs.finish(run_id, status, error=error, engine=engine, engine_version=AGENT_VERSION)
    if (reattached or request.test == MONITOR) and samples:
        # what the host measured (not until a re-attach, nor as long as a slow link took to bring it): from
        # the first tick to the run's end
        end = next((float(e["t"]) for e in events if e.get("type") == "done" and e.get("seq") is not None),
                   samples[-1].t - offset)
        runs.set_times(run_id, _utc(t0 - offset), _utc(max(end, samples[-1].t - offset)))
