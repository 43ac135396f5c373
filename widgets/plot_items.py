"""The pieces of a live plot that are not about data: time axis, stacked band, grid lines, colours."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPainter, QPainterPath
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject

from widgets.chart_theme import BACKGROUND, GRID, INK, MUTED
from widgets.time_axis import ELAPSED, TimeAxis, format_elapsed

__all__ = ["BACKGROUND", "GRID", "INK", "MUTED", "ElapsedAxis", "GridLines", "StackBand", "ThousandsAxis",
           "escape", "format_elapsed", "nice_ceiling", "small_plot"]



class ElapsedAxis(TimeAxis):
    """Seconds since the run started, ticked at whole seconds, minutes and hours (m:ss, h:mm:ss)."""

    def __init__(self, orientation: str = "bottom", **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self.mode = ELAPSED


class ThousandsAxis(pg.AxisItem):
    """Values as a reader writes them: 150,000 rather than 150000 or 1.5e+05."""

    def __init__(self, orientation: str, **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)    # "(x1e+03)" beside the unit is harder to read than the digits

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        decimals = 0 if spacing * scale >= 1 else min(6, max(1, math.ceil(-math.log10(spacing * scale))))
        return [f"{v * scale:,.{decimals}f}" for v in values]


def small_plot(title: str, height: int = 170, axis_items: dict[str, pg.AxisItem] | None = None) -> pg.PlotWidget:
    """A still chart of a stored result (no mouse, no menu), of fixed height: small multiples in a scroll
    area must not be stretched."""
    plot = pg.PlotWidget(background=BACKGROUND, axisItems=axis_items)
    plot.setFixedHeight(height)
    plot.setTitle(f"<span style='color:{INK}; font-size:9pt'>{title}</span>")
    item = plot.getPlotItem()
    item.hideButtons()
    item.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=False)
    for name in ("left", "bottom"):
        item.getAxis(name).setPen(pg.mkPen(MUTED))
        item.getAxis(name).setTextPen(pg.mkPen(MUTED))
    return plot


class StackBand(pg.FillBetweenItem):
    """A FillBetweenItem whose path is built with numpy from the two curves' displayed (clipped,
    downsampled) data. pyqtgraph's own concatenates QPolygonF in Python: ~10 ms for a few hundred
    points, which at 30 Hz and eight hosts was most of a frame."""

    def updatePath(self) -> None:
        if self.curves is None:
            self.setPath(QPainterPath())
            return
        lower, upper = (c.curve if isinstance(c, pg.PlotDataItem) else c for c in self.curves)
        x1, y1 = lower.getData()
        x2, y2 = upper.getData()
        if x1 is None or x2 is None or len(x1) < 2 or len(x1) != len(x2):
            self.setPath(QPainterPath())   # a curve is between two updates: the next one draws it
            return
        path = pg.arrayToQPath(np.concatenate([x2, x1[::-1]]), np.concatenate([y2, y1[::-1]]), connect="all",
                               finiteCheck=False)
        path.closeSubpath()
        self.setPath(path)


class GridLines(QGraphicsObject):
    """Horizontal lines at the y ticks, painted in the view's pixels: scrolling x never moves them, so
    they cost no bounding-box work per frame (pyqtgraph's axis grid made a repaint several times dearer)."""

    def __init__(self, view_box: pg.ViewBox) -> None:
        super().__init__(view_box)
        self._view_box = view_box
        self._values: list[float] = []
        self._range = (0.0, 1.0)
        self._pen = pg.mkPen(GRID)
        self.setZValue(-100)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemStacksBehindParent, False)

    def set_pen(self, colour: str) -> None:
        self._pen = pg.mkPen(colour)
        self.update()

    def set_lines(self, values: list[float], low: float, high: float) -> None:
        self._values, self._range = values, (low, high)
        self.update()

    def boundingRect(self) -> QRectF:
        return self._view_box.boundingRect()

    def paint(self, painter: QPainter, _option: Any, _widget: Any = None) -> None:
        rect = self._view_box.boundingRect()
        low, high = self._range
        if high <= low:
            return
        painter.setPen(self._pen)
        for value in self._values:
            y = rect.bottom() - (value - low) / (high - low) * rect.height()
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))


def nice_ceiling(value: float) -> float:
    """The next 1, 2, 2.5 or 5 x 10^n at or above value: axes that do not jump at every sample."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    exponent = math.floor(math.log10(value))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        top = step * 10.0 ** exponent
        if top >= value * (1 - 1e-9):
            return top
    return 10.0 ** (exponent + 1)


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
