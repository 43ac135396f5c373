"""Run a test (disk, cpu, idle) on several hosts from the window: one worker per host.

Like MonitorController, but for agent tests: the worker runs Workbench.run and
its callbacks only emit signals (queued to the GUI thread). Cancel stops a host's test; the run is
stored as cancelled and the agent removes its files. Host key and password questions go through
the shared ConnectQuestions, then the host's worker starts again with the answer.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from app.engine.orchestrator import RunControl, RunOutcome, RunRequest
from app.errors import is_user_error
from app.gui.host_actions import ConnectQuestions, Retry, refusal, report_bug
from app.gui.monitor_controller import run_job
from app.gui.workers import Worker, WorkerPool
from app.summary.base import warning_messages
from app.workbench import Workbench
from remote.errors import UnknownHostKey
from storage.records import ResultSample, RunRecord, RunStatus
from widgets.host_list import STATUS_CONNECTING, STATUS_ERROR, STATUS_OK

log = logging.getLogger(__name__)
MAX_RUNS = 64


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

    def __init__(self, workbench: Workbench, parent: QWidget, questions: ConnectQuestions | None = None) -> None:
        super().__init__(parent)
        self._bench = workbench
        self.pool = WorkerPool(self, max_threads=MAX_RUNS)
        self.questions = questions or ConnectQuestions(self.pool, parent)
        self._runs: dict[str, _Run] = {}
        self._closing = False
        self.event.connect(self._on_event)   # queued: emitted in the workers

    def is_running(self, host: str) -> bool:
        return host in self._runs

    def running_hosts(self) -> list[str]:
        return list(self._runs)

    def start(self, requests: list[RunRequest]) -> list[str]:
        """Start each request whose host runs nothing yet; the hosts started."""
        if self._closing:
            return []
        started = []
        for request in requests:
            if request.host in self._runs:
                continue
            run = self._runs[request.host] = _Run(request)
            self.questions.reset(run.host)
            self._launch(run, None, False, None)
            started.append(run.host)
        if started:
            self.running_changed.emit(True)
        return started

    def cancel(self, host: str | None = None) -> None:
        for run in [r for h, r in self._runs.items() if host in (None, h)]:
            run.control.cancel()
            self.host_state.emit(run.host, STATUS_CONNECTING, "cancelling the test…")

    def shutdown(self, timeout_ms: int = 15_000) -> bool:
        """The window closes: cancel every test (stored as cancelled, files removed) and wait."""
        self._closing = True
        for run in self._runs.values():
            run.control.cancel()
        finished = self.pool.wait(timeout_ms)
        self.pool.cancel_all()
        self._runs.clear()
        return finished

    def _launch(self, run: _Run, password: str | None, remember: bool, trust: UnknownHostKey | None) -> None:
        self.host_state.emit(run.host, STATUS_CONNECTING, f"{run.request.test} test: connecting…")
        self.started.emit(run.host)
        worker = Worker(run_job, self._bench, run.request, run.control, self.sample.emit, self.event.emit,
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
        if not self._runs:
            self.running_changed.emit(False)


@dataclass(frozen=True)
class RunResults:
    """What the results view shows of a stored run (plain data, loaded in a worker)."""

    run: RunRecord
    results: list[ResultSample]
    warnings: list[str]


def load_run_results(bench: Workbench, run_id: int) -> RunResults | None:
    detail = bench.find_run(run_id)
    if detail is None:
        return None
    warnings = warning_messages(bench.run_events(run_id))
    return RunResults(detail.run, list(detail.results), warnings)
