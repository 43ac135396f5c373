"""The comparison table: one row per server, one column per figure, grouped by test.

Row 0 is the test band ("Disk", "CPU" ...) spanning each test's columns; the servers follow. A cell
shows the number (with its note), then a line with its verdict against the reference (the baseline, else
the leader) and "best", then the caveat tags; the caveat sentences are its tooltip. A figure of a run that
did not complete is grey and says why. The best figure is bold on a green shade and carries a
star and the word "best", so colour is never the only sign.
"""
from __future__ import annotations

import textwrap

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from widgets.compare_data import CellView, ComparisonData, MetricView, RowView
from widgets.format import NOT_AVAILABLE
from widgets.frozen_column import FrozenColumn
from widgets.theme import is_dark as is_dark_base

BEST_SHADE = QColor("#d5efd9")
BASELINE_SHADE = QColor("#e1ebf7")
BAND_SHADE = QColor("#eef0f3")
CAVEAT_INK = QColor("#7a4b00")
# on a dark base: the same meanings, dark enough for light text
DARK_SHADES = {"best": QColor("#1f4d2b"), "baseline": QColor("#233a57"), "band": QColor("#30363e"),
               "caveat": QColor("#f0c674"), "partial": QColor("#8a9099")}
LIGHT_SHADES = {"best": BEST_SHADE, "baseline": BASELINE_SHADE, "band": BAND_SHADE, "caveat": CAVEAT_INK,
                "partial": QColor("#8a9099")}
BEST_MARK = "★"
CAVEAT_MARK = "⚠"
BASELINE_MARK = "◆ baseline"
HEADER_WIDTH = 18     # characters per line of a column header
SPEC_WIDTH = 44       # characters of the one spec line under a server's name (longer: elided, whole on hover)
SPEC_WIDTH_AS_COLUMN = 26   # servers as columns: a narrower spec line keeps each server's column narrow
CELL_PADDING = "QTableView::item { padding: 3px 6px; }"
BAND_ROW = 0          # the row with the test names; servers start below it
PER_PRICE_BAND = " per price"   # how a figure per price unit's label ends (the comparison names them so)


def better_text(item: MetricView) -> str:
    return "higher is better" if item.higher_is_better else "lower is better"


def header_text(item: MetricView) -> str:
    """ "Random read 4 KiB\\nIOPS, ↑ better": the label wrapped, the unit and the direction below."""
    arrow = "↑" if item.higher_is_better else "↓"
    unit = f"{item.unit}, " if item.unit else ""
    return "\n".join(textwrap.wrap(item.label, HEADER_WIDTH)) + f"\n{unit}{arrow} better"


def one_line_spec(spec: str, width: int = SPEC_WIDTH) -> str:
    """The spec on one line: whole when it fits, else cut at the last separator before the width, with "…"."""
    spec = " ".join(spec.split())
    if len(spec) <= width:
        return spec
    cut = spec[:width - 1]
    for separator in (" · ", ", ", "; "):
        at = cut.rfind(separator)
        if at >= width // 2:   # never a value cut in two ("274.9 / GB HDD")
            return cut[:at] + " …"
    return cut.rstrip() + "…"


def server_text(row: RowView, width: int = SPEC_WIDTH) -> str:
    first = row.label + (f"   {BASELINE_MARK}" if row.baseline else "")
    return first + ("\n" + one_line_spec(row.spec, width) if row.spec else "")


def metric_text(item: MetricView) -> str:
    """A figure's name as a row of the transposed table: "Random read 4 KiB · IOPS ↑"."""
    arrow = "↑" if item.higher_is_better else "↓"
    return f"{item.label} · {item.unit} {arrow}" if item.unit else f"{item.label} {arrow}"


def figure_text(cell: CellView | None, with_ratio: bool) -> str:
    """ "★ 61,000 (16 workers)\nleader · best\n⚠ cached": the number first, its verdict against the reference
    below ("0.46x of db-01 (0.42–0.50)", "tie with db-01 (within ±4.1 %)", "can't tell yet vs db-01 …"). The
    verdict carries the factor against the baseline, so no second ratio shares the cell."""
    if cell is None or cell.value is None:
        return NOT_AVAILABLE
    first = (f"{BEST_MARK} " if cell.best else "") + cell.text + (f" ({cell.note})" if cell.note else "")
    second = []
    verdict = getattr(cell, "verdict", "")
    if verdict:
        second.append(verdict)
    elif with_ratio and cell.ratio_text:
        second.append(cell.ratio_text)
    if cell.best:
        second.append("best")
    lines = [first] + ([" · ".join(second)] if second else [])
    steady = getattr(cell, "steadiness", "")   # "variation 2.0 % · p99/p50 3.1x · steal 0.4 %": headline figures
    if steady:
        lines.append(steady)
    unsettled = getattr(cell, "until_stable_missed", "")
    tags = ", ".join(t for t in (cell.tags, unsettled) if t)
    if tags:   # a line of their own: beside the verdict they made the columns too wide to see many at once
        lines.append(f"{CAVEAT_MARK} {tags}")
    return "\n".join(lines)


def figure_tip(cell: CellView, baseline: RowView | None, item: MetricView) -> str:
    lines = []
    if cell.best:
        lines.append(f"Best of the compared servers: ahead of every other ({better_text(item)}).")
    partial = getattr(cell, "partial", "")
    if partial:
        lines.append(f"Not compared: {partial}; its figures are partial.")
    settle = getattr(cell, "settle", "")
    if settle:
        lines.append(f"What would settle it: {settle}.")
    if getattr(cell, "verdict", ""):
        lines.append(VERDICT_LEGEND)
    if getattr(cell, "steadiness", ""):
        lines.append(f"How steady: {cell.steadiness} (variation: of the per-second rate; p99/p50: how much slower "
                     "the slowest 1 % of requests were than the median; steal: CPU time the hypervisor took).")
    lines += [f"{CAVEAT_MARK} {c.text}" for c in cell.caveats]
    return "\n".join(dict.fromkeys(lines))


VERDICT_LEGEND = ("The verdict is against the reference named (the baseline, else the leader): the factor is "
                  "times as good, (lo–hi) and ±z the range it could take from run to run.")


def bands(comparison: ComparisonData) -> list[tuple[str, int]]:
    """The test band over the columns: (text, columns) per run of neighbouring columns of one test. The
    figures per price come after all the others, so they get bands of their own ("Disk per price")."""
    out: list[tuple[str, int]] = []
    for item in comparison.metrics:
        text = comparison.test_label(item.test) + (PER_PRICE_BAND if item.label.endswith(PER_PRICE_BAND) else "")
        if out and out[-1][0] == text:
            out[-1] = (text, out[-1][1] + 1)
        else:
            out.append((text, 1))
    return out


def _item(text: str, right: bool = True) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    align = Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft
    item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
    return item


class CompareTable(QTableWidget):
    """The table of one comparison; fixed to its contents' height (the view scrolls, not the table).

    One row per server and a column per figure, or transposed (servers as columns, a row per figure:
    for many figures and few servers). The first column (server, or figure) never scrolls away.
    """

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
        # room around each figure: two-line cells must not touch their neighbours on a projector
        self.setStyleSheet(CELL_PADDING)
        self.transposed = False
        self._drawn_dark = False
        self.comparison: ComparisonData | None = None
        self.keys: list[str] = []          # metric keys, in column (or, transposed, row) order
        self.labels: list[str] = []        # server labels, in row (or, transposed, column) order
        self._row_of: dict[str, int] = {}     # server label (or, transposed, metric key) -> row
        self._column_of: dict[str, int] = {}  # metric key (or, transposed, server label) -> column
        self.frozen = FrozenColumn(self)

    def set_transposed(self, transposed: bool) -> None:
        """Servers as columns (True) or as rows; the comparison shown is laid out again."""
        if transposed == self.transposed:
            return
        self.transposed = transposed
        if self.comparison is not None:
            self.set_comparison(self.comparison)

    def clear_comparison(self) -> None:
        self.comparison = None
        self.clear()
        self.setRowCount(0)
        self.setColumnCount(0)
        self.keys, self.labels, self._row_of, self._column_of = [], [], {}, {}
        self.frozen.sync()

    def set_comparison(self, comparison: ComparisonData) -> None:
        self.comparison = comparison
        self.clear()
        self.clearSpans()
        self.keys = [m.key for m in comparison.metrics]
        self.labels = [row.label for row in comparison.rows]
        self._drawn_dark = is_dark_base(self)
        shades = DARK_SHADES if self._drawn_dark else LIGHT_SHADES
        if self.transposed:
            self._fill_transposed(comparison, shades)
        else:
            self._fill_by_server(comparison, shades)
        self._fit()

    # -- one row per server ----------------------------------------------------------------------

    def _fill_by_server(self, comparison: ComparisonData, shades: dict[str, QColor]) -> None:
        metrics = comparison.metrics
        self.setColumnCount(1 + len(metrics))
        self.setRowCount(1 + len(comparison.rows))
        server = QTableWidgetItem("Server")
        server.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.setHorizontalHeaderItem(0, server)
        for column, item in enumerate(metrics, start=1):
            head = QTableWidgetItem(header_text(item))
            head.setToolTip(f"{comparison.test_label(item.test)}: {item.header()}, {better_text(item)}.")
            self.setHorizontalHeaderItem(column, head)
        self._column_of = {m.key: column for column, m in enumerate(metrics, start=1)}
        self._band(comparison, shades)
        baseline = comparison.baseline
        self._row_of = {}
        for index, row in enumerate(comparison.rows, start=1):
            self._row_of[row.label] = index
            self.setItem(index, 0, self._server_item(row, shades))
            for column, item in enumerate(metrics, start=1):
                self.setItem(index, column, self._figure(row.cells.get(item.key), baseline, item, shades))

    def _band(self, comparison: ComparisonData, shades: dict[str, QColor]) -> None:
        """The test names over their columns (the table's second header line)."""
        corner = _item("", right=False)
        corner.setBackground(QBrush(shades["band"]))
        self.setItem(BAND_ROW, 0, corner)
        column = 1
        for text, width in bands(comparison):
            self.setItem(BAND_ROW, column, self._band_item(text, shades, centred=True))
            if width > 1:
                self.setSpan(BAND_ROW, column, 1, width)
            column += width

    # -- transposed: one column per server -------------------------------------------------------

    def _fill_transposed(self, comparison: ComparisonData, shades: dict[str, QColor]) -> None:
        rows = comparison.rows
        self.setColumnCount(1 + len(rows))
        self.setRowCount(len(comparison.tests) + len(comparison.metrics))
        figure = QTableWidgetItem("Figure")
        figure.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.setHorizontalHeaderItem(0, figure)
        self._column_of = {}
        for column, row in enumerate(rows, start=1):
            head = self._server_item(row, shades, SPEC_WIDTH_AS_COLUMN)
            self.setHorizontalHeaderItem(column, head)
            self._column_of[row.label] = column
        baseline = comparison.baseline
        self._row_of = {}
        index = 0
        for test in comparison.tests:
            # a band row per test; its name sits in the first column, which never scrolls away
            self.setItem(index, 0, self._band_item(comparison.test_label(test), shades, centred=False))
            for column in range(1, len(rows) + 1):
                self.setItem(index, column, self._band_item("", shades, centred=True))
            index += 1
            for item in (m for m in comparison.metrics if m.test == test):
                name = _item(metric_text(item), right=False)
                name.setToolTip(f"{comparison.test_label(item.test)}: {item.header()}, {better_text(item)}.")
                self.setItem(index, 0, name)
                self._row_of[item.key] = index
                for column, row in enumerate(rows, start=1):
                    self.setItem(index, column, self._figure(row.cells.get(item.key), baseline, item, shades))
                index += 1

    # -- cells -----------------------------------------------------------------------------------

    def _server_item(self, row: RowView, shades: dict[str, QColor], width: int = SPEC_WIDTH) -> QTableWidgetItem:
        name = _item(server_text(row, width), right=False)
        prefix = f"{row.label}: "
        price = next((line[len(prefix):] for line in (self.comparison.price_lines() if self.comparison else [])
                      if line.startswith(prefix)), "")
        name.setToolTip(row.spec + (f"\nPrice: {price}" if price else "")
                        + (f"\nBaseline: ratios are times as good as {row.label}." if row.baseline else ""))
        if row.baseline:
            name.setBackground(QBrush(shades["baseline"]))
        return name

    def _band_item(self, text: str, shades: dict[str, QColor], centred: bool) -> QTableWidgetItem:
        band = _item(text, right=False)
        if centred:
            band.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        band.setBackground(QBrush(shades["band"]))
        bold = QFont(self.font())
        bold.setBold(True)
        band.setFont(bold)
        return band

    def _figure(self, cell: CellView | None, baseline: RowView | None, item: MetricView,
                shades: dict[str, QColor]) -> QTableWidgetItem:
        out = _item(figure_text(cell, baseline is not None))
        out.setData(Qt.ItemDataRole.UserRole, item.key)
        if cell is None or cell.value is None:
            out.setToolTip("Not measured on this server.")
            return out
        out.setToolTip(figure_tip(cell, baseline, item))
        out.setData(Qt.ItemDataRole.AccessibleTextRole, out.text().replace("\n", ", "))
        if cell.best:
            out.setBackground(QBrush(shades["best"]))
            font = QFont(self.font())
            font.setBold(True)
            out.setFont(font)
        elif getattr(cell, "partial", ""):   # a run that did not complete: greyed, with its reason
            out.setForeground(QBrush(shades["partial"]))
        elif cell.caveats:
            out.setForeground(QBrush(shades["caveat"]))
        return out

    # -- size ------------------------------------------------------------------------------------

    def _fit(self) -> None:
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.resizeRowsToContents()
        self.resizeColumnsToContents()
        self._fit_height()
        self.frozen.sync()

    def _fit_height(self) -> None:
        header = self.horizontalHeader()
        rows = sum(self.rowHeight(r) for r in range(self.rowCount()))
        wide = sum(self.columnWidth(c) for c in range(self.columnCount())) > self.viewport().width()
        scroll = self.horizontalScrollBar().sizeHint().height() if wide else 0   # room for it when it shows
        height = max(header.height(), header.sizeHint().height()) + rows + 2 * self.frameWidth() + scroll + 2
        if height != self.height():
            self.setFixedHeight(height)

    def changeEvent(self, event: QEvent) -> None:
        """The desktop switched between light and dark: the shades are drawn again."""
        super().changeEvent(event)
        if (event.type() == QEvent.Type.PaletteChange and self.comparison is not None
                and is_dark_base(self) != self._drawn_dark):
            self.set_comparison(self.comparison)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._fit_height()
        self.frozen.place()

    def updateGeometries(self) -> None:
        super().updateGeometries()
        if hasattr(self, "frozen"):
            self.frozen.place()

    # -- reading back (tests, accessibility tools) -----------------------------------------------

    def server_row(self, label: str) -> int:
        """The row of a server (servers as rows only)."""
        return self._row_of[label]

    def figure_item(self, label: str, key: str) -> QTableWidgetItem | None:
        if self.transposed:
            return self.item(self._row_of[key], self._column_of[label])
        return self.item(self._row_of[label], self._column_of[key])

    def figure(self, label: str, key: str) -> str:
        found = self.figure_item(label, key)
        return found.text() if found is not None else ""
