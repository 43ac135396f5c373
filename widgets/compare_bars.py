"""One small bar chart per compared figure: servers down the side, bars across, the value printed at each bar.

Horizontal bars leave the host names readable at any length; each server's bar has its colour of the
window and the PDF (widgets.host_colours), the best is starred, and the title says which way is better.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QApplication, QGridLayout, QWidget

from widgets.chart_theme import chart_colours
from widgets.compare_data import CellView, ComparisonData, MetricView, RowView, row_colours
from widgets.compare_table import BEST_MARK, better_text
from widgets.host_colours import host_colour
from widgets.hover_readout import BarReadout
from widgets.plot_items import ThousandsAxis, escape

MAX_COLUMNS = 4         # charts per line of the grid, at most
CHART_PX = 400          # the width a chart wants
BAR_PX = 26             # height per server
CHROME_PX = 62          # title and x axis
VALUE_ROOM = 1.08       # x range past the longest bar
INSIDE_FROM = 0.55      # bars at least this share of the longest one carry their value inside


class BarChart(pg.PlotWidget):
    """The bars of one metric."""

    def __init__(self, item: MetricView, column: Sequence[tuple[RowView, CellView]],
                 parent: QWidget | None = None, colours: Mapping[str, str] | None = None) -> None:
        # the theme's colours (light or dark), read from the palette the chart is drawn with
        theme = chart_colours(parent.palette() if parent is not None else QApplication.palette())
        ink, muted = theme.ink, theme.muted
        super().__init__(parent, background=theme.background, axisItems={"bottom": ThousandsAxis("bottom")})
        self.metric = item
        self.labels = [row.label for row, _cell in column]
        self.values = [float(cell.value) for _row, cell in column]
        self.best = [cell.best for _row, cell in column]
        plot = self.getPlotItem()
        plot.hideButtons()
        plot.setMenuEnabled(False)
        self.setMouseEnabled(x=False, y=False)
        self.setFixedHeight(CHROME_PX + BAR_PX * max(len(column), 1))
        # a pyqtgraph title never wraps and sets the chart's minimum width: the direction goes under the axis
        title = f"<span style='color:{ink}'>{escape(item.label)}</span>"
        plot.setTitle(title, size="9pt")
        plot.setLabel("bottom", f"{item.unit + ', ' if item.unit else ''}{better_text(item)}", color=muted)
        for name in ("left", "bottom"):
            plot.getAxis(name).setPen(pg.mkPen(muted))
            plot.getAxis(name).setTextPen(pg.mkPen(ink if name == "left" else muted))
        positions = list(range(len(column)))
        # a server's colour is its host's (chosen among all the servers compared): the same in every chart
        colours = colours or row_colours([row for row, _cell in column])
        self.colours = [colours.get(label) or host_colour(label, self.labels) for label in self.labels]
        brushes = [pg.mkBrush(colour) for colour in self.colours]
        self.bar_item = pg.BarGraphItem(x0=[0.0] * len(column), y=positions, width=self.values, height=0.62,
                                        brushes=brushes, pen=pg.mkPen(None))
        plot.addItem(self.bar_item)
        left = plot.getAxis("left")
        left.setTicks([[(i, label) for i, label in enumerate(self.labels)]])
        # the axis widens to its labels only once painted: a chart first drawn off screen would clip them
        metrics = QFontMetrics(left.style.get("tickFont") or self.font())
        left.setWidth(max((metrics.horizontalAdvance(label) for label in self.labels), default=0) + 16)
        plot.getViewBox().invertY(True)       # the first server on top, as in the table
        top = max(self.values, default=0.0)
        self.setXRange(0.0, top * VALUE_ROOM if top > 0 else 1.0, padding=0)
        self.setYRange(-0.6, len(column) - 0.4, padding=0)
        self.value_labels: list[pg.TextItem] = []
        for position, (_row, cell) in enumerate(column):
            text = (f"{BEST_MARK} " if cell.best else "") + cell.text + (f" ({cell.note})" if cell.note else "")
            # a long bar holds its value inside, in white; a short one beside it: no label runs off the chart
            inside = top > 0 and cell.value >= top * INSIDE_FROM
            label = pg.TextItem(text if inside else f" {text}", color="#ffffff" if inside else ink,
                                anchor=(1, 0.5) if inside else (0, 0.5))
            label.setPos(max(cell.value, 0.0), position)
            plot.addItem(label)
            self.value_labels.append(label)
        # the pointer on a bar reads its server and value in the title line, as the other charts do
        self.readout = BarReadout(self, lambda: title, item.unit or item.label, self.labels,
                                  [cell.value for _row, cell in column], self.colours)

    def bar_lengths(self) -> list[float]:
        return [float(w) for w in self.bar_item.opts["width"]]


class CompareBars(QWidget):
    """A grid of BarCharts, one per figure of the comparison, as many across as the width allows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareBars")
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(8)
        self.charts: dict[str, BarChart] = {}
        self.columns = MAX_COLUMNS
        self.comparison: ComparisonData | None = None
        self._drawn_dark = False

    def clear(self) -> None:
        self.comparison = None
        for chart in self.charts.values():
            self.grid.removeWidget(chart)
            chart.deleteLater()
        self.charts.clear()

    def set_comparison(self, comparison: ComparisonData) -> None:
        self.clear()
        self.comparison = comparison
        self._drawn_dark = chart_colours(self.palette()).dark
        for item in comparison.metrics:
            column = comparison.column(item.key)
            if column:
                self.charts[item.key] = BarChart(item, column, self, row_colours(comparison.rows))
        self._place()

    def _place(self) -> None:
        for chart in self.charts.values():
            self.grid.removeWidget(chart)
        for index, chart in enumerate(self.charts.values()):
            self.grid.addWidget(chart, index // self.columns, index % self.columns, Qt.AlignmentFlag.AlignTop)
        for column in range(MAX_COLUMNS):
            self.grid.setColumnStretch(column, 1 if column < self.columns else 0)

    def changeEvent(self, event: QEvent) -> None:
        """The desktop switched between light and dark: the charts are drawn again in its colours."""
        super().changeEvent(event)
        if (event.type() == QEvent.Type.PaletteChange and self.comparison is not None
                and chart_colours(self.palette()).dark != self._drawn_dark):
            self.set_comparison(self.comparison)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        columns = max(1, min(MAX_COLUMNS, event.size().width() // CHART_PX))
        if columns != self.columns:
            self.columns = columns
            self._place()
