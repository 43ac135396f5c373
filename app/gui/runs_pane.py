"""The Runs tab: the stored runs table with "Open graphs" and "Replay" for the selected runs."""
from __future__ import annotations

from PySide6.QtCore import Signal, SignalInstance
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from widgets.live_plot import MUTED
from widgets.runs_table import RunsTable


class RunsPane(QWidget):
    """Double-click a run (or "Open graphs") to see its telemetry; several runs open overlaid."""

    open_graphs = Signal(list)   # run ids
    replay = Signal(list)        # run ids

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
        hint = QLabel("Runs with telemetry (monitors, tests) have graphs. Double-click a run to open them.")
        hint.setStyleSheet(f"color: {MUTED};")
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 4, 4, 4)
        bar.addWidget(self.open_button)
        bar.addWidget(self.replay_button)
        bar.addWidget(hint, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(table, 1)
        self.open_button.clicked.connect(lambda _checked=False: self._emit(self.open_graphs))
        self.replay_button.clicked.connect(lambda _checked=False: self._emit(self.replay))
        table.doubleClicked.connect(lambda _index: self._emit(self.open_graphs))
        table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        table.model().modelReset.connect(self._update_buttons)
        self._update_buttons()

    def selected_ids(self) -> list[int]:
        return [run.id for run in self.table.selected_runs()]

    def _emit(self, signal: SignalInstance) -> None:
        ids = self.selected_ids()
        if ids:
            signal.emit(ids)

    def _update_buttons(self) -> None:
        chosen = bool(self.table.selectionModel().selectedRows())
        self.open_button.setEnabled(chosen)
        self.replay_button.setEnabled(chosen)
