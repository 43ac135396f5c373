"""The Runs tab: the stored runs table with "Open graphs" and "Replay" for the selected runs.

Below the table, the results of the one selected run when it has results (loaded by the owner).
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from app.gui.run_controller import RunResults
from app.summary.results_page import results_page
from storage.records import RunStatus
from widgets.live_plot import MUTED
from widgets.results_view import ResultsView
from widgets.runs_table import RunsTable


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
        hint = QLabel("Runs with telemetry (monitors, tests) have graphs. Double-click a run to open them.")
        hint.setStyleSheet(f"color: {MUTED};")
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
        self.results = ResultsView()
        self.results.hide()
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(table)
        self.splitter.addWidget(self.results)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setStretchFactor(1, 3)
        layout.addWidget(self.splitter, 1)
        self.open_button.clicked.connect(lambda _checked=False: self._emit(self.open_graphs))
        self.replay_button.clicked.connect(lambda _checked=False: self._emit(self.replay))
        self.compare_button.clicked.connect(lambda _checked=False: self._emit(self.compare))
        self.import_button.clicked.connect(lambda _checked=False: self.import_requested.emit())
        table.doubleClicked.connect(lambda _index: self._emit(self.open_graphs))
        table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        table.model().modelReset.connect(self._update_buttons)
        self._update_buttons()

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
        else:
            self.results.hide()

    def show_results(self, results: RunResults) -> None:
        """Runs without results (monitors) show none."""
        if not results.results:
            self.results.hide()
            return
        self.results.set_page(results_page(results.run, results.results, results.warnings))
        self.results.show()
        if self.splitter.sizes()[1] < 200:
            self.splitter.setSizes([160, max(400, self.height() - 160)])

    def _update_buttons(self) -> None:
        chosen = bool(self.table.selectionModel().selectedRows())
        self.open_button.setEnabled(chosen)
        self.replay_button.setEnabled(chosen)
        self.compare_button.setEnabled(chosen)
