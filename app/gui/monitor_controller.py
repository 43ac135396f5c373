"""Monitor hosts from the window: one worker per host runs Workbench.run.

The run engine calls back from the worker thread; the callbacks only emit this controller's
signals, which reach the GUI thread queued (napari-style workers that report through signals).
Stop ends a monitor normally and stores it; Cancel stores it as cancelled. A host key or password
question stops a worker before anything is stored: the user is asked in the GUI thread (the same
ConnectQuestions as gathering facts) and a new worker starts with the answer.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from app.engine.orchestrator import EventCallback, RunControl, RunOutcome, RunRequest, SampleCallback
from app.errors import is_user_error
from app.gui.host_actions import ConnectQuestions, Retry, refusal, report_bug
from app.gui.workers import Worker, WorkerPool
from app.workbench import Workbench
from remote.errors import UnknownHostKey
from remote.run_session import MONITOR
from storage.records import RunStatus
from widgets.host_list import STATUS_CONNECTING, STATUS_ERROR, STATUS_OK

log = logging.getLogger(__name__)
MAX_MONITORS = 256         # one thread each; a monitor sleeps between polls (start-ups take turns: app.engine.pool)


@dataclass
class _Monitor:
    host: str
    interval: float
    control: RunControl = field(default_factory=RunControl)
    worker: Worker | None = None


class MonitorController(QObject):
    """Starts, stops and cancels monitors; every result comes out as a signal in the GUI thread."""

    sample = Signal(str, object)         # host, remote.telemetry.TelemetrySample
    event = Signal(str, object)          # host, run event dict
    host_state = Signal(str, str, str)   # host, widgets.host_list STATUS_*, one-line message
    message = Signal(str)                # for the status bar
    started = Signal(str, float)         # host, interval: a worker is connecting
    finished = Signal(str, object)       # host, RunOutcome (the run is stored)
    ended = Signal(str, str, str)        # host, "done"/"failed"/"cancelled"/"refused", one-line reason
    running_changed = Signal(bool)       # whether any monitor runs

    def __init__(self, workbench: Workbench, parent: QWidget, questions: ConnectQuestions | None = None) -> None:
        super().__init__(parent)
        self._bench = workbench
        self.pool = WorkerPool(self, max_threads=MAX_MONITORS)
        self.questions = questions or ConnectQuestions(self.pool, parent)
        self._monitors: dict[str, _Monitor] = {}
        self._closing = False
        self.event.connect(self._on_event)   # queued: emitted in the workers

    # -- what runs -------------------------------------------------------------------------------

    def is_running(self, host: str) -> bool:
        return host in self._monitors

    def running_hosts(self) -> list[str]:
        return list(self._monitors)

    def interval(self, host: str) -> float | None:
        """Seconds between samples of a host's monitor; None when it is not monitored."""
        monitor = self._monitors.get(host)
        return monitor.interval if monitor is not None else None

    def start(self, hosts: list[str], interval: float = 1.0) -> list[str]:
        """Monitor each host not monitored yet; the hosts started."""
        if self._closing:
            return []
        started = []
        for host in hosts:
            if host in self._monitors:
                continue
            self._monitors[host] = _Monitor(host, interval)
            self.questions.reset(host)
            self._launch(self._monitors[host], None, False, None)
            started.append(host)
        if started:
            self.running_changed.emit(True)
        return started

    def stop(self, host: str | None = None) -> None:
        """End normally and store: the host side stops its sampler and removes its files."""
        for monitor in self._selected(host):
            monitor.control.stop()
            self.host_state.emit(monitor.host, STATUS_CONNECTING, "stopping and storing…")

    def cancel(self, host: str | None = None) -> None:
        """Stop at once; the run is stored as cancelled."""
        for monitor in self._selected(host):
            monitor.control.cancel()
            self.host_state.emit(monitor.host, STATUS_CONNECTING, "cancelling…")

    def _selected(self, host: str | None) -> list[_Monitor]:
        if host is None:
            return list(self._monitors.values())
        return [self._monitors[host]] if host in self._monitors else []

    def shutdown(self, timeout_ms: int = 15_000) -> bool:
        """Stop every monitor (they are stored) and wait for the workers: the window is closing."""
        self._closing = True    # results still queued must not ask questions or start anything
        for monitor in self._monitors.values():
            monitor.control.stop()
        finished = self.pool.wait(timeout_ms)
        self.pool.cancel_all()
        self._monitors.clear()
        return finished

    # -- workers ---------------------------------------------------------------------------------

    def _launch(self, monitor: _Monitor, password: str | None, remember: bool,
                trust: UnknownHostKey | None) -> None:
        host = monitor.host
        self.host_state.emit(host, STATUS_CONNECTING, "monitoring: connecting…")
        self.started.emit(host, monitor.interval)
        worker = Worker(run_job, self._bench, RunRequest(host, MONITOR, interval=monitor.interval),
                        monitor.control, self.sample.emit, self.event.emit, password, remember, trust)
        worker.finished.connect(lambda outcome: self._done(monitor, outcome))
        worker.failed.connect(lambda exc: self._failed(monitor, exc, password))
        monitor.worker = worker
        self.pool.start(worker, key=host)

    def _on_event(self, host: str, event: dict) -> None:
        if event.get("type") in ("started", "reconnected") and host in self._monitors:
            self.host_state.emit(host, STATUS_CONNECTING, f"monitoring every {self._monitors[host].interval:g} s")
        elif event.get("type") == "disconnected" and host in self._monitors:
            self.host_state.emit(host, STATUS_CONNECTING, "reconnecting…")

    def _done(self, monitor: _Monitor, outcome: RunOutcome) -> None:
        self._forget(monitor)
        if self._closing:
            return
        said = {RunStatus.DONE: "stored", RunStatus.CANCELLED: "stored as cancelled"}
        what = said.get(outcome.status, outcome.status)
        text = f"{monitor.host}: monitor {what} as run #{outcome.run_id} ({outcome.samples} samples)"
        if outcome.status == RunStatus.LOST_LINK:   # not over: collected once the host answers again
            text = f"{monitor.host}: monitor (run #{outcome.run_id})"
        if outcome.status in (RunStatus.FAILED, RunStatus.LOST_LINK):
            reason = outcome.error or "failed"   # the text shown, not a status
            self.host_state.emit(monitor.host, STATUS_ERROR, reason)
            text = f"{text}: {reason.removeprefix(f'{monitor.host}: ')}"
        else:
            self.host_state.emit(monitor.host, STATUS_OK, "")
        self.message.emit(text)
        self.finished.emit(monitor.host, outcome)
        self.ended.emit(monitor.host, str(outcome.status), outcome.error)

    def _failed(self, monitor: _Monitor, exc: BaseException, password: str | None) -> None:
        host = monitor.host
        if self._closing:
            self._forget(monitor)
            return
        if not is_user_error(exc):
            answer = refusal(host, report_bug(exc))
        elif monitor.control.stopped or monitor.control.cancelled:
            answer = refusal(host, f"not monitored: {exc}")
        else:
            answer = self.questions.answer(host, exc)
        if isinstance(answer, Retry):
            if not (monitor.control.stopped or monitor.control.cancelled):
                self._launch(monitor, answer.password or password, answer.remember, answer.trust)
                return
            answer = refusal(host, "not monitored: stopped before it connected")
        self._forget(monitor)
        self.host_state.emit(host, answer.status, answer.reason)
        self.message.emit(answer.message)
        self.ended.emit(host, "refused", answer.reason)

    def _forget(self, monitor: _Monitor) -> None:
        if self._monitors.get(monitor.host) is monitor:
            del self._monitors[monitor.host]
            self.questions.forget(monitor.host)
        if not self._monitors:
            self.running_changed.emit(False)


def run_job(bench: Workbench, request: RunRequest, control: RunControl, on_sample: SampleCallback | None,
            on_event: EventCallback | None,
            password: str | None, remember: bool, trust: UnknownHostKey | None) -> RunOutcome:
    """A monitor's or a test's worker (RunController uses it too): trust the key the user accepted, run,
    remember the password once it worked. Runs in a worker thread: no widgets here, only the signals'
    emit as callbacks."""
    if trust is not None:
        bench.trust_key(trust)
    outcome = bench.run(request, control, on_sample=on_sample, on_event=on_event, password=password)
    if remember and password:
        bench.remember_password(request.host, password)   # it connected: the password was right
    return outcome
