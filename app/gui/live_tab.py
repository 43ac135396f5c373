"""Monitoring and graphs in the main window: the Monitor action, the Live tab, the Graphs tab.

LiveTab owns the MonitorController and a Dashboard; LiveFeatures wires them (and the stored runs'
Open graphs / Replay) into the MainWindow, so the window itself stays about hosts and facts.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QPushButton, QTabWidget, QToolBar, QVBoxLayout, QWidget

from app.catalogue import CATALOGUE
from app.engine.dbload_multi import DbMultiOutcome
from app.engine.orchestrator import MAX_INTERVAL, MIN_INTERVAL, RunOutcome, RunRequest
from app.engine.repeats import RepeatedRequest, plan_for
from app.gui.dbload_multi_live import DbMultiLive
from app.gui.host_actions import ConnectQuestions, FactsFlow
from app.gui.lazy_tabs import LazyTabs
from app.gui.monitor_controller import MonitorController
from app.gui.replay import ReplayView, StoredRun, load_stored_runs
from app.gui.run_controller import RunController, RunResults, load_run_results
from app.gui.runs_pane import RunsPane
from app.gui.shared_features import SharedFeatures
from app.gui.workers import Worker
from app.workbench import Workbench
from storage.records import RunStatus
from widgets.dashboard import Dashboard
from widgets.host_list import HostList
from widgets.run_data import RunState
from widgets.run_dialog import RunDialog
from widgets.run_progress import RunProgress
from widgets.runs_table import RunsTable
from widgets.test_forms_data import RunChoice

GRAPHS = "graphs"          # the Graphs tab's key among the window's lazy tabs


def dbload_steps(test: str, params: dict[str, Any]) -> int:
    """How many steps a database load's clients list makes ("1,2,4,8": 4); 0 for another test or when unsaid."""
    if test != "dbload":
        return 0
    clients = params.get("clients")
    if isinstance(clients, str):
        return len([c for c in clients.split(",") if c.strip()])
    return len(clients) if isinstance(clients, (list, tuple)) else 0


class LiveHost(Protocol):
    """What LiveFeatures uses of the main window (which imports this module): also the Qt parent."""

    bench: Workbench
    flow: FactsFlow
    host_list: HostList
    runs_table: RunsTable
    tabs: QTabWidget
    lazy_tabs: LazyTabs

    def show_status(self, text: str) -> None: ...
    def reload_runs(self) -> None: ...
    def run_job(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
                what: str = "", key: str | None = None) -> Worker: ...


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


class LiveFeatures(QObject):
    """The Monitor action (with its interval), the Live and Graphs tabs, and the Runs tab's buttons."""

    def __init__(self, window: LiveHost, toolbar: QToolBar) -> None:
        super().__init__(window)
        self.window = window
        self.live = LiveTab(window.bench, window.flow.questions, window)
        self.runs_pane = RunsPane(window.runs_table)

        self.monitor_action = QAction("Monitor", window)
        self.monitor_action.setObjectName("monitorAction")
        tip = "Watch the selected hosts live: disk, CPU, load and memory, stored as a run when stopped"
        self.monitor_action.setToolTip(tip)
        self.monitor_action.setStatusTip(tip)
        self.monitor_action.setShortcut("Ctrl+M")
        self.monitor_action.triggered.connect(lambda _checked=False: self.monitor())
        self.interval_spin = QDoubleSpinBox()
        self.interval_spin.setObjectName("intervalSpin")
        self.interval_spin.setRange(MIN_INTERVAL, MAX_INTERVAL)
        self.interval_spin.setSingleStep(0.5)
        self.interval_spin.setDecimals(1)
        self.interval_spin.setValue(1.0)
        self.interval_spin.setSuffix(" s")
        self.interval_spin.setToolTip("Seconds between two samples of a monitor")
        self.run_action = QAction("Run test…", window)
        self.run_action.setObjectName("runTestAction")
        tip = "Run a disk, CPU or demo test on one or more hosts: progress, live telemetry, stored results"
        self.run_action.setToolTip(tip)
        self.run_action.setStatusTip(tip)
        self.run_action.setShortcut("Ctrl+R")
        self.run_action.triggered.connect(lambda _checked=False: self.open_run_dialog())
        self.run_dialog: RunDialog | None = None
        toolbar.addAction(self.run_action)
        toolbar.addAction(self.monitor_action)
        toolbar.addWidget(QLabel(" every "))
        toolbar.addWidget(self.interval_spin)
        self.shared = SharedFeatures(window, self.live, toolbar)   # the shared-storage sweep
        # the database load test with several hosts ticked: clients of one server, started together
        self.dbmulti = DbMultiLive(window.bench, self.live, window.tabs, self)
        self.dbmulti.finished.connect(self._dbmulti_finished)
        self.dbmulti.failed.connect(lambda exc: window.show_status(f"Database load failed: {exc}"))

        self.live.controller.host_state.connect(window.host_list.set_status)
        self.live.controller.message.connect(window.show_status)
        self.live.runs.host_state.connect(window.host_list.set_status)
        self.live.runs.message.connect(window.show_status)
        self.live.run_stored.connect(lambda _run_id: window.reload_runs())
        self.runs_pane.run_chosen.connect(self.load_results)
        self.runs_pane.open_graphs.connect(lambda ids: self.open_runs(ids, replay=False))
        self.runs_pane.replay.connect(lambda ids: self.open_runs(ids, replay=True))

    def add_tabs(self) -> None:
        tabs = self.window.tabs
        tabs.addTab(self.live, "Live")
        self.window.lazy_tabs.add(GRAPHS, "Graphs", lambda: ReplayView(self.window))

    @property
    def graphs(self) -> ReplayView:
        """The Graphs tab's page (made now if it was not yet: the window opens without it)."""
        page = self.window.lazy_tabs.page(GRAPHS)
        assert isinstance(page, ReplayView)
        return page

    def monitor(self, hosts: list[str] | None = None) -> list[str]:
        hosts = hosts or self.window.host_list.selected_hosts()
        if not hosts:
            self.window.show_status("Select the hosts to monitor first")
            return []
        started = self.live.monitor(hosts, self.interval_spin.value())
        self.window.tabs.setCurrentWidget(self.live)
        if not started:
            self.window.show_status("Already monitoring " + ", ".join(hosts))
        return started

    def open_run_dialog(self) -> RunDialog:
        """Non-modal: it shows the progress of what it started and may stay open while the tests run."""
        if self.run_dialog is not None:
            self.run_dialog.raise_()
            self.run_dialog.activateWindow()
            return self.run_dialog
        hosts = self.window.host_list
        dialog = RunDialog(hosts.host_names(), hosts.selected_hosts(), set(self.live.runs.running_hosts()),
                           self.window, tests=CATALOGUE.runnable(), validate=CATALOGUE.validate,
                           monitored=set(self.live.controller.running_hosts()))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.start_requested.connect(lambda choice: self._start_tests(dialog, choice))
        dialog.destroyed.connect(lambda: setattr(self, "run_dialog", None))
        self.live.connect_progress(dialog.progress)
        self.live.runs.running_changed.connect(dialog.set_running)
        self.run_dialog = dialog
        dialog.show()
        return dialog

    def _start_tests(self, dialog: RunDialog, choice: RunChoice) -> None:
        """One RunRequest per host the dialog's choice names (a database load from several hosts: one load)."""
        if choice.test == "dbload" and len(choice.hosts) > 1:
            problem = self.dbmulti.start(choice.hosts, choice.params, self.interval_spin.value())
            dialog.progress.hide()
            dialog.set_running(False)
            self.window.show_status(problem or f"Database load from {', '.join(choice.hosts)} together: the "
                                               "clients get ready …")
            return
        plan = plan_for(choice.repeat, choice.until_stable)
        requests = [RepeatedRequest(host, choice.test, choice.params, plan=plan) if plan.repeats
                    else RunRequest(host, choice.test, choice.params) for host in choice.hosts]
        started = self.live.run_tests(requests, dialog.progress)
        self.window.tabs.setCurrentWidget(self.live)
        if not started:
            dialog.set_running(False)
            self.window.show_status("A test already runs on those hosts: wait for it or cancel it")

    def _dbmulti_finished(self, outcome: DbMultiOutcome) -> None:
        knee = outcome.total.knee_text() if outcome.total else "no step was run by every client"
        stored = f"TOTAL stored as run #{outcome.total_run_id}" if outcome.total_run_id else "nothing stored"
        self.window.show_status(f"Database load: {stored}; {knee}" + (f" ({outcome.error})" if outcome.error else ""))
        self.window.reload_runs()

    def load_results(self, run_id: int) -> None:
        self.window.run_job(load_run_results, self.window.bench, run_id, what=f"Loading results of run #{run_id}",
                            on_done=self._show_results)

    def _show_results(self, results: RunResults | None) -> None:
        # the selection may have moved on while this loaded
        if results is not None and self.runs_pane.selected_ids() == [results.run.id]:
            self.runs_pane.show_results(results)

    def open_runs(self, run_ids: list[int], replay: bool) -> None:
        names = ", ".join(f"#{i}" for i in run_ids)
        self.window.run_job(load_stored_runs, self.window.bench, run_ids, what=f"Opening run {names}",
                            on_done=lambda runs: self._show_runs(runs, replay))

    def _show_runs(self, runs: list[StoredRun], replay: bool) -> None:
        self.graphs.open_runs(runs, replay=replay)
        self.window.tabs.setCurrentWidget(self.graphs)

    def shutdown(self, timeout_ms: int) -> bool:
        if self.window.lazy_tabs.is_built(GRAPHS):
            self.graphs.stop()
        shared_ended = self.shared.shutdown(timeout_ms)
        dbload_ended = self.dbmulti.shutdown(timeout_ms)
        return self.live.shutdown(timeout_ms) and shared_ended and dbload_ended
