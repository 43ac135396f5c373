"""The results of the tests the window ran, shown when they end: one tab per run, caveats first.

When the last running test ends, the window opens by itself with every run that finished done;
a progress row's Results button opens it on that run. Results are loaded in a worker (plain data)
and laid out by widgets.results_view.ResultsView, as the Runs tab shows them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSize
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTabWidget, QVBoxLayout, QWidget

from app.engine.orchestrator import RunOutcome
from app.gui.workers import Worker, WorkerPool
from app.summary.base import warning_messages
from app.summary.group_page import group_table, group_title
from app.summary.results_page import results_page
from app.workbench import Workbench
from storage.records import ResultSample, RunRecord, RunStatus
from widgets.results_data import TableData
from widgets.screen_fit import fit_to_screen

if TYPE_CHECKING:
    from widgets.results_view import ResultsView

RESULTS_SIZE = QSize(1200, 860)
MAX_TABS = 12   # the oldest runs' tabs go first


@dataclass(frozen=True)
class RunResults:
    """What the results view shows of a stored run (plain data, loaded in a worker)."""

    run: RunRecord
    results: list[ResultSample]
    warnings: list[str]
    group_title: str = ""
    group: TableData | None = None   # a repeated test: its median and spread over the finished runs


def load_run_results(bench: Workbench, run_id: int) -> RunResults | None:
    detail = bench.find_run(run_id)
    if detail is None:
        return None
    warnings = warning_messages(bench.run_events(run_id))
    title, group = "", None
    if detail.run.repeat_group:
        done = [run for run in bench.repeat_runs(detail.run.repeat_group) if run.status == RunStatus.DONE]
        if len(done) >= 2:
            runs = [(run.id, list(found.results)) for run in done if (found := bench.find_run(run.id)) is not None]
            title, group = group_title([run_id for run_id, _results in runs]), group_table(runs)
    return RunResults(detail.run, list(detail.results), warnings, title, group)


class RunResultsWindow(QDialog):
    """Non-modal: one tab per run ("host · test · #id"), the newest last."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runResultsWindow")
        self.setWindowTitle("Test results")
        fit_to_screen(self, RESULTS_SIZE)   # wide enough for a disk run's table without sideways scrolling
        self.tabs = QTabWidget()
        self.tabs.setObjectName("runResultsTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self._close_tab)
        self.views: dict[int, ResultsView] = {}
        hint = QLabel("Every run is stored: the Runs tab lists them, to compare or export.")
        hint.setObjectName("runResultsHint")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(hint)
        layout.addWidget(buttons)

    def add_results(self, results: RunResults) -> ResultsView:
        """A tab for the run (replaced when it is there already); it becomes the current tab."""
        run = results.run
        view = self.views.get(run.id)
        if view is None:
            from widgets.results_view import ResultsView  # its charts load with the first results shown

            view = ResultsView()
            self.views[run.id] = view
            group = f" · run {run.repeat_index}" if run.repeat_group and run.repeat_index else ""
            self.tabs.addTab(view, f"{run.host_name} · {run.test} · #{run.id}{group}")
            while self.tabs.count() > MAX_TABS:
                self._close_tab(0)
        view.set_page(results_page(run, results.results, results.warnings))
        view.set_group(results.group_title, results.group)
        self.tabs.setCurrentWidget(view)
        return view

    def show_run(self, run_id: int) -> bool:
        view = self.views.get(run_id)
        if view is not None:
            self.tabs.setCurrentWidget(view)
        return view is not None

    def _close_tab(self, index: int) -> None:
        view = self.tabs.widget(index)
        self.tabs.removeTab(index)
        for run_id, shown in list(self.views.items()):
            if shown is view:
                del self.views[run_id]
        if view is not None:
            view.deleteLater()


class RunResultsPanel(QObject):
    """Loads the results of finished tests and shows them: by itself once no test runs, or when asked."""

    def __init__(self, workbench: Workbench, runs: QObject, parent: QWidget,
                 running: Callable[[], list[str]] | None = None) -> None:
        super().__init__(runs)
        self._bench = workbench
        self._parent = parent
        self._running = running or getattr(runs, "running_hosts", lambda: [])
        self.pool = WorkerPool(self)
        self.window: RunResultsWindow | None = None
        self._loading: set[int] = set()
        self._open_when_loaded: set[int] = set()
        self._fresh: list[int] = []   # done since the window last opened by itself
        self._closing = False

    def run_finished(self, host: str, outcome: RunOutcome) -> None:
        """A test ended: a done run's results are loaded; once no test runs, they are shown."""
        if self._closing:
            return
        if outcome.status == RunStatus.DONE:
            self._fresh.append(outcome.run_id)
            self._load(outcome.run_id)
        self._open_if_over()

    def show_run(self, _host: str, run_id: int) -> None:
        """A progress row's Results button."""
        if self.window is not None and self.window.show_run(run_id):
            self._present()
            return
        self._open_when_loaded.add(run_id)
        self._load(run_id)

    def _load(self, run_id: int) -> None:
        if run_id in self._loading:
            return
        self._loading.add(run_id)
        worker = Worker(load_run_results, self._bench, run_id)
        worker.finished.connect(lambda results: self._loaded(run_id, results))
        worker.failed.connect(lambda _exc: self._loaded(run_id, None))
        self.pool.start(worker)

    def _loaded(self, run_id: int, results: RunResults | None) -> None:
        self._loading.discard(run_id)
        if self._closing:
            return
        if results is not None and results.results:
            self._ensure_window().add_results(results)
        if run_id in self._open_when_loaded:
            self._open_when_loaded.discard(run_id)
            if self.window is not None and self.window.show_run(run_id):
                self._present()
        self._open_if_over()

    def _open_if_over(self) -> None:
        """Open by itself when the last test has ended and every done run's results are in."""
        if not self._fresh or self._running() or self._loading & set(self._fresh):
            return
        last = next((run_id for run_id in reversed(self._fresh) if self.window and run_id in self.window.views), None)
        self._fresh.clear()
        if last is not None and self.window is not None:
            self.window.show_run(last)
            self._present()

    def _ensure_window(self) -> RunResultsWindow:
        if self.window is None:
            self.window = RunResultsWindow(self._parent)   # closing hides it: its tabs stay for Results
        return self.window

    def _present(self) -> None:
        if self.window is None:
            return
        if self.window.isVisible():
            self.window.raise_()
        else:
            self.window.show()   # a new window comes on top by itself

    def shutdown(self) -> None:
        self._closing = True
        self.pool.cancel_all()
        self.pool.wait(5_000)
        if self.window is not None:
            self.window.close()
