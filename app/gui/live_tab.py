"""Monitoring and graphs in the main window: the Monitor action, the Live tab, the Graphs tab.

LiveTab owns the MonitorController and a Dashboard; LiveFeatures wires them (and the stored runs'
Open graphs / Replay) into the MainWindow, so the window itself stays about hosts and facts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QPushButton, QToolBar, QVBoxLayout, QWidget

from app.gui.host_actions import ConnectQuestions
from app.gui.monitor_controller import MonitorController
from app.gui.replay import ReplayView, StoredRun, load_stored_runs
from app.gui.runs_pane import RunsPane
from app.run_orchestrator import MAX_INTERVAL, MIN_INTERVAL, RunOutcome
from widgets.dashboard import Dashboard

if TYPE_CHECKING:
    from app.gui.main_window import MainWindow


class LiveTab(QWidget):
    """Live graphs of the monitored hosts, with Stop (store the runs) and Cancel."""

    run_stored = Signal(int)

    def __init__(self, workbench: Any, questions: ConnectQuestions | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("liveTab")
        self.controller = MonitorController(workbench, self, questions)
        self.dashboard = Dashboard(self)
        self.dashboard.empty_label.setText("Select one or more hosts and click “Monitor” to watch them live.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.dashboard)
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
        self._update_buttons()

    def monitor(self, hosts: list[str], interval: float = 1.0) -> list[str]:
        """Start monitoring these hosts (those not monitored yet); the hosts started."""
        if not self.controller.running_hosts():
            self.dashboard.clear()   # a new session; the last one's runs are stored
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
        return self.controller.shutdown(timeout_ms)

    def _finished(self, host: str, outcome: RunOutcome) -> None:
        if outcome.status == "failed":
            self.dashboard.set_status(host, outcome.error or "failed", "failed")
        else:
            word = "stopped" if outcome.status == "done" else outcome.status
            self.dashboard.set_status(host, f"{word} — stored as run #{outcome.run_id}", "done")
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

    def __init__(self, window: MainWindow, toolbar: QToolBar) -> None:
        super().__init__(window)
        self.window = window
        self.live = LiveTab(window.bench, window.flow.questions, window)
        self.graphs = ReplayView(window)
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
        toolbar.addSeparator()
        toolbar.addAction(self.monitor_action)
        toolbar.addWidget(QLabel(" every "))
        toolbar.addWidget(self.interval_spin)

        self.live.controller.host_state.connect(window.host_list.set_status)
        self.live.controller.message.connect(window.show_status)
        self.live.run_stored.connect(lambda _run_id: window.reload_runs())
        self.runs_pane.open_graphs.connect(lambda ids: self.open_runs(ids, replay=False))
        self.runs_pane.replay.connect(lambda ids: self.open_runs(ids, replay=True))

    def add_tabs(self) -> None:
        tabs = self.window.tabs
        tabs.addTab(self.live, "Live")
        tabs.addTab(self.graphs, "Graphs")

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

    def open_runs(self, run_ids: list[int], replay: bool) -> None:
        names = ", ".join(f"#{i}" for i in run_ids)
        self.window.run_job(load_stored_runs, self.window.bench, run_ids, what=f"Opening run {names}",
                            on_done=lambda runs: self._show_runs(runs, replay))

    def _show_runs(self, runs: list[StoredRun], replay: bool) -> None:
        self.graphs.open_runs(runs, replay=replay)
        self.window.tabs.setCurrentWidget(self.graphs)

    def shutdown(self, timeout_ms: int) -> bool:
        self.graphs.stop()
        return self.live.shutdown(timeout_ms)
