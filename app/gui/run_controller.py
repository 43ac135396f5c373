"""Run a test (disk, cpu, idle) on several hosts from the window: one worker per host.

Like MonitorController, but for agent tests: the worker runs Workbench.run and
its callbacks only emit signals (queued to the GUI thread). Cancel stops a host's test; the run is
stored as cancelled and the agent removes its files. Host key and password questions go through
the shared ConnectQuestions, then the host's worker starts again with the answer.

A test on a monitored host takes its monitoring over: the monitor stops (and is stored), the test
starts once it has, and monitoring starts again when the test ends, so the host has one sampler at
a time and its graphs go on. When a host's test is done, its results are loaded and shown
(RunResultsPanel).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.engine.orchestrator import RunControl, RunOutcome, RunRequest
from app.engine.repeats import RepeatedRequest
from app.errors import is_user_error
from app.gui.host_actions import ConnectQuestions, Retry, refusal, report_bug
from app.gui.monitor_controller import MonitorController, run_job
from app.gui.repeat_job import repeat_job
from app.gui.run_results import RunResults, RunResultsPanel, load_run_results
from app.gui.workers import Worker, WorkerPool
from app.workbench import Workbench
from remote.errors import UnknownHostKey
from storage.records import RunStatus
from widgets.host_list import STATUS_CONNECTING, STATUS_ERROR, STATUS_OK

log = logging.getLogger(__name__)
__all__ = ["RunController", "RunResults", "load_run_results"]   # the results types moved; kept here
MAX_RUNS = 256   # one thread per host; their start-ups take turns in app.engine.pool, then they mostly sleep


@dataclass
class _Run:
    request: RunRequest
    control: RunControl = field(default_factory=RunControl)

    @property
    def host(self) -> str:
        return self.request.host


class RunController(QObject):
    """Starts and cancels tests; results come out as signals in the GUI thread."""

    sample = Signal(str, object)         # host, TelemetrySample
    event = Signal(str, object)          # host, run event dict
    host_state = Signal(str, str, str)   # host, STATUS_*, message (the host list's status)
    message = Signal(str)                # status bar
    started = Signal(str)                # host: a worker is connecting
    finished = Signal(str, object)       # host, RunOutcome: stored
    refused = Signal(str, str)           # host, one-line reason: nothing was stored
    running_changed = Signal(bool)

    def __init__(self, workbench: Workbench, parent: QWidget, questions: ConnectQuestions | None = None,
                 monitors: MonitorController | None = None) -> None:
        super().__init__(parent)
        self._bench = workbench
        self.pool = WorkerPool(self, max_threads=MAX_RUNS)
        self.questions = questions or ConnectQuestions(self.pool, parent)
        self._runs: dict[str, _Run] = {}
        self._waiting: dict[str, _Run] = {}       # host -> its test, waiting for the host's monitor to stop
        self._resume: dict[str, float] = {}       # host -> monitor interval to start again after its test
        self._monitors = monitors
        self._rearm: dict[str, float] = {}        # host -> interval: monitor again once its monitor has stopped
        self._closing = False
        self.results = RunResultsPanel(workbench, self, parent)
        self.event.connect(self._on_event)   # queued: emitted in the workers
        self.finished.connect(self.results.run_finished)
        if monitors is not None:
            monitors.ended.connect(self._monitor_ended)

    def is_running(self, host: str) -> bool:
        return host in self._runs or host in self._waiting

    def running_hosts(self) -> list[str]:
        return list(self._runs) + [h for h in self._waiting if h not in self._runs]

    def start(self, requests: list[RunRequest]) -> list[str]:
        """Start each request whose host runs no test yet; the hosts started (or taken over from monitoring)."""
        if self._closing:
            return []
        started = []
        for request in requests:
            if self.is_running(request.host):
                continue
            run = _Run(request)
            interval = self._monitors.interval(run.host) if self._monitors is not None else None
            if interval is not None:
                self._take_over(run, interval)
            else:
                self._runs[run.host] = run
                self.questions.reset(run.host)
                self._launch(run, None, False, None)
            started.append(run.host)
        if started:
            self.running_changed.emit(True)
        return started

    def _take_over(self, run: _Run, interval: float) -> None:
        """The host is monitored: stop (and store) its monitor; the test starts when it has stopped."""
        assert self._monitors is not None
        self._waiting[run.host] = run
        self._resume[run.host] = interval
        self.event.emit(run.host, {"type": "handover", "message": "stopping its monitor first…"})
        self.host_state.emit(run.host, STATUS_CONNECTING, f"{run.request.test} test: stopping the monitor first…")
        self._monitors.stop(run.host)

    def _monitor_ended(self, host: str, _status: str, _reason: str) -> None:
        interval = self._rearm.pop(host, None)
        if interval is not None and self._monitors is not None and not self._closing:
            self._monitors.start([host], interval)   # its test was cancelled while this monitor was stopping
            return
        run = self._waiting.pop(host, None)
        if run is None or self._closing:
            return
        self._runs[host] = run
        self.questions.reset(host)
        self._launch(run, None, False, None)

    def cancel(self, host: str | None = None) -> None:
        for run in [r for h, r in self._waiting.items() if host in (None, h)]:
            del self._waiting[run.host]   # it never started: nothing to store
            self.event.emit(run.host, {"type": "done", "status": "cancelled", "error": "before it started"})
            self.message.emit(f"{run.host}: {run.request.test} test cancelled before it started")
            self._forget(run)
        for run in [r for h, r in self._runs.items() if host in (None, h)]:
            run.control.cancel()
            self.host_state.emit(run.host, STATUS_CONNECTING, "cancelling the test…")

    def shutdown(self, timeout_ms: int = 15_000) -> bool:
        """The window closes: cancel every test (stored as cancelled, files removed) and wait."""
        self._closing = True
        self._waiting.clear()
        self._resume.clear()
        self._rearm.clear()
        for run in self._runs.values():
            run.control.cancel()
        finished = self.pool.wait(timeout_ms)
        self.pool.cancel_all()
        self._runs.clear()
        self.results.shutdown()
        return finished

    def _launch(self, run: _Run, password: str | None, remember: bool, trust: UnknownHostKey | None) -> None:
        self.host_state.emit(run.host, STATUS_CONNECTING, f"{run.request.test} test: connecting…")
        self.started.emit(run.host)
        # a test to repeat runs its repeats in this one worker (app.engine.repeats)
        job = repeat_job if isinstance(run.request, RepeatedRequest) and run.request.plan.repeats else run_job
        worker = Worker(job, self._bench, run.request, run.control, self.sample.emit, self.event.emit,
                        password, remember, trust)
        worker.finished.connect(lambda outcome: self._done(run, outcome))
        worker.failed.connect(lambda exc: self._failed(run, exc, password))
        self.pool.start(worker, key=run.host)

    def _on_event(self, host: str, event: dict) -> None:
        run = self._runs.get(host)
        if run is None:
            return
        if event.get("type") in ("started", "reconnected", "phase_start"):
            phase = f": {event['label']}" if event.get("type") == "phase_start" and event.get("label") else ""
            self.host_state.emit(host, STATUS_CONNECTING, f"{run.request.test} test running{phase}")
        elif event.get("type") == "disconnected":
            self.host_state.emit(host, STATUS_CONNECTING, f"{run.request.test} test: reconnecting…")

    def _done(self, run: _Run, outcome: RunOutcome) -> None:
        self._forget(run)
        if self._closing:
            return
        test = run.request.test
        if outcome.status == RunStatus.FAILED:
            reason = (outcome.error or "failed").removeprefix(f"{run.host}: ")
            self.host_state.emit(run.host, STATUS_ERROR, reason)
            self.message.emit(f"{run.host}: {test} test failed (run #{outcome.run_id}): {reason}")
        elif outcome.status == RunStatus.LOST_LINK:   # not over: collected once the host answers again
            reason = (outcome.error or "link lost").removeprefix(f"{run.host}: ")
            self.host_state.emit(run.host, STATUS_ERROR, reason)
            self.message.emit(f"{run.host}: {test} test (run #{outcome.run_id}): {reason}")
        else:
            self.host_state.emit(run.host, STATUS_OK, "")
            self.message.emit(f"{run.host}: {test} test {outcome.status}, stored as run #{outcome.run_id}")
        self.finished.emit(run.host, outcome)

    def _failed(self, run: _Run, exc: BaseException, password: str | None) -> None:
        if self._closing:
            self._forget(run)
            return
        if not is_user_error(exc):
            answer = refusal(run.host, report_bug(exc))
        elif run.control.cancelled:
            answer = refusal(run.host, f"not run: {exc}")
        else:
            answer = self.questions.answer(run.host, exc)
        if isinstance(answer, Retry):
            if not run.control.cancelled:
                self._launch(run, answer.password or password, answer.remember, answer.trust)
                return
            answer = refusal(run.host, "cancelled before it connected")
        self._forget(run)
        self.host_state.emit(run.host, answer.status, answer.reason)
        self.message.emit(answer.message)
        self.refused.emit(run.host, answer.reason)

    def _forget(self, run: _Run) -> None:
        if self._runs.get(run.host) is run:
            del self._runs[run.host]
            self.questions.forget(run.host)
        interval = self._resume.pop(run.host, None)
        if interval is not None:
            # the host was monitored before its test: again, once the test's end has been told
            QTimer.singleShot(0, self, lambda: self._monitor_again(run.host, interval))
        if not self.running_hosts():
            self.running_changed.emit(False)


    def _monitor_again(self, host: str, interval: float) -> None:
        if self._monitors is None or self._closing or self.is_running(host):
            return
        if self._monitors.is_running(host):   # still stopping: start again once it has
            self._rearm[host] = interval
        else:
            self._monitors.start([host], interval)
