"""The window's way to a shared-storage sweep: a toolbar action, its form, and the live total in the Live tab.

The chart sits above the Live tab's host panels while a sweep runs and stays with its last figures
afterwards, with the sweep curve (each step's total, the knee marked) beside it; the runs it stores
(one per client and the TOTAL) appear in the Runs tab.
"""
from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QTabWidget, QToolBar, QWidget

from app.engine.orchestrator import RunRequestError
from app.engine.shared_run import SharedOutcome, SharedRequest, plan
from app.gui.shared_live import SharedLive
from app.workbench import Workbench
from widgets.dashboard import Dashboard
from widgets.host_list import HostList
from widgets.shared_run_dialog import SharedChoice, SharedRunDialog
from widgets.shared_sweep_chart import SharedSweepChart, SweepPoint
from widgets.shared_total_chart import SharedTotalChart

CHART_HEIGHT = 320


class SharedHost(Protocol):
    """What this uses of the main window (also the Qt parent)."""

    bench: Workbench
    host_list: HostList
    tabs: QTabWidget

    def show_status(self, text: str) -> None: ...
    def reload_runs(self) -> None: ...


class LiveView(Protocol):
    """What this uses of the Live tab (app.gui.live_tab.LiveTab, which creates this): a widget with a
    layout, its host panels and which hosts are busy."""

    dashboard: Dashboard

    def layout(self) -> QBoxLayout: ...
    def busy_hosts(self) -> set[str]: ...


class SharedFeatures(QObject):
    def __init__(self, window: Any, live: LiveView, toolbar: QToolBar) -> None:
        super().__init__(window)
        self.window: SharedHost = window
        self.live = live
        # the live total, and beside it the sweep curve once the sweep is over
        self.panel = QWidget(live)
        self.panel.setObjectName("sharedPanel")
        self.panel.setMinimumHeight(CHART_HEIGHT)
        self.chart = SharedTotalChart(parent=self.panel)
        self.sweep = SharedSweepChart(parent=self.panel)
        self.sweep.hide()
        row = QHBoxLayout(self.panel)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.chart, 2)
        row.addWidget(self.sweep, 1)
        self.panel.hide()
        live.layout().insertWidget(1, self.panel)   # under the progress, above the host panels
        self.feed = SharedLive(window.bench, self.chart, self)
        self.feed.finished.connect(self._finished)
        # each client's telemetry in the Live tab's host panels, as any run's
        queued = Qt.ConnectionType.QueuedConnection
        self.feed.sample.connect(live.dashboard.add_sample, queued)
        self.feed.event.connect(live.dashboard.add_event, queued)
        self.feed.failed.connect(lambda exc: window.show_status(f"Shared storage test failed: {exc}"))
        self.action = QAction("Shared storage…", window)
        self.action.setObjectName("sharedStorageAction")
        tip = ("Run one job on several client hosts at once against one shared directory (NFS, a NAS ...): "
               "the total and each client live, a sweep over clients and threads")
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)
        self.action.triggered.connect(lambda _checked=False: self.open_dialog())
        toolbar.addAction(self.action)
        self.dialog: SharedRunDialog | None = None

    def open_dialog(self) -> SharedRunDialog:
        hosts = self.window.host_list
        dialog = SharedRunDialog(hosts.host_names(), hosts.selected_hosts(), self._problem, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.start_requested.connect(self.start)
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        self.dialog = dialog
        dialog.show()
        return dialog

    def _problem(self, choice: SharedChoice) -> str:
        if self.feed.running:
            return "A shared-storage sweep is running: wait for it or cancel it"
        try:
            plan(SharedRequest(choice.hosts, dict(choice.params)), "check")
        except RunRequestError as exc:
            return str(exc)
        return ""

    def start(self, choice: SharedChoice) -> None:
        self.feed.start(SharedRequest(choice.hosts, dict(choice.params)))
        if not self.live.busy_hosts():
            self.live.dashboard.clear()
        for host in choice.hosts:
            self.live.dashboard.add_host(host)
        self.sweep.hide()
        self.panel.show()
        self.window.tabs.setCurrentWidget(self.live)
        self.window.show_status(f"Shared storage test on {', '.join(choice.hosts)}: the clients get ready …")

    def _finished(self, outcome: SharedOutcome) -> None:
        knee = outcome.knee.text if outcome.knee else "no complete step"
        if outcome.steps:
            labels = {s.name: f"{s.clients}x{s.threads}" for s in outcome.steps}
            self.sweep.set_sweep([SweepPoint(labels[s.name], s.clients, s.threads, s.ops) for s in outcome.steps],
                                 labels.get(outcome.knee.step or "") if outcome.knee else None, knee)
            self.sweep.show()
        stored = f"TOTAL stored as run #{outcome.total_run_id}" if outcome.total_run_id else "nothing stored"
        self.window.show_status(f"Shared storage: {stored}; {knee}" + (f" ({outcome.error})" if outcome.error else ""))
        self.window.reload_runs()

    def shutdown(self, timeout_ms: int) -> bool:
        return self.feed.shutdown(timeout_ms)
