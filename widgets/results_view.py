"""The results of a stored run: warnings first, then a table, latency percentiles and the sweep curve.

Lays out a ResultsPage (widgets.results_data): app has already worded and formatted every figure,
the same way `benchbay run` prints them; this is only the Qt layer. Keeps `cell(row, column)` so a
test reads the table as the user does.
"""
from __future__ import annotations

import html
import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
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

from widgets.chart_theme import MUTED, chart_colours
from widgets.dbload_charts import DbLoadCharts
from widgets.host_colours import host_colour
from widgets.hover_readout import HoverReadout
from widgets.mail_charts import MailCharts
from widgets.plot_items import small_plot
from widgets.results_data import Align, BarChart, CellData, Highlight, ResultsPage, SweepData, TableData
from widgets.run_data import RunState
from widgets.screen_fit import WrappingPage

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


def _ms(value: float) -> str:
    """A latency in ms, as short as it reads (0.098, 1.9, 48, 1200)."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.3g}"


def _fill(widget: QTableWidget, table: TableData) -> None:
    widget.clear()
    widget.setColumnCount(len(table.headers))
    widget.setHorizontalHeaderLabels(list(table.headers))
    widget.setRowCount(len(table.rows))
    for row, cells in enumerate(table.rows):
        for column, cell in enumerate(cells):
            widget.setItem(row, column, _item(cell))


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
        self.latency_title = QLabel("<b>Latency percentiles</b> (ms, per job; logarithmic scale, each bar "
                                    "labelled)")
        self.latency_title.setWordWrap(True)
        self.latency_grid = QGridLayout()
        self.latency_plots: dict[str, pg.PlotWidget] = {}
        self.latency_data: dict[str, tuple[tuple[str, ...], list[float]]] = {}   # what each chart draws
        self._charts: tuple[BarChart, ...] = ()
        self.group_title = QLabel("")
        self.group_title.setObjectName("resultsGroupTitle")
        self.group_title.setWordWrap(True)
        self.group_table = QTableWidget()
        self.group_table.setObjectName("resultsGroupTable")
        self.group_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.group_table.verticalHeader().hide()
        self.group_table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.summary_title = QLabel("<b>How steady the run was</b>")
        self.summary_title.setObjectName("resultsSummaryTitle")
        self.sweep_plot = themed(small_plot("Concurrency sweep: IOPS vs workers", 240),
                                 "Concurrency sweep: IOPS vs workers", self)
        self.colour = BAR
        self.sweep_curve = self.sweep_plot.plot([], [], pen=pg.mkPen(BAR, width=2), symbol="o", symbolSize=7,
                                                symbolBrush=BAR, symbolPen=None, name="IOPS")
        # hover: the worker count and the IOPS under the pointer, in the title line
        self.sweep_readout = HoverReadout(self.sweep_plot, lambda: "Concurrency sweep: IOPS vs workers",
                                          lambda x: f"{round(2 ** x)} workers")
        self.sweep_plot.getPlotItem().setLabel("bottom", "workers (log₂)")
        self.sweep_plot.getPlotItem().setLabel("left", "IOPS")
        self.sweep_note = QLabel("")
        self.sweep_note.setStyleSheet(f"color: {MUTED};")
        self.sweep_data: tuple[list[int], list[float]] = ([], [])
        self.mail_charts = MailCharts()
        self.dbload_charts = DbLoadCharts()
        body = WrappingPage()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        # the figures first; how steady they were (several dense lines) after the charts
        for widget in (self.title, self.warnings_label, self.group_title, self.group_table, self.table,
                       self.latency_title):
            layout.addWidget(widget)
        layout.addLayout(self.latency_grid)
        layout.addWidget(self.mail_charts)
        layout.addWidget(self.dbload_charts)
        layout.addWidget(self.sweep_plot)
        layout.addWidget(self.sweep_note)
        layout.addWidget(self.summary_title)
        layout.addWidget(self.summary_label)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        themed_now = event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        if themed_now and hasattr(self, "sweep_readout"):   # not while __init__ builds the widget
            # a window kept open while the desktop switches light/dark: its charts switch with it
            themed(self.sweep_plot, "Concurrency sweep: IOPS vs workers", self)
            charts = self._charts
            self._clear_latency()
            self._latency_charts(charts)

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
        self.dbload_charts.set_runs([page.dbload] if page.dbload is not None else [],
                                    {page.host_name: self.colour})
        self.summary_label.setVisible(bool(page.summary_lines))
        self.summary_title.setVisible(bool(page.summary_lines))
        self.summary_title.setText(f"<b>{html.escape(page.summary_title)}</b>")
        self._fit_table(self.table)
        self.set_group("", None)

    def set_group(self, title: str, table: TableData | None) -> None:
        """A repeated test: the group's median and spread, above the run's own figures."""
        shown = table is not None and bool(table.rows)
        self.group_title.setText(title)
        self.group_title.setVisible(shown)
        self.group_table.setVisible(shown)
        if table is not None:
            _fill(self.group_table, table)
            self._fit_table(self.group_table)

    def group_cell(self, row: int, column: int) -> str:
        item = self.group_table.item(row, column)
        return item.text() if item is not None else ""

    # -- table -----------------------------------------------------------------------------------

    def _fill(self, table: TableData) -> None:
        _fill(self.table, table)

    @staticmethod
    def _fit_table(table: QTableWidget) -> None:
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        table.resizeRowsToContents()
        height = header.height() + sum(table.rowHeight(r) for r in range(table.rowCount()))
        table.setFixedHeight(height + 2 * table.frameWidth() + 2)

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
        self.latency_data.clear()

    def _latency_charts(self, charts: tuple[BarChart, ...]) -> None:
        self._charts = charts
        theme = chart_colours(self.palette())
        for index, chart in enumerate(charts):
            plot = themed(small_plot(chart.title), chart.title, self)
            values = list(chart.heights)
            # a log scale: p99.9 is often 10-100x the median, and a linear bar would flatten the rest
            # a percentile the engine did not report comes as 0: no bar, and "—" where it would be
            positive = [v for v in values if v > 0 and math.isfinite(v)] or [1.0]
            base = math.floor(math.log10(min(positive)) - 1e-9)   # a bar of exactly 10^k still shows
            top = math.log10(max(positive))
            tops = [math.log10(v) if v > 0 and math.isfinite(v) else base for v in values]
            plot.addItem(pg.BarGraphItem(x=list(range(len(values))), y0=base, y1=tops, width=0.6, brush=self.colour,
                                         pen=pg.mkPen(None)))
            for x, (value, y) in enumerate(zip(values, tops, strict=True)):
                measured = value > 0 and math.isfinite(value)
                label = pg.TextItem(_ms(value) if measured else "—", color=theme.ink if measured else theme.muted,
                                    anchor=(0.5, 1.0))
                label.setPos(x, y)
                plot.addItem(label)
            decades = range(base, math.ceil(top + 0.35) + 1)
            plot.getPlotItem().getAxis("left").setTicks([[(d, _ms(10.0 ** d)) for d in decades]])
            plot.getPlotItem().getAxis("bottom").setTicks([list(enumerate(chart.labels))])
            plot.setXRange(-0.6, len(values) - 0.4, padding=0)
            plot.setYRange(base, top + 0.35, padding=0)   # room above the highest bar for its label
            self.latency_data[chart.key] = (tuple(chart.labels), values)
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
