"""Stored runs, newest first: a table model over RunRows (plain data handed in by the window)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from widgets.format import human_duration, local_time
from widgets.run_data import RunRow, RunState

COLUMNS = ("ID", "Host", "Test", "Status", "Started", "Duration")
# interrupted: a slate grey, quieter than failed: nothing went wrong on the host, the workbench went away
_STATUS_COLOURS = {RunState.FAILED: QColor("#c0392b"), RunState.CANCELLED: QColor("#8a6d1f"),
                   RunState.RUNNING: QColor("#2f6db5"), RunState.INTERRUPTED: QColor("#6b7785"),
                   # lost link: the amber of "reconnecting", as it still is: collected once the host answers
                   RunState.LOST_LINK: QColor("#b7791f")}
SORT_ROLE = Qt.ItemDataRole.UserRole


def run_duration(run: RunRow, now: datetime | None = None) -> str:
    if run.finished_at is None:
        if run.status != RunState.RUNNING:
            return "—"
        started = run.started_at if run.started_at.tzinfo else run.started_at.replace(tzinfo=timezone.utc)
        return human_duration((now or datetime.now(timezone.utc)) - started) + " so far"
    return human_duration(run.finished_at - run.started_at)


class RunsModel(QAbstractTableModel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._runs: list[RunRow] = []

    def set_runs(self, runs: list[RunRow]) -> None:
        self.beginResetModel()
        self._runs = list(runs)
        self.endResetModel()

    def run_at(self, row: int) -> RunRow:
        return self._runs[row]

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._runs)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        run = self._runs[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (str(run.id), run.host_name, run.test, run.status, local_time(run.started_at),
                    run_duration(run))[col]
        if role == SORT_ROLE:
            duration = (run.finished_at - run.started_at).total_seconds() if run.finished_at else -1.0
            return (run.id, run.host_name.lower(), run.test, run.status, run.started_at.timestamp(),
                    duration)[col]
        if role == Qt.ItemDataRole.ForegroundRole and col == 3:
            return _STATUS_COLOURS.get(run.status)
        if role == Qt.ItemDataRole.ToolTipRole and run.error:
            return run.error
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 5):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class RunsTable(QTableView):
    """Sortable, read-only, one row per run."""

    def __init__(self, parent: QWidget | None = None, model: RunsModel | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runsTable")
        self.runs_model = model if model is not None else RunsModel()   # a subclass may add columns
        self.runs_model.setParent(self)
        self._proxy = QSortFilterProxyModel(self)
        self._proxy.setSourceModel(self.runs_model)
        self._proxy.setSortRole(SORT_ROLE)
        self.setModel(self._proxy)
        self.setSortingEnabled(True)
        self.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setShowGrid(False)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

    def set_runs(self, runs: list[RunRow]) -> None:
        """New rows (a reload): the selection, the current run and the scroll position stay.

        selectionChanged is emitted only when what is selected changed (a run gone, a run that ended),
        so a reload does not make the owner load the same results again.
        """
        before = [(run.id, run.status) for run in self.selected_runs()]
        current = self._run_id_at(self.currentIndex())
        scroll = self.verticalScrollBar().value()
        selection = self.selectionModel()
        selection.blockSignals(True)
        try:
            self.runs_model.set_runs(runs)
            self.select_runs([run_id for run_id, _status in before])
            row = self._row_of(current)
            if row is not None:
                selection.setCurrentIndex(self._proxy.index(row, 0), selection.SelectionFlag.NoUpdate)
        finally:
            selection.blockSignals(False)
        self.verticalScrollBar().setValue(scroll)
        if [(run.id, run.status) for run in self.selected_runs()] != before:
            selection.selectionChanged.emit(QItemSelection(), QItemSelection())

    def _run_id_at(self, index: QModelIndex) -> int | None:
        if not index.isValid():
            return None
        return self.runs_model.run_at(self._proxy.mapToSource(index).row()).id

    def _row_of(self, run_id: int | None) -> int | None:
        if run_id is None:
            return None
        for row in range(self._proxy.rowCount()):
            if self._run_id_at(self._proxy.index(row, 0)) == run_id:
                return row
        return None

    def selected_runs(self) -> list[RunRow]:
        rows = {self._proxy.mapToSource(i).row() for i in self.selectionModel().selectedRows()}
        return [self.runs_model.run_at(r) for r in sorted(rows)]

    def shown_runs(self) -> list[RunRow]:
        """The runs in display (sorted) order."""
        return [self.runs_model.run_at(self._proxy.mapToSource(self._proxy.index(row, 0)).row())
                for row in range(self._proxy.rowCount())]

    def select_runs(self, run_ids: list[int]) -> None:
        """Select exactly the shown runs with these ids."""
        wanted = set(run_ids)
        selection = self.selectionModel()
        selection.clearSelection()
        flags = selection.SelectionFlag.Select | selection.SelectionFlag.Rows
        for row in range(self._proxy.rowCount()):
            index = self._proxy.index(row, 0)
            if self.runs_model.run_at(self._proxy.mapToSource(index).row()).id in wanted:
                selection.select(index, flags)
