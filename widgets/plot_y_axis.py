"""A live plot's y axis: its label, a fixed range or one fitted to the visible data (0 to a rounded maximum,
or whole decades on a log axis), and the grid lines at its ticks. Part of widgets.live_plot.LivePlot."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtGui import QFontMetricsF

from widgets.plot_items import nice_ceiling

if TYPE_CHECKING:
    import pyqtgraph as pg

    from widgets.chart_theme import ChartColours
    from widgets.marker_strip import MarkerStrip
    from widgets.plot_group import PlotGroup
    from widgets.plot_items import GridLines

LEFT_AXIS_PX = 44
Y_LABEL_PT = 8


class YAxisFit:
    """The y axis of a LivePlot (a mixin: the plot makes the items below in its __init__)."""

    plot_item: pg.PlotItem
    view_box: pg.ViewBox
    colours: ChartColours
    group: PlotGroup
    marker_strip: MarkerStrip
    _curves: dict[str, Any]          # key -> the plot's curve (its item and ring buffer)
    _grid: GridLines
    y_fixed: tuple[float, float] | None
    y_min_top: float
    log_y: bool
    _y_top: float | None
    _decades: tuple[int, int] | None
    _y_shown: tuple[float, float]

    if TYPE_CHECKING:   # the plot's own (a QWidget's): never defined here, or it would hide that one
        def font(self) -> Any: ...

    def set_y_label(self, text: str) -> None:
        """What the chart shows, with its unit, along the y axis ("Latency (ms)"): it stays when a narrow
        title line has room only for the curves' names."""
        self.y_label = text
        axis = self.plot_item.getAxis("left")
        axis.setLabel(text, color=self.colours.muted, **{"font-size": f"{Y_LABEL_PT}pt"})
        axis.setWidth(self._left_axis_px())

    def _left_axis_px(self) -> float:
        if not self.__dict__.get("y_label"):
            return float(LEFT_AXIS_PX)
        axis = self.plot_item.getAxis("left")
        ticks = float(LEFT_AXIS_PX)
        if self.y_fixed is not None:   # 0 to 100 %: room for "100" is enough, the label takes the rest
            metrics = QFontMetricsF(axis.style.get("tickFont") or self.font())
            ticks = min(ticks, metrics.horizontalAdvance(f"{self.y_fixed[1]:,.0f}") + 10.0)
        # as pyqtgraph counts it: the label's box is larger than its text
        return round(ticks + 0.8 * axis.label.boundingRect().height())

    def set_y_policy(self, y_range: tuple[float, float] | None, min_top: float = 1.0) -> None:
        """A fixed y range (percentages), or 0 to the visible maximum, never below min_top."""
        self.y_fixed, self.y_min_top = y_range, min_top
        self._y_top = None
        self.set_y_range(*(y_range or (0.0, min_top)))

    def set_log_y(self, on: bool = True) -> None:
        """A log y axis (view units are log10 of the values; the curves keep the values handed to them), fitted
        to whole decades of the visible data: a p99 a hundred times the p50 still shows the p50's seconds."""
        self.log_y = on
        self._decades = None
        self.plot_item.setLogMode(x=False, y=on)
        self.set_y_range(*((0.0, math.log10(max(self.y_min_top, 1e-3))) if on else (0.0, self.y_min_top)))

    def _fit_decades(self, x0: float, x1: float) -> None:
        values = [v[v > 0] for curve in self._curves.values() if curve.item.isVisible()
                  for v in (curve.buffer.window(x0, x1)[1],)]
        positive = np.concatenate(values) if values else np.empty(0)
        top = max(float(positive.max()) if len(positive) else 0.0, self.y_min_top)
        low = float(positive.min()) if len(positive) else top / 10.0
        decades = (math.floor(math.log10(low)), max(math.ceil(math.log10(top * 1.05)), math.floor(math.log10(low)) + 1))
        if decades != self._decades:
            self._decades = decades
            # a label per power of ten only: pyqtgraph labels the 2..9 ticks of a short log range, one over another
            self.plot_item.getAxis("left").setTicks([[(float(k), f"{10.0 ** k:g}")
                                                      for k in range(decades[0], decades[1] + 1)], []])
            self.set_y_range(float(decades[0]), float(decades[1]))

    def set_y_range(self, low: float, high: float) -> None:
        self._y_shown = (low, high)
        self.setYRange(low, high, padding=0)
        self._place_grid()

    def _place_grid(self) -> None:
        low, high = self._y_shown
        if self.log_y:   # a line per decade
            self._grid.set_lines([float(k) for k in range(math.ceil(low), math.floor(high) + 1) if low < k < high],
                                 low, high)
            return
        levels = self.plot_item.getAxis("left").tickValues(low, high, max(self.view_box.height(), 60.0))
        self._grid.set_lines([v for v in (levels[0][1] if levels else []) if low < v < high], low, high)

    def fit_y(self, x0: float, x1: float) -> None:
        """Fit y to the visible data: 0 to a rounded maximum (never below y_min_top), or the fixed range."""
        following = self.group.follow and self.group.window is not None
        self.marker_strip.set_range(x0, x1, self.group.window if following else None)
        if self.y_fixed is not None:
            return
        if self.log_y:
            self._fit_decades(x0, x1)
            return
        top = self.y_min_top
        for curve in self._curves.values():
            if not curve.item.isVisible():
                continue
            _t, v = curve.buffer.window(x0, x1)
            if len(v):
                top = max(top, float(np.max(v)))
        top = nice_ceiling(top * 1.05)
        if top != self._y_top:
            self._y_top = top
            self.set_y_range(0.0, top)
