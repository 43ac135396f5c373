"""The Runs tab: the stored runs table with "Open graphs" and "Replay" for the selected runs.

Below the table, the results of the one selected run (loaded by the owner). The results area is
always there, so a click never moves the list under the pointer: single click shows results,
double-click opens the graphs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.gui.run_controller import RunResults
from app.summary.results_page import results_page
from storage.records import RunStatus
from widgets.chart_theme import MUTED
from widgets.runs_table import RunsTable
from widgets.wheel_scroll import latch_wheel

if TYPE_CHECKING:
    from widgets.results_view import ResultsView


class RunsPane(QWidget):
    """Double-click a run (or "Open graphs") to see its telemetry; several runs open overlaid."""

    open_graphs = Signal(list)   # run ids
    replay = Signal(list)        # run ids
    run_chosen = Signal(int)     # one run selected: load its results, then show_results()
    compare = Signal(list)       # run ids
    import_requested = Signal()

    def __init__(self, table: RunsTable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runsPane")
        self.table = table
        self.open_button = QPushButton("Open graphs")
        self.open_button.setObjectName("openGraphsButton")
        self.open_button.setToolTip("Show the telemetry of the selected run(s), the whole run at once")
        self.replay_button = QPushButton("Replay")
        self.replay_button.setObjectName("replayButton")
        self.replay_button.setToolTip("Replay the selected run(s) as they were recorded, 1x to 60x")
        self.compare_button = QPushButton("Compare selected")
        self.compare_button.setObjectName("compareSelectedButton")
        self.compare_button.setToolTip("Compare the selected runs side by side in the Compare tab")
        self.import_button = QPushButton("Import runs…")
        self.import_button.setObjectName("importRunsButton")
        self.import_button.setToolTip("Add runs exported from another Benchbay (a JSON file); runs already "
                                      "stored are skipped")
        hint = QLabel("Click a run for its results, double-click for its graphs.")
        hint.setObjectName("runsHint")
        hint.setStyleSheet(f"color: {MUTED};")
        hint.setToolTip("Runs with telemetry (monitors, tests) have graphs.")
        # the hint gives way (it is cut, not the buttons) when the window is narrow
        hint.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        hint.setMinimumWidth(0)
        self.hint = hint
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 4, 4, 4)
        bar.addWidget(self.open_button)
        bar.addWidget(self.replay_button)
        bar.addWidget(self.compare_button)
        bar.addWidget(hint, 1)
        bar.addWidget(self.import_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        self._results: ResultsView | None = None   # made with the first results shown (its charts are slow)
        self.placeholder = QLabel("Select a run to see its results here.")
        self.placeholder.setObjectName("resultsPlaceholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet(f"color: {MUTED};")
        self.placeholder.setWordWrap(True)
        self.results_area = QStackedWidget()
        self.results_area.setObjectName("resultsArea")
        self.results_area.addWidget(self.placeholder)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("runsSplitter")
        self.splitter.addWidget(table)
        self.splitter.addWidget(self.results_area)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([290, 310])   # 8+ runs in view at 720 px; the user's own split is remembered
        table.setMinimumHeight(120)
        layout.addWidget(self.splitter, 1)
        self.open_button.clicked.connect(lambda _checked=False: self._emit(self.open_graphs))
        self.replay_button.clicked.connect(lambda _checked=False: self._emit(self.replay))
        self.compare_button.clicked.connect(lambda _checked=False: self._emit(self.compare))
        self.import_button.clicked.connect(lambda _checked=False: self.import_requested.emit())
        table.doubleClicked.connect(lambda _index: self._emit(self.open_graphs))
        table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        table.model().modelReset.connect(self._update_buttons)
        self._update_buttons()

    @property
    def results(self) -> ResultsView:
        """The results view below the table, made now if it was not yet."""
        if self._results is None:
            # imported with the first results shown: its charts' library is no part of the window's start
            from widgets.results_view import ResultsView

            self._results = ResultsView()
            self.results_area.addWidget(self._results)
            latch_wheel(self._results)   # it scrolls inside the window's page
        return self._results

    def selected_ids(self) -> list[int]:
        return [run.id for run in self.table.selected_runs()]

    def _emit(self, signal: SignalInstance) -> None:
        ids = self.selected_ids()
        if ids:
            signal.emit(ids)

    def _selection_changed(self) -> None:
        self._update_buttons()
        runs = self.table.selected_runs()
        if len(runs) == 1 and runs[0].status != RunStatus.RUNNING:
            self.run_chosen.emit(runs[0].id)
        elif len(runs) > 1:
            self._placeholder(f"{len(runs)} runs selected: “Compare selected” shows them side by side.")
        elif runs:
            self._placeholder(f"Run #{runs[0].id} is still running: its results come when it ends.")
        else:
            self._placeholder("Select a run to see its results here.")

    def _placeholder(self, text: str) -> None:
        self.placeholder.setText(text)
        self.results_area.setCurrentWidget(self.placeholder)

    def results_shown(self) -> bool:
        return self._results is not None and self.results_area.currentWidget() is self._results

    def show_results(self, results: RunResults) -> None:
        """Runs without results (monitors) say so, and where their graphs are."""
        if not results.results:
            self._placeholder(f"Run #{results.run.id} has no results (a monitor records telemetry only): "
                              "double-click it for its graphs.")
            return
        self.results.set_page(results_page(results.run, results.results, results.warnings))
        self.results.set_group(results.group_title, results.group)
        self.results_area.setCurrentWidget(self.results)

    def _update_buttons(self) -> None:
        chosen = bool(self.table.selectionModel().selectedRows())
        self.open_button.setEnabled(chosen)
        self.replay_button.setEnabled(chosen)
        self.compare_button.setEnabled(chosen)
