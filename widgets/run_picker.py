"""Pick stored runs to compare: filters (host, test, dates, tag, text) over the runs handed in, a multi-select table.

The runs are plain records (RunRow) loaded by the owner; filtering happens here, in memory, so typing in the
filter never waits for the store.
"""
from __future__ import annotations

from datetime import datetime, time, timezone
from typing import Any

from PySide6.QtCore import QDate, QModelIndex, QPersistentModelIndex, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from widgets.chart_theme import MUTED
from widgets.run_data import RunRow
from widgets.runs_table import COLUMNS, RunsModel, RunsTable

ANY_HOST = "All hosts"
ANY_TEST = "All tests"
ANY_TAG = "Any tag"
NO_DATE = QDate(2000, 1, 1)    # the date edits' minimum, shown as "any"
PICKER_COLUMNS = COLUMNS + ("Tags", "Notes")


class PickerModel(RunsModel):
    """The runs table's columns plus the run's tags and the first line of its notes."""

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(PICKER_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return PICKER_COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.column() < len(COLUMNS):
            return super().data(index, role)
        run = self.run_at(index.row())
        text = ", ".join(run.tags) if index.column() == len(COLUMNS) else run.notes.strip().split("\n", 1)[0]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole):
            return text
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == len(COLUMNS) + 1 and run.notes:
            return run.notes
        return None


def _local_day_start(day: QDate) -> datetime:
    """Midnight of that day in local time, as an aware datetime (the store keeps UTC times)."""
    return datetime.combine(day.toPython(), time()).astimezone(timezone.utc)


def _aware(stamp: datetime) -> datetime:
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def run_matches(run: RunRow, host: str | None, test: str | None, tag: str | None, since: datetime | None,
                until: datetime | None, text: str) -> bool:
    """The picker's filter: every given criterion must hold; text matches id, host, test, status, tags, notes."""
    if host is not None and run.host_name != host:
        return False
    if test is not None and run.test != test:
        return False
    if tag is not None and tag not in run.tags:
        return False
    started = _aware(run.started_at)
    if since is not None and started < since:
        return False
    if until is not None and started >= until:
        return False
    if text:
        haystack = " ".join((f"#{run.id}", str(run.id), run.host_name, run.test, run.status, " ".join(run.tags),
                             run.notes)).lower()
        return all(word in haystack for word in text.lower().split())
    return True


def _date_edit(tip: str) -> QDateEdit:
    edit = QDateEdit()
    edit.setCalendarPopup(True)
    edit.setDisplayFormat("yyyy-MM-dd")
    edit.setMinimumDate(NO_DATE)
    edit.setSpecialValueText("any")   # shown while the date is the minimum: no bound
    edit.setDate(NO_DATE)
    edit.setToolTip(tip)
    return edit


class RunPicker(QWidget):
    """Filters above a table of runs; select several and click Compare."""

    compare_requested = Signal(list)    # run ids, in the table's order
    selection_changed = Signal(list)    # the selected runs (RunRow)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runPicker")
        self._runs: list[RunRow] = []
        self.host_combo = QComboBox()
        self.host_combo.setObjectName("pickerHost")
        self.test_combo = QComboBox()
        self.test_combo.setObjectName("pickerTest")
        self.tag_combo = QComboBox()
        self.tag_combo.setObjectName("pickerTag")
        self.since_edit = _date_edit("Runs started on or after this day (local time)")
        self.until_edit = _date_edit("Runs started on or before this day (local time)")
        self.text_edit = QLineEdit()
        self.text_edit.setObjectName("pickerText")
        self.text_edit.setPlaceholderText("Filter: host, test, #id, tag, words of a note…")
        self.text_edit.setClearButtonEnabled(True)
        for combo, first in ((self.host_combo, ANY_HOST), (self.test_combo, ANY_TEST), (self.tag_combo, ANY_TAG)):
            combo.addItem(first)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
            combo.currentIndexChanged.connect(lambda _i: self._apply_filter())
        for edit in (self.since_edit, self.until_edit):
            edit.dateChanged.connect(lambda _d: self._apply_filter())
        self.text_edit.textChanged.connect(lambda _t: self._apply_filter())

        self.table = RunsTable(model=PickerModel())
        self.table.setObjectName("pickerTable")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(PICKER_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setObjectName("compareButton")
        self.compare_button.setToolTip("Compare the selected runs side by side (pick two or more; "
                                       "a host's runs of different tests share a row)")
        self.compare_button.clicked.connect(lambda _checked=False: self._request_compare())
        self.count_label = QLabel()
        self.count_label.setStyleSheet(f"color: {MUTED};")

        filters = QHBoxLayout()
        for widget in (self.host_combo, self.test_combo, self.tag_combo, QLabel("From"), self.since_edit,
                       QLabel("to"), self.until_edit):
            filters.addWidget(widget)
        filters.addStretch(1)
        bar = QHBoxLayout()
        bar.addWidget(self.text_edit, 1)
        bar.addWidget(self.count_label)
        bar.addWidget(self.compare_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(filters)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._selection_changed())
        self._selection_changed()

    # -- data ------------------------------------------------------------------------------------

    def set_runs(self, runs: list[RunRow]) -> None:
        """New runs from the store; the filters and the selection (by id) stay."""
        chosen = [run.id for run in self.selected_runs()]
        self._runs = list(runs)
        self._fill_combo(self.host_combo, ANY_HOST, sorted({r.host_name for r in runs}, key=str.lower))
        self._fill_combo(self.test_combo, ANY_TEST, sorted({r.test for r in runs}))
        self._fill_combo(self.tag_combo, ANY_TAG, sorted({t for r in runs for t in r.tags}, key=str.lower))
        self._apply_filter(keep=chosen)

    def run(self, run_id: int) -> RunRow | None:
        return next((r for r in self._runs if r.id == run_id), None)

    def shown_runs(self) -> list[RunRow]:
        return self.table.shown_runs()

    def selected_runs(self) -> list[RunRow]:
        return self.table.selected_runs()

    def select_ids(self, run_ids: list[int]) -> None:
        """Select these runs, clearing filters that would hide them."""
        wanted = set(run_ids)
        if not wanted <= {r.id for r in self.shown_runs()}:
            self.clear_filters()
        self.table.select_runs(run_ids)

    def clear_filters(self) -> None:
        with QSignalBlocker(self.host_combo), QSignalBlocker(self.test_combo), QSignalBlocker(self.tag_combo), \
                QSignalBlocker(self.since_edit), QSignalBlocker(self.until_edit), QSignalBlocker(self.text_edit):
            for combo in (self.host_combo, self.test_combo, self.tag_combo):
                combo.setCurrentIndex(0)
            self.since_edit.setDate(NO_DATE)
            self.until_edit.setDate(NO_DATE)
            self.text_edit.clear()
        self._apply_filter()

    # -- filtering -------------------------------------------------------------------------------

    @staticmethod
    def _fill_combo(combo: QComboBox, first: str, values: list[str]) -> None:
        current = combo.currentText()
        with QSignalBlocker(combo):
            combo.clear()
            combo.addItem(first)
            combo.addItems(values)
            combo.setCurrentIndex(max(0, combo.findText(current)))

    @staticmethod
    def _choice(combo: QComboBox) -> str | None:
        return combo.currentText() if combo.currentIndex() > 0 else None

    def _apply_filter(self, keep: list[int] | None = None) -> None:
        keep = [run.id for run in self.selected_runs()] if keep is None else keep
        since = None if self.since_edit.date() == NO_DATE else _local_day_start(self.since_edit.date())
        until = None if self.until_edit.date() == NO_DATE else _local_day_start(self.until_edit.date().addDays(1))
        host, test, tag = self._choice(self.host_combo), self._choice(self.test_combo), self._choice(self.tag_combo)
        text = self.text_edit.text().strip()
        shown = [r for r in self._runs if run_matches(r, host, test, tag, since, until, text)]
        self.table.set_runs(shown)
        if keep:
            visible = {r.id for r in shown}
            self.select_ids([i for i in keep if i in visible])
        self._selection_changed()

    def _selection_changed(self) -> None:
        runs = self.selected_runs()
        shown = self.table.model().rowCount()
        self.count_label.setText(f"{shown} of {len(self._runs)} shown · {len(runs)} selected")
        self.count_label.setToolTip("Select two or more runs (Ctrl/Shift+click), then Compare")
        self.compare_button.setEnabled(bool(runs))
        self.selection_changed.emit(runs)

    def _request_compare(self) -> None:
        runs = self.selected_runs()
        if runs:
            # oldest first: the row order of the comparison reads as a timeline
            self.compare_requested.emit([r.id for r in sorted(runs, key=lambda r: (r.started_at, r.id))])
