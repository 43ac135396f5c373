"""The Live tab's page: live graphs of the monitored and tested hosts, the tests' progress, Stop and Cancel.

Made when the tab is first shown or used, or just after the main window's first paint (app.gui.live_tab):
its charts' library is no part of the window's start.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from app.catalogue import CATALOGUE
from app.engine.orchestrator import RunOutcome, RunRequest
from app.gui.host_actions import ConnectQuestions
from app.gui.monitor_controller import MonitorController
from app.gui.run_controller import RunController
from app.workbench import Workbench
from storage.records import RunStatus
from widgets.dashboard import Dashboard
from widgets.run_data import RunState
from widgets.run_progress import RunProgress


def dbload_steps(test: str, params: dict[str, Any]) -> int:
    """How many steps a database load's clients list makes ("1,2,4,8": 4); 0 for another test or when unsaid."""
    if test != "dbload":
        return 0
    clients = params.get("clients")
    if isinstance(clients, str):
        return len([c for c in clients.split(",") if c.strip()])
    return len(clients) if isinstance(clients, (list, tuple)) else 0


class LiveTab(QWidget):
    """Live graphs of the monitored hosts, with Stop (store the runs) and Cancel."""

    run_stored = Signal(int)

    def __init__(self, workbench: Workbench, questions: ConnectQuestions | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("liveTab")
        self.controller = MonitorController(workbench, self, questions)
        self.runs = RunController(workbench, self, questions, monitors=self.controller)   # takes monitors over
        self.dashboard = Dashboard(self)
        self.dashboard.empty_label.setText("Select one or more hosts and click “Monitor” to watch them live, "
                                           "or “Run test…” to benchmark them.")
        self.progress = RunProgress(self)   # the tests' progress, above their telemetry
        self.progress.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.progress)
        layout.addWidget(self.dashboard, 1)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setToolTip("Stop monitoring and store the runs with their graphs")
        self.stop_button.clicked.connect(lambda _checked=False: self.stop())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setToolTip("Stop monitoring now; the runs are stored as cancelled")
        self.cancel_button.clicked.connect(lambda _checked=False: self.cancel())
        self.dashboard.bar.addWidget(self.stop_button)
        self.dashboard.bar.addWidget(self.cancel_button)
        queued = Qt.ConnectionType.QueuedConnection     # emitted in worker threads
        self.controller.sample.connect(self.dashboard.add_sample, queued)
        self.controller.event.connect(self.dashboard.add_event, queued)
        self.controller.started.connect(lambda host, _interval: self.dashboard.set_status(host, "connecting…",
                                                                                          "connecting"))
        self.controller.finished.connect(self._finished)
        self.controller.ended.connect(self._ended)
        self.controller.running_changed.connect(lambda _running: self._update_buttons())
        self.runs.sample.connect(self.dashboard.add_sample, queued)
        self.runs.event.connect(self.dashboard.add_event, queued)
        self.runs.started.connect(lambda host: self.dashboard.set_status(host, "connecting…", "connecting"))
        self.connect_progress(self.progress)
        self.runs.finished.connect(lambda host, outcome: self._finished(host, outcome, "finished"))
        self.runs.refused.connect(lambda host, reason: self.dashboard.set_status(host, reason, "error"))
        self._clock = QTimer(self)   # counts the time left down between progress events
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self.progress.tick)
        self.runs.running_changed.connect(lambda running: self._clock.start() if running else self._clock.stop())
        self._update_buttons()

    def connect_progress(self, progress: RunProgress) -> None:
        """Feed a progress widget (this tab's, a run dialog's) from the tests' signals; its Cancel cancels."""
        self.runs.event.connect(progress.add_event)
        self.runs.finished.connect(progress.set_stored)
        self.runs.refused.connect(progress.set_refused)
        progress.cancel_requested.connect(self.runs.cancel)
        progress.cancel_all_requested.connect(self.runs.cancel)
        progress.results_requested.connect(self.runs.results.show_run)

    def busy_hosts(self) -> set[str]:
        return set(self.controller.running_hosts()) | set(self.runs.running_hosts())

    def run_tests(self, requests: list[RunRequest], *others: RunProgress) -> list[str]:
        """Start a test on each request's host that runs none (a monitor is taken over); the hosts started."""
        testing = set(self.runs.running_hosts())
        requests = [r for r in requests if r.host not in testing]
        if not requests:
            return []
        if not self.busy_hosts():
            self.dashboard.clear()
        if not testing:
            self.progress.clear()
        try:
            expected = CATALOGUE.test(requests[0].test).expected_seconds(requests[0].params)
        except (KeyError, ValueError):
            expected = None
        for request in requests:
            self.dashboard.add_host(request.host)
            steps = dbload_steps(request.test, request.params)
            if steps:
                self.dashboard.set_dbload_steps(request.host, steps)
            for progress in (self.progress, *others):
                progress.add_host(request.host, expected, request.test)
        self.progress.show()
        return self.runs.start(requests)

    def monitor(self, hosts: list[str], interval: float = 1.0) -> list[str]:
        """Start monitoring these hosts (those not monitored yet); the hosts started."""
        hosts = [h for h in hosts if not self.runs.is_running(h)]
        if not self.busy_hosts():
            self.dashboard.clear()   # a new session; the last one's runs are stored
            self.progress.hide()
        fresh = [h for h in hosts if not self.controller.is_running(h)]
        for host in fresh:
            self.dashboard.add_host(host)
        started = self.controller.start(fresh, interval)
        self._update_buttons()
        return started

    def stop(self) -> None:
        self.controller.stop()

    def cancel(self) -> None:
        self.controller.cancel()

    def shutdown(self, timeout_ms: int = 15_000) -> bool:
        self._clock.stop()
        tests_ended = self.runs.shutdown(timeout_ms)
        return self.controller.shutdown(timeout_ms) and tests_ended

    def _finished(self, host: str, outcome: RunOutcome, finished: str = "stopped") -> None:
        if outcome.status == RunStatus.FAILED:
            self.dashboard.set_status(host, outcome.error or "failed", RunState.FAILED)   # the text, the view's state
        else:
            word = finished if outcome.status == RunStatus.DONE else outcome.status
            self.dashboard.set_status(host, f"{word} — stored as run #{outcome.run_id}", RunState.DONE)
        self.run_stored.emit(outcome.run_id)

    def _ended(self, host: str, status: str, reason: str) -> None:
        if status == "refused":
            self.dashboard.set_status(host, reason, "error")

    def _update_buttons(self) -> None:
        running = bool(self.controller.running_hosts())
        self.stop_button.setEnabled(running)
        self.cancel_button.setEnabled(running)
