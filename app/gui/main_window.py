"""The main window: hosts on the left, their facts and the stored runs on the right.

Everything that touches SSH or the store runs in the window's WorkerPool; slots here only get
plain data back (HostSpec, RunRecord, dicts) and update widgets.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.engine.hosts_map import host_groups
from app.errors import is_user_error
from app.gui.close_guard import CloseGuard, what_would_be_lost
from app.gui.host_actions import FactsFlow
from app.gui.host_inventory import HostInventory
from app.gui.import_dialog import ImportDialog
from app.gui.lazy_tabs import LazyTabs
from app.gui.live_tab import LiveFeatures
from app.gui.run_reattach import RunReattacher
from app.gui.window_facts import FactsShown
from app.gui.window_menus import RunsMenuActions, host_menu, popup, runs_menu
from app.gui.window_state import fit_default_size, keep_inside_screen, restore_parts, restore_window, save_window
from app.gui.window_toolbars import ToolbarRows
from app.gui.window_toolbars import toolbar as make_toolbar
from app.gui.workers import Worker, WorkerPool
from remote.hostspec import LOCAL_HOST_NAME, HostSpec
from widgets.facts_view import FactsView
from widgets.format import one_line
from widgets.host_colours import set_known_hosts
from widgets.host_editor import HostEditor
from widgets.host_groups import HostGroupBar, select_hosts
from widgets.host_list import HostList
from widgets.runs_table import RunsTable
from widgets.wheel_scroll import latch_wheel

if TYPE_CHECKING:
    from app.gui.compare_tab import CompareTab
    from app.workbench import Workbench

log = logging.getLogger(__name__)
RUNS_SHOWN = 500
FACTS = "facts"   # a facts gathering is stored as a run, but it is no test: the Runs tab leaves it out
COMPARE = "compare"        # the Compare tab's key among the lazy tabs
CLOSE_WAIT_MS = 15_000   # a connect in progress is bounded by its own timeout; do not hang longer


class MainWindow(QMainWindow, HostInventory, FactsShown):
    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bench = workbench
        self.setObjectName("mainWindow")
        self.setWindowTitle("Benchbay")
        fit_default_size(self)
        self.pool = WorkerPool(self)
        self.flow = FactsFlow(workbench, self.pool, self)
        self.host_editor: HostEditor | None = None
        self.import_dialog: ImportDialog | None = None
        self._aliases: list[str] = []
        self._facts: dict[str, tuple[Any, dict]] = {}       # host -> (collected_at, facts)
        self._facts_loaded: set[str] = set()                 # hosts whose stored facts were looked up
        self._closing = False
        self._state_saved = False
        self._select_after_refresh: str | None = None
        self._painted = False

        self.host_list = HostList()
        self.facts_view = FactsView()
        self.runs_table = RunsTable()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.facts_view, "Facts")
        # the window opens on Facts: Graphs and Compare (charts) are made when first shown or used
        self.lazy_tabs = LazyTabs(self.tabs)
        self.lazy_tabs.on_built(self._tab_built)
        self._runs: list = []          # the stored runs listed: handed to Compare when it is made

        left = QWidget()
        left.setObjectName("hostPane")
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.host_list)
        self.host_groups = HostGroupBar()   # one click selects a rack (the hosts' tags)
        self.host_groups.group_chosen.connect(self._select_group)
        left_layout.insertWidget(0, self.host_groups)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("mainSplitter")
        splitter.addWidget(left)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([270, 970])
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        # on a small screen (1280x720 at 200 %) the window still fits: what does not fit scrolls, uncut
        page = QScrollArea()
        page.setObjectName("windowPage")
        page.setFrameShape(QFrame.Shape.NoFrame)
        page.setWidgetResizable(True)
        page.setWidget(splitter)
        self.setCentralWidget(page)

        self._make_actions()
        self.live = LiveFeatures(self, self.tests_toolbar)    # Monitor, Live and Graphs tabs, Open graphs/Replay
        self.tabs.addTab(self.live.runs_pane, "Runs")
        self.live.add_tabs()
        self.lazy_tabs.add(COMPARE, "Compare", self._make_compare)
        self.live.runs_pane.compare.connect(self.compare_runs)
        self.live.runs_pane.import_requested.connect(lambda: self.compare.exports.ask_import(self))
        self.runs_actions = RunsMenuActions(self, self)
        self.host_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.host_list.customContextMenuRequested.connect(self._host_menu)
        self.runs_table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.runs_table.customContextMenuRequested.connect(self._runs_menu)
        self.close_guard = CloseGuard(self, self.unsaved_work)
        self._update_actions()
        self.statusBar().setSizeGripEnabled(True)
        if workbench.read_only:   # a store on a read-only mount: everything reads, nothing can be saved
            self.read_only_notice = QLabel(f"Read-only store: nothing is saved ({workbench.read_only})")
            self.read_only_notice.setObjectName("readOnlyNotice")
            self.read_only_notice.setToolTip(workbench.store_description())
            self.statusBar().addPermanentWidget(self.read_only_notice)

        self.host_list.current_host_changed.connect(self._on_current_host)
        self.host_list.host_activated.connect(self.gather_facts)
        self.host_list.itemSelectionChanged.connect(self._update_actions)
        self.flow.host_state.connect(self._on_host_state)
        self.flow.message.connect(self.show_status)
        self.flow.facts_ready.connect(self._on_facts)
        self.pool.job_done.connect(lambda _key: self._update_actions())
        self.refresh()
        # runs a Benchbay that went away left "running": collected in workers, reported in the status bar
        self.reattacher = RunReattacher(workbench, self, scan_pool=self.pool)
        self.reattacher.message.connect(self.show_status)
        self.reattacher.stored.connect(lambda _outcome: self.reload_runs())
        self.reattacher.start()
        self.geometry_restored = restore_window(self, workbench.home)
        # the page scrolls on a small screen, and the charts' grid in it: one turn of the wheel moves one
        latch_wheel(self)

    # -- set-up ----------------------------------------------------------------------------------

    def _make_compare(self) -> CompareTab:
        # imported when first used: its statistics and charts cost seconds at start-up
        from app.gui.compare_tab import CompareTab

        return CompareTab(self.bench, self.pool, self)

    @property
    def compare(self) -> CompareTab:
        """The Compare tab's page (made now if it was not yet)."""
        return self.lazy_tabs.page(COMPARE)  # type: ignore[return-value]

    def _tab_built(self, key: str, page: QWidget) -> None:
        latch_wheel(page)
        restore_parts(page, self.bench.home)   # its splitter and "Servers as columns" as the user left them
        if key == COMPARE:
            page.message.connect(self.show_status)
            page.runs_changed.connect(self.reload_runs)
            page.set_runs(self._runs)

    def _make_actions(self) -> None:
        def action(text: str, slot: Callable[[], object], tip: str, shortcut: Any = None,
                   on_hosts: bool = False) -> QAction:
            act = QAction(text, self)
            act.setToolTip(tip)
            act.setStatusTip(tip)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            act.triggered.connect(lambda _checked=False: slot())
            if on_hosts:   # F2 and Delete act on a host only where the hosts are: not in a table or a field
                act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
                self.host_list.addAction(act)
            else:
                self.addAction(act)
            return act

        self.add_action = action("Add host…", self.add_host, "Add an SSH host", QKeySequence.StandardKey.New)
        self.edit_action = action("Edit…", self.edit_host, "Change the selected host", "F2", on_hosts=True)
        self.remove_action = action("Remove", self.remove_host, "Remove the selected host from the list "
                                    "(its stored runs are kept)", QKeySequence.StandardKey.Delete, on_hosts=True)
        self.import_action = action("Import from ~/.ssh/config…", self.import_hosts,
                                    "Add hosts that ~/.ssh/config already describes")
        self.gather_action = action("Gather facts", self.gather_facts,
                                    "Connect to the selected hosts and collect their hardware and software facts "
                                    "(Ctrl+G)", "Ctrl+G")
        # F5 is Refresh alone: bound twice, Qt would run neither ("Ambiguous shortcut overload")
        self.refresh_action = action("Refresh", self.refresh, "Reload hosts and runs (F5)",
                                     QKeySequence.StandardKey.Refresh)
        self.quit_action = action("Quit", self.request_close, "Close Benchbay (asks first while a test runs "
                                  "or a comparison is unsaved)", QKeySequence.StandardKey.Quit)
        self.gather_action.setObjectName("gatherAction")
        self.refresh_action.setObjectName("refreshAction")

        # hosts, facts and tests: side by side while they fit, else on rows of their own (window_toolbars)
        toolbar = make_toolbar(self, "Hosts", "mainToolbar")
        for act in (self.add_action, self.edit_action, self.remove_action, self.import_action):
            toolbar.addAction(act)
        self.facts_toolbar = make_toolbar(self, "Facts", "factsToolbar")
        self.facts_toolbar.addAction(self.gather_action)
        self.facts_toolbar.addSeparator()
        self.facts_toolbar.addAction(self.refresh_action)
        self.toolbar = toolbar
        self.tests_toolbar = make_toolbar(self, "Tests", "testsToolbar")   # LiveFeatures adds the tests' actions
        self.toolbar_rows = ToolbarRows(self, [toolbar, self.facts_toolbar, self.tests_toolbar])

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.Paint and not self._painted:
            self._painted = True   # the window is on screen: now the Live tab's charts may load
            QTimer.singleShot(0, self.live.after_first_paint)
        return handled

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():   # the frame is known a moment after the first show
            QTimer.singleShot(0, lambda: keep_inside_screen(self))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.toolbar_rows.fit()

    # -- background jobs -------------------------------------------------------------------------

    def run_job(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
                what: str = "", key: str | None = None) -> Worker:
        """Run fn in the pool; on failure the reason goes to the status bar."""
        worker = Worker(fn, *args)
        if on_done is not None:
            worker.finished.connect(on_done)
        worker.failed.connect(lambda exc: self._job_failed(what, exc))
        return self.pool.start(worker, key=key)

    def _job_failed(self, what: str, exc: BaseException) -> None:
        if not is_user_error(exc):
            import sys

            sys.excepthook(type(exc), exc, exc.__traceback__)
        reason = one_line(str(exc)) or type(exc).__name__
        self.show_status(f"{what}: {reason}" if what else reason)

    def show_status(self, text: str) -> None:
        self.statusBar().showMessage(one_line(text, 300))

    # -- inventory -------------------------------------------------------------------------------

    def refresh(self) -> None:
        bench = self.bench

        def load() -> tuple[list[HostSpec], list, list[str]]:
            return bench.list_hosts(), bench.list_runs(limit=RUNS_SHOWN, exclude_test=FACTS), bench.ssh_config_aliases()

        # facts may have been gathered elsewhere (the CLI): look them up again
        self._facts.clear()
        self._facts_loaded.clear()
        self.run_job(load, on_done=self._on_inventory, what="Loading hosts")

    def _on_inventory(self, data: tuple[list[HostSpec], list, list[str]]) -> None:
        hosts, runs, aliases = data
        self._aliases = aliases
        self.host_list.set_hosts(hosts)
        set_known_hosts(host.name for host in hosts)   # each host's colour: its place in the inventory
        self.host_groups.set_groups(host_groups(hosts))
        if self._select_after_refresh:
            self.host_list.select_host(self._select_after_refresh)
            self._select_after_refresh = None
        self._show_runs(runs)
        if not self.statusBar().currentMessage():
            self.show_status(f"{len(hosts)} host{'s' if len(hosts) != 1 else ''}, "
                             f"{len(runs)} stored run{'s' if len(runs) != 1 else ''}")
        self._update_actions()
        current = self.host_list.current_host()
        if current:
            self._show_facts(current)

    def _select_group(self, tag: str, names: list[str]) -> None:
        chosen = select_hosts(self.host_list, names)
        self.show_status(f"{tag}: {len(chosen)} hosts selected; Monitor and Run test act on them")

    def reload_runs(self) -> None:
        if self._closing:
            return   # a monitor stored while the window closes: nobody will look
        bench = self.bench
        self.run_job(lambda: bench.list_runs(limit=RUNS_SHOWN, exclude_test=FACTS), on_done=self._on_runs,
                     what="Loading runs")

    def _on_runs(self, runs: list) -> None:
        self._show_runs(runs)

    def _show_runs(self, runs: list) -> None:
        self._runs = runs
        self.runs_table.set_runs(runs)
        if self.lazy_tabs.is_built(COMPARE):
            self.compare.set_runs(runs)
        self.tabs.setTabText(1, f"Runs ({len(runs)})" if runs else "Runs")

    def compare_runs(self, run_ids: list[int]) -> None:
        self.compare.compare(run_ids)
        self.tabs.setCurrentWidget(self.compare)

    def confirm(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text, QMessageBox.StandardButton.Yes
                                      | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes

    def _update_actions(self) -> None:
        name = self.host_list.current_host() if hasattr(self, "host_list") else None
        editable = bool(name) and name != LOCAL_HOST_NAME
        busy = bool(name) and self.flow.is_busy(name)
        self.edit_action.setEnabled(editable and not busy)
        self.remove_action.setEnabled(editable and not busy)
        selected = self.host_list.selected_hosts() if hasattr(self, "host_list") else []
        self.gather_action.setEnabled(any(not self.flow.is_busy(host) for host in selected))
        if hasattr(self, "live"):
            self.live.monitor_action.setEnabled(bool(self.host_list.selected_hosts()))

    # -- stopping --------------------------------------------------------------------------------

    def shutdown(self, timeout_ms: int = CLOSE_WAIT_MS) -> bool:
        """Stop monitors (they are stored), drop pending jobs and wait for running ones."""
        if self._closing:
            return self.pool.active_count() == 0
        self._save_state()   # also when the application quits without a close (Ctrl+C in the terminal)
        self._closing = True
        reattached_stopped = self.reattacher.shutdown(timeout_ms)
        monitors_stopped = self.live.shutdown(timeout_ms)
        self.pool.cancel_all()
        return self.pool.wait(timeout_ms) and monitors_stopped and reattached_stopped

    # -- context menus -------------------------------------------------------------------------

    def _host_menu(self, pos: QPoint) -> None:
        if self.host_list.itemAt(pos) is None:
            return
        popup(self.host_menu(), self.host_list, pos)

    def host_menu(self) -> QMenu:
        """Run test, Monitor, Gather facts, Edit, Remove for the selected host(s)."""
        self._update_actions()
        return host_menu(self.host_list, self.live.run_action, self.live.monitor_action, self)

    def _runs_menu(self, pos: QPoint) -> None:
        if not self.runs_table.indexAt(pos).isValid():
            return
        popup(self.runs_menu(), self.runs_table, pos)

    def runs_menu(self) -> QMenu:
        """Show results, Open graphs, Replay, Compare, Export, Delete for the selected runs."""
        return runs_menu(self.live.runs_pane, self.runs_actions.ask_export, self.runs_actions.ask_delete)

    # -- closing ---------------------------------------------------------------------------------

    def unsaved_work(self) -> str:
        """What closing now would lose, in words; empty when nothing."""
        unsaved = self.lazy_tabs.is_built(COMPARE) and self.compare.has_unsaved_changes()
        return what_would_be_lost(self.live.running_tests(), unsaved)

    def request_close(self) -> bool:
        """Close, asking first when a test runs or a comparison is unsaved; False while the question is open."""
        if self.close_guard.should_wait():
            return False
        return self.close()

    def _save_state(self) -> None:
        if not self._closing and not self._state_saved:
            self._state_saved = True
            save_window(self, self.bench.home)

    def closeEvent(self, event: QCloseEvent) -> None:
        # the window manager's close button asks; a close from code (quit, tests) already decided
        if event.spontaneous() and self.close_guard.should_wait():
            event.ignore()
            return
        self._save_state()   # before hiding: the geometry the user sees
        if self.pool.active_count() or self.live.busy_hosts() or self.reattacher.pool.active_count():
            self.show_status("Waiting for background work to stop…")
            self.hide()
        self.shutdown()
        super().closeEvent(event)
