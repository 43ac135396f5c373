"""Monitoring and graphs in the main window: the Monitor and Run test actions, the Live tab, the Graphs tab.

LiveFeatures wires them (and the stored runs' Open graphs / Replay) into the MainWindow, so the window itself
stays about hosts and facts. The Live tab's page (app.gui.live_page: charts, the shared-storage and database
load panels) is made just after the window's first paint, its modules imported in a worker meanwhile, or at
once when a monitor, a test or the tab itself needs it first: the window paints without the charts' library.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QTabWidget, QToolBar, QWidget

from app.catalogue import CATALOGUE
from app.engine.orchestrator import MAX_INTERVAL, MIN_INTERVAL, RunRequest
from app.engine.repeats import RepeatedRequest, plan_for
from app.gui.host_actions import FactsFlow
from app.gui.lazy_tabs import LazyTabs
from app.gui.run_controller import RunResults, load_run_results
from app.gui.runs_pane import RunsPane
from app.gui.workers import Worker
from app.workbench import Workbench
from widgets.host_list import HostList
from widgets.runs_table import RunsTable
from widgets.test_forms_data import RunChoice

if TYPE_CHECKING:
    from app.engine.dbload_multi import DbMultiOutcome
    from app.gui.dbload_multi_live import DbMultiLive
    from app.gui.live_page import LiveTab
    from app.gui.replay import ReplayView, StoredRun
    from app.gui.shared_features import SharedFeatures
    from widgets.run_dialog import RunDialog

GRAPHS = "graphs"          # the Graphs tab's key among the window's lazy tabs
LIVE = "live"              # the Live tab's
# what the Live tab's page imports that the window's first paint does not need (charts: pyqtgraph, numpy)
LIVE_MODULES = ("app.gui.live_page", "app.gui.shared_features", "app.gui.dbload_multi_live", "app.gui.replay",
                "widgets.run_dialog")


def import_live_modules() -> None:
    """Runs in a worker: the imports only (no widget is made outside the GUI thread)."""
    for name in LIVE_MODULES:
        importlib.import_module(name)


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


class LiveFeatures(QObject):
    """The Monitor action (with its interval), the Live and Graphs tabs, and the Runs tab's buttons."""

    def __init__(self, window: LiveHost, toolbar: QToolBar) -> None:
        super().__init__(window)
        self.window = window
        self.toolbar = toolbar
        self.runs_pane = RunsPane(window.runs_table)
        self._shared: SharedFeatures | None = None
        self._dbmulti: DbMultiLive | None = None

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
        self.runs_pane.run_chosen.connect(self.load_results)
        self.runs_pane.open_graphs.connect(lambda ids: self.open_runs(ids, replay=False))
        self.runs_pane.replay.connect(lambda ids: self.open_runs(ids, replay=True))

    def add_tabs(self) -> None:
        self.window.lazy_tabs.add(LIVE, "Live", self._make_live)
        self.window.lazy_tabs.add(GRAPHS, "Graphs", self._make_graphs)

    def _make_graphs(self) -> QWidget:
        from app.gui.replay import ReplayView

        return ReplayView(self.window)

    def _make_live(self) -> QWidget:
        from app.gui.dbload_multi_live import DbMultiLive
        from app.gui.live_page import LiveTab
        from app.gui.shared_features import SharedFeatures

        window = self.window
        live = LiveTab(window.bench, window.flow.questions, window)
        self._shared = SharedFeatures(window, live, self.toolbar)   # the shared-storage sweep
        # the database load test with several hosts ticked: clients of one server, started together
        self._dbmulti = DbMultiLive(window.bench, live, window.tabs, self)
        self._dbmulti.finished.connect(self._dbmulti_finished)
        self._dbmulti.failed.connect(lambda exc: window.show_status(f"Database load failed: {exc}"))
        live.controller.host_state.connect(window.host_list.set_status)
        live.controller.message.connect(window.show_status)
        live.runs.host_state.connect(window.host_list.set_status)
        live.runs.message.connect(window.show_status)
        live.run_stored.connect(lambda _run_id: window.reload_runs())
        fit = getattr(window, "toolbar_rows", None)
        if fit is not None:   # the Shared storage action joined the tests' toolbar
            fit.fit()
        return live

    def after_first_paint(self) -> None:
        """Import the Live tab's modules in a worker, then make its page (unless something made it first)."""
        if not self.window.lazy_tabs.is_built(LIVE) and not self._closing():
            self.window.run_job(import_live_modules, on_done=self._imported, what="Loading the live charts")

    def _closing(self) -> bool:
        """A window closing (or quit at once) starts no job and needs no new page: nobody would see it."""
        return bool(getattr(self.window, "_closing", False))

    def _imported(self, _none: object) -> None:
        if not self._closing():
            _ = self.live

    @property
    def live(self) -> LiveTab:
        """The Live tab's page (made now if it was not yet)."""
        return self.window.lazy_tabs.page(LIVE)  # type: ignore[return-value]

    @property
    def live_made(self) -> bool:
        return self.window.lazy_tabs.is_built(LIVE)

    @property
    def shared(self) -> SharedFeatures:
        """The shared-storage sweep (made with the Live tab)."""
        _ = self.live
        assert self._shared is not None
        return self._shared

    @property
    def dbmulti(self) -> DbMultiLive:
        """The database load from several hosts together (made with the Live tab)."""
        _ = self.live
        assert self._dbmulti is not None
        return self._dbmulti

    def running_tests(self) -> list[str]:
        """The hosts a test runs on (none before the Live tab is made: tests start there)."""
        return list(self.live.runs.running_hosts()) if self.live_made else []

    def busy_hosts(self) -> set[str]:
        return self.live.busy_hosts() if self.live_made else set()

    @property
    def graphs(self) -> ReplayView:
        """The Graphs tab's page (made now if it was not yet: the window opens without it)."""
        return self.window.lazy_tabs.page(GRAPHS)  # type: ignore[return-value]

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
        from widgets.run_dialog import RunDialog

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
        from app.gui.replay import load_stored_runs

        self.window.run_job(load_stored_runs, self.window.bench, run_ids, what=f"Opening run {names}",
                            on_done=lambda runs: self._show_runs(runs, replay))

    def _show_runs(self, runs: list[StoredRun], replay: bool) -> None:
        self.graphs.open_runs(runs, replay=replay)
        self.window.tabs.setCurrentWidget(self.graphs)

    def shutdown(self, timeout_ms: int) -> bool:
        if self.window.lazy_tabs.is_built(GRAPHS):
            self.graphs.stop()
        if not self.live_made:
            return True   # nothing was monitored or tested: all of that starts in the Live tab
        shared_ended = self.shared.shutdown(timeout_ms)
        dbload_ended = self.dbmulti.shutdown(timeout_ms)
        return self.live.shutdown(timeout_ms) and shared_ended and dbload_ended
