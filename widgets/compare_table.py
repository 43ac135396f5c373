"""The comparison table: one row per server, one column per figure, grouped by test.

Row 0 is the test band ("Disk", "CPU" ...) spanning each test's columns; the servers follow. A cell
shows the number (with its note), then a line with the ratio to the baseline, "best" and the caveat
tags; the caveat sentences are its tooltip. The best figure is bold on a green shade and carries a
star and the word "best", so colour is never the only sign.
"""
from __future__ import annotations

import textwrap

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from widgets.compare_data import CellView, ComparisonData, MetricView, RowView
from widgets.format import NOT_AVAILABLE

BEST_SHADE = QColor("#d5efd9")
BASELINE_SHADE = QColor("#e1ebf7")
BAND_SHADE = QColor("#eef0f3")
CAVEAT_INK = QColor("#7a4b00")
BEST_MARK = "★"
CAVEAT_MARK = "⚠"
BASELINE_MARK = "◆ baseline"
HEADER_WIDTH = 18     # characters per line of a column header
SPEC_WIDTH = 44       # characters per line of the spec under a server's name
BAND_ROW = 0          # the row with the test names; servers start below it


def better_text(item: MetricView) -> str:
    return "higher is better" if item.higher_is_better else "lower is better"


def header_text(item: MetricView) -> str:
    """ "Random read 4 KiB\\nIOPS, ↑ better": the label wrapped, the unit and the direction below."""
    arrow = "↑" if item.higher_is_better else "↓"
    unit = f"{item.unit}, " if item.unit else ""
    return "\n".join(textwrap.wrap(item.label, HEADER_WIDTH)) + f"\n{unit}{arrow} better"


def server_text(row: RowView) -> str:
    first = row.label + (f"   {BASELINE_MARK}" if row.baseline else "")
    return first + "\n" + "\n".join(textwrap.wrap(row.spec, SPEC_WIDTH))


def figure_text(cell: CellView | None, with_ratio: bool) -> str:
    """ "★ 61,000 (16 workers)\\n3.4x · best\\n⚠ cached" — the number first, what qualifies it below."""
    if cell is None or cell.value is None:
        return NOT_AVAILABLE
    first = (f"{BEST_MARK} " if cell.best else "") + cell.text + (f" ({cell.note})" if cell.note else "")
    second = []
    if with_ratio and cell.ratio_text:
        second.append(cell.ratio_text)
    if cell.best:
        second.append("best")
    lines = [first] + ([" · ".join(second)] if second else [])
    if cell.tags:   # a line of their own: beside the ratio they made the columns too wide to see many at once
        lines.append(f"{CAVEAT_MARK} {cell.tags}")
    return "\n".join(lines)


def figure_tip(cell: CellView, baseline: RowView | None, item: MetricView) -> str:
    lines = []
    if cell.best:
        lines.append(f"Best of the compared servers ({better_text(item)}).")
    if baseline is not None and cell.ratio_text:
        lines.append(f"{cell.ratio_text} as good as the baseline {baseline.label}.")
    lines += [f"{CAVEAT_MARK} {c.text}" for c in cell.caveats]
    return "\n".join(dict.fromkeys(lines))


def _item(text: str, right: bool = True) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    align = Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft
    item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
    return item


class CompareTable(QTableWidget):
    """The table of one comparison; fixed to its contents' height (the view scrolls, not the table)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareTable")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.verticalHeader().hide()
        self.setWordWrap(False)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        self.keys: list[str] = []          # metric key per column, from column 1 on
        self.labels: list[str] = []        # row label per server row, from row 1 on

    def set_comparison(self, comparison: ComparisonData) -> None:
        self.clear()
        metrics = comparison.metrics
        self.keys = [m.key for m in metrics]
        self.labels = [row.label for row in comparison.rows]
        self.setColumnCount(1 + len(metrics))
        self.setRowCount(1 + len(comparison.rows))
        self._headers(comparison)
        self._band(comparison)
        baseline = comparison.baseline
        for index, row in enumerate(comparison.rows, start=1):
            name = _item(server_text(row), right=False)
            name.setToolTip(row.spec + (f"\nBaseline: ratios are times as good as {row.label}." if row.baseline
                                        else ""))
            if row.baseline:
                name.setBackground(QBrush(BASELINE_SHADE))
            self.setItem(index, 0, name)
            for column, item in enumerate(metrics, start=1):
                self.setItem(index, column, self._figure(row.cells.get(item.key), baseline, item))
        self._fit()

    def _headers(self, comparison: ComparisonData) -> None:
        server = QTableWidgetItem("Server")
        server.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.setHorizontalHeaderItem(0, server)
        for column, item in enumerate(comparison.metrics, start=1):
            head = QTableWidgetItem(header_text(item))
            head.setToolTip(f"{comparison.test_label(item.test)}: {item.header()}, {better_text(item)}.")
            self.setHorizontalHeaderItem(column, head)

    def _band(self, comparison: ComparisonData) -> None:
        """The test names over their columns (the table's second header line)."""
        corner = _item("", right=False)
        corner.setBackground(QBrush(BAND_SHADE))
        self.setItem(BAND_ROW, 0, corner)
        bold = QFont(self.font())
        bold.setBold(True)
        column = 1
        for test in comparison.tests:
            width = sum(1 for m in comparison.metrics if m.test == test)
            band = _item(comparison.test_label(test))
            band.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            band.setBackground(QBrush(BAND_SHADE))
            band.setFont(bold)
            self.setItem(BAND_ROW, column, band)
            if width > 1:
                self.setSpan(BAND_ROW, column, 1, width)
            column += width

    def _figure(self, cell: CellView | None, baseline: RowView | None, item: MetricView) -> QTableWidgetItem:
        out = _item(figure_text(cell, baseline is not None))
        out.setData(Qt.ItemDataRole.UserRole, item.key)
        if cell is None or cell.value is None:
            out.setToolTip("Not measured on this server.")
            return out
        out.setToolTip(figure_tip(cell, baseline, item))
        out.setData(Qt.ItemDataRole.AccessibleTextRole, out.text().replace("\n", ", "))
        if cell.best:
            out.setBackground(QBrush(BEST_SHADE))
            font = QFont(self.font())
            font.setBold(True)
            out.setFont(font)
        elif cell.caveats:
            out.setForeground(QBrush(CAVEAT_INK))
        return out

    def _fit(self) -> None:
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.resizeRowsToContents()
        self.resizeColumnsToContents()
        self._fit_height()

    def _fit_height(self) -> None:
        header = self.horizontalHeader()
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        wide = sum(self.columnWidth(c) for c in range(self.columnCount())) > self.viewport().width()
        scroll = self.horizontalScrollBar().sizeHint().height() if wide else 0   # room for it when it shows
        height = max(header.height(), header.sizeHint().height()) + rows + 2 * self.frameWidth() + scroll + 2
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._fit_height()

    # -- reading back (tests, accessibility tools) -----------------------------------------------

    def server_row(self, label: str) -> int:
        return self.labels.index(label) + 1

    def figure_item(self, label: str, key: str) -> QTableWidgetItem | None:
        return self.item(self.server_row(label), self.keys.index(key) + 1)

    def figure(self, label: str, key: str) -> str:
        found = self.figure_item(label, key)
        return found.text() if found is not None else ""
