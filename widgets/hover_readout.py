"""Hover on a still chart (a stored result: the sweep, the mail storm's curves): a vertical line at the
nearest point and, in the chart's title line, its x and every curve's value there, as the live charts do.
The title line holds the readout, so it never covers the data it reads."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF

from widgets.chart_theme import chart_colours
from widgets.crosshair import CrosshairLine, CurveValue, nearest_index, readout_html, readout_text


class HoverReadout:
    """Attached to a PlotWidget: follows the pointer; `text` is the readout shown (empty when away)."""

    def __init__(self, plot: pg.PlotWidget, title: Callable[[], str], x_text: Callable[[float], str],
                 max_gap: float | None = None) -> None:
        """max_gap: a curve farther from the pointer than this many of its sample intervals reads "–" (curves
        of different lengths on one chart: one that ended has no value there, not its last one)."""
        self.plot = plot
        self._max_gap = max_gap
        self._title = title
        self._x_text = x_text
        self.text = ""
        theme = chart_colours(plot.palette())
        self.line = CrosshairLine(theme.muted)
        self.line.hide()
        plot.getPlotItem().addItem(self.line, ignoreBounds=True)
        plot.scene().sigMouseMoved.connect(self._moved)

    def show_at(self, x: float) -> str:
        """The readout at data x (what the pointer at x shows); "" when the chart has no data."""
        curves = [item for item in self.plot.getPlotItem().listDataItems()
                  if item.xData is not None and len(item.xData)]
        if not curves:
            self.clear()
            return ""
        at, values = None, []
        for item in curves:
            t, v = np.asarray(item.xData, dtype=float), np.asarray(item.yData, dtype=float)
            if len(t) == len(v) + 1:   # a step curve: t are the edges, a value holds between two
                index = int(np.searchsorted(t, x, side="right")) - 1
                value = float(v[index]) if 0 <= index < len(v) else None
                spot = float(t[index]) if value is not None else None   # the second the value began
            else:
                index = nearest_index(t, x)
                if index is not None and self._max_gap is not None and len(t) > 1:
                    interval = float(np.median(np.diff(t)))
                    if abs(float(t[index]) - x) > self._max_gap * interval:
                        index = None
                value = float(v[index]) if index is not None else None
                spot = float(t[index]) if index is not None else None
            at = spot if at is None else at
            pen = item.opts.get("pen")
            colour = pg.mkPen(pen).color().name() if pen is not None else "#888888"
            values.append(CurveValue(item.name() or self._title(), colour, value))
        if at is None:
            self.clear()
            return ""
        theme = chart_colours(self.plot.palette())
        label = self._x_text(at)
        self.plot.getPlotItem().setTitle(readout_html(label, values, theme.ink, theme.muted, names=len(values) > 1),
                                         size="9pt")
        self.line.setPos(at)
        self.line.show()
        self.text = readout_text(label, values)
        return self.text

    def clear(self) -> None:
        self.line.hide()
        self.text = ""
        theme = chart_colours(self.plot.palette())
        self.plot.getPlotItem().setTitle(f"<span style='color:{theme.ink}; font-size:9pt'>{self._title()}</span>")

    def _moved(self, position: QPointF) -> None:
        box = self.plot.getPlotItem().getViewBox()
        if not box.sceneBoundingRect().contains(position):
            if self.text:
                self.clear()
            return
        self.show_at(box.mapSceneToView(position).x())


class BarReadout:
    """Hover on a horizontal bar chart (servers down the side): the bar under the pointer, its server and
    value, in the chart's title line."""

    def __init__(self, plot: pg.PlotWidget, title: Callable[[], str], name: str, labels: list[str],
                 values: list[float | None], colours: list[str]) -> None:
        self.plot = plot
        self._title = title
        self._name = name
        self._labels, self._values, self._colours = labels, values, colours
        self.text = ""
        plot.scene().sigMouseMoved.connect(self._moved)

    def show_at(self, y: float) -> str:
        """The readout of the bar at data y (bars sit at 0, 1, 2 …); "" between or past them."""
        row = round(y)
        if not 0 <= row < len(self._labels) or abs(y - row) > 0.5:
            self.clear()
            return ""
        value = CurveValue(self._name, self._colours[row], self._values[row])
        theme = chart_colours(self.plot.palette())
        self.plot.getPlotItem().setTitle(readout_html(self._labels[row], [value], theme.ink, theme.muted),
                                         size="9pt")
        self.text = readout_text(self._labels[row], [value])
        return self.text

    def clear(self) -> None:
        if not self.text:
            return
        self.text = ""
        self.plot.getPlotItem().setTitle(self._title(), size="9pt")

    def _moved(self, position: QPointF) -> None:
        box = self.plot.getPlotItem().getViewBox()
        if not box.sceneBoundingRect().contains(position):
            self.clear()
            return
        self.show_at(box.mapSceneToView(position).y())
