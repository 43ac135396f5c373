"""The results of a stored run: warnings first, then a table, latency percentiles and the sweep curve.

Lays out a ResultsPage (widgets.results_data): app has already worded and formatted every figure,
the same way `benchbay run` prints them; this is only the Qt layer. Keeps `cell(row, column)` so a
test reads the table as the user does.
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.chart_theme import chart_colours
from widgets.host_colours import host_colour
from widgets.live_plot import MUTED
from widgets.mail_charts import MailCharts
from widgets.plot_items import small_plot
from widgets.results_data import Align, BarChart, CellData, Highlight, ResultsPage, SweepData, TableData
from widgets.run_data import RunState

BAR = "#2f6db5"
HIGHLIGHTS = {Highlight.CAUTION: QColor("#f6e3b4")}   # cached I/O: pale amber, like the warnings
HIGHLIGHT_INK = QColor("#5c4500")
BADGE_STYLE = "background: #c0392b; color: white; font-weight: bold"
WARN_STYLE = "background: #fff4d6; border: 1px solid #e5c36b; border-radius: 3px; padding: 4px; color: #5c4500;"


def themed(plot: pg.PlotWidget, title: str, owner: QWidget) -> pg.PlotWidget:
    """A stored result's chart in the theme's colours (light or dark), read from the owner's palette."""
    theme = chart_colours(owner.palette())
    plot.setBackground(theme.background)
    plot.setTitle(f"<span style='color:{theme.ink}; font-size:9pt'>{title}</span>")
    item = plot.getPlotItem()
    for name in ("left", "bottom"):
        item.getAxis(name).setPen(pg.mkPen(theme.muted))
        item.getAxis(name).setTextPen(pg.mkPen(theme.muted))
    return plot


def _item(cell: CellData) -> QTableWidgetItem:
    item = QTableWidgetItem(cell.text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if cell.align == Align.RIGHT:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    elif cell.align == Align.CENTER:
        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
    if cell.tip:
        item.setToolTip(cell.tip)
    if cell.highlight in HIGHLIGHTS:
        item.setBackground(HIGHLIGHTS[cell.highlight])
        item.setForeground(HIGHLIGHT_INK)   # dark ink on the pale shade, in the dark theme too
    return item


class ResultsView(QWidget):
    """One stored run's results."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsView")
        self.title = QLabel("")
        self.title.setObjectName("resultsTitle")
        self.warnings_label = QLabel("")
        self.warnings_label.setObjectName("resultsWarnings")
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setStyleSheet(WARN_STYLE)
        self.summary_label = QLabel("")
        self.summary_label.setObjectName("resultsSummary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget()
        self.table.setObjectName("resultsTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.latency_title = QLabel("<b>Latency percentiles</b> (ms, per job)")
        self.latency_grid = QGridLayout()
        self.latency_plots: dict[str, pg.PlotWidget] = {}
        self.sweep_plot = themed(small_plot("Concurrency sweep: IOPS vs workers", 240),
                                 "Concurrency sweep: IOPS vs workers", self)
        self.colour = BAR
        self.sweep_curve = self.sweep_plot.plot([], [], pen=pg.mkPen(BAR, width=2), symbol="o", symbolSize=7,
                                                symbolBrush=BAR, symbolPen=None)
        self.sweep_plot.getPlotItem().setLabel("bottom", "workers (log₂)")
        self.sweep_plot.getPlotItem().setLabel("left", "IOPS")
        self.sweep_note = QLabel("")
        self.sweep_note.setStyleSheet(f"color: {MUTED};")
        self.sweep_data: tuple[list[int], list[float]] = ([], [])
        self.mail_charts = MailCharts()
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        for widget in (self.title, self.warnings_label, self.summary_label, self.table, self.latency_title):
            layout.addWidget(widget)
        layout.addLayout(self.latency_grid)
        layout.addWidget(self.mail_charts)
        layout.addWidget(self.sweep_plot)
        layout.addWidget(self.sweep_note)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    def set_page(self, page: ResultsPage) -> None:
        """Show one run's results, as app worded them."""
        status = "" if page.status == RunState.DONE else f" — <span style='color:#c0392b'>{page.status}</span>"
        title = f"<b>Run #{page.run_id}</b> · {page.host_name} · {page.test} test{status}"
        if page.subtitle:
            title += f"<br><span style='color:{MUTED}'>{page.subtitle}</span>"
        title += "".join(f" <span style='{BADGE_STYLE}'>&nbsp;{b}&nbsp;</span>" for b in page.badges)
        self.title.setText(title)
        self.warnings_label.setText("\n".join(f"⚠ {note}" for note in page.warnings))
        self.warnings_label.setVisible(bool(page.warnings))
        self._clear_latency()
        # the host's colour, as its curves have in Live, Graphs and Compare
        self.colour = host_colour(page.host_name, [page.host_name])
        self.sweep_curve.setPen(pg.mkPen(self.colour, width=2))
        self.sweep_curve.setSymbolBrush(self.colour)
        self.summary_label.setText("\n".join(page.summary_lines))
        self._fill(page.table)
        self._latency_charts(page.latency)
        self.sweep_data = (list(page.sweep.workers), list(page.sweep.iops))
        self._sweep(page.sweep)
        self.mail_charts.set_series(page.mail)
        self.summary_label.setVisible(bool(page.summary_lines))
        self._fit_table()

    # -- table -----------------------------------------------------------------------------------

    def _fill(self, table: TableData) -> None:
        self.table.clear()
        self.table.setColumnCount(len(table.headers))
        self.table.setHorizontalHeaderLabels(list(table.headers))
        self.table.setRowCount(len(table.rows))
        for row, cells in enumerate(table.rows):
            for column, cell in enumerate(cells):
                self.table.setItem(row, column, _item(cell))

    def _fit_table(self) -> None:
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.table.resizeRowsToContents()
        height = header.height() + sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(height + 2 * self.table.frameWidth() + 2)

    def cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    # -- charts ----------------------------------------------------------------------------------

    def _clear_latency(self) -> None:
        self.latency_title.setVisible(False)   # shown again only with disk jobs' charts
        for plot in self.latency_plots.values():
            self.latency_grid.removeWidget(plot)
            plot.deleteLater()
        self.latency_plots.clear()

    def _latency_charts(self, charts: tuple[BarChart, ...]) -> None:
        for index, chart in enumerate(charts):
            plot = themed(small_plot(chart.title), chart.title, self)
            heights = list(chart.heights)
            plot.addItem(pg.BarGraphItem(x=list(range(len(heights))), height=heights, width=0.6, brush=self.colour,
                                         pen=pg.mkPen(None)))
            plot.getPlotItem().getAxis("bottom").setTicks([list(enumerate(chart.labels))])
            plot.setXRange(-0.6, len(heights) - 0.4, padding=0)
            plot.setYRange(0, max(heights) * 1.15 or 1.0, padding=0)
            self.latency_plots[chart.key] = plot
            self.latency_grid.addWidget(plot, index // 3, index % 3)
        self.latency_title.setVisible(bool(charts))

    def _sweep(self, sweep: SweepData) -> None:
        workers, iops = sweep.workers, sweep.iops
        visible = len(workers) >= 2
        self.sweep_plot.setVisible(visible)
        self.sweep_note.setVisible(visible)
        # log2 of the worker count on x, labelled with the counts themselves
        x = [math.log2(w) for w in workers]
        self.sweep_curve.setData(x, iops)
        if not visible:
            return
        self.sweep_plot.getPlotItem().getAxis("bottom").setTicks([[(math.log2(w), str(w)) for w in workers]])
        self.sweep_plot.setXRange(min(x) - 0.3, max(x) + 0.3, padding=0)
        self.sweep_plot.setYRange(0, max(iops) * 1.1 or 1.0, padding=0)
        self.sweep_note.setText(sweep.note)
