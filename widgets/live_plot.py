"""Live time-series plots: pyqtgraph's scrolling plot done for an hour of data at ~30 frames a second.

Curves read from RingBuffers that the data side appends to; nothing is drawn on append. A
PlotGroup's timer (~30 Hz) then calls setData once per curve whose buffer changed, moves the shared
x window to the newest data, and fits the y axes to what is visible. Curves use peak downsampling
and clip-to-view, so a frame costs what fits on screen, not what the buffer holds.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QWidget

from widgets.plot_group import DEFAULT_WINDOW, FRAME_MS, MIN_SPAN, PlotGroup
from widgets.plot_items import (
    BACKGROUND,
    GRID,
    INK,
    MUTED,
    ElapsedAxis,
    GridLines,
    StackBand,
    escape,
    format_elapsed,
    nice_ceiling,
)
from widgets.ring_buffer import RingBuffer

__all__ = ["BACKGROUND", "DEFAULT_WINDOW", "FRAME_MS", "GRID", "INK", "MIN_SPAN", "MUTED", "LivePlot", "PlotGroup",
           "format_elapsed"]
LABEL_GAP_PX = 4     # room between two marker labels on one row


@dataclass
class _Curve:
    item: pg.PlotDataItem
    buffer: RingBuffer
    drawn: int = -1            # the buffer version on screen
    fill: pg.FillBetweenItem | None = None


class LivePlot(pg.PlotWidget):
    """One plot of curves backed by ring buffers; redrawn by its PlotGroup's frame timer."""

    def __init__(self, title: str = "", group: PlotGroup | None = None, parent: QWidget | None = None,
                 y_range: tuple[float, float] | None = None, y_min_top: float = 1.0,
                 legend: bool = True, x_axis: bool = True) -> None:
        super().__init__(parent, background=BACKGROUND, axisItems={"bottom": ElapsedAxis("bottom")})
        self.setObjectName("livePlot")
        self.plot_item: pg.PlotItem = self.getPlotItem()
        self.view_box: pg.ViewBox = self.plot_item.getViewBox()
        self.title = title
        self.y_fixed = y_range
        self.y_min_top = y_min_top
        self._curves: dict[str, _Curve] = {}
        self._markers: list[pg.InfiniteLine] = []
        self._label_layout: tuple | None = None   # what the marker labels were last laid out for
        self._y_top: float | None = None
        # the legend is a line of the title ("IOPS  — r/s  — w/s"): over the data it would hide the
        # newest samples, and inside the view it would be repainted with every frame
        self.legend = legend
        self._legend: dict[str, tuple[str, str, bool]] = {}    # key -> (name, colour, filled)
        self.plot_item.hideButtons()
        self.plot_item.setMenuEnabled(False)
        # pyqtgraph's grid is drawn by the axes and made a repaint several times dearer: a few
        # horizontal lines at the y ticks do the same job (no vertical ones: they would move every frame)
        self._grid = GridLines(self.view_box)
        self._y_shown: tuple[float, float] = (0.0, 1.0)
        self.view_box.setMouseEnabled(x=True, y=False)   # y is fitted to the visible data
        self.view_box.disableAutoRange()
        for name in ("left", "bottom"):
            axis = self.plot_item.getAxis(name)
            axis.setPen(pg.mkPen(MUTED))
            axis.setTextPen(pg.mkPen(MUTED))
        self.plot_item.getAxis("left").setWidth(44)
        # the y labels change only with the y range: paint them from a pixmap, not text every frame
        self.plot_item.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if not x_axis:
            self.plot_item.hideAxis("bottom")   # plots stacked over one with the time axis (linked x)
        self._show_title()
        self.set_y_policy(y_range, y_min_top)
        self.view_box.sigResized.connect(lambda _vb: self._grid.prepareGeometryChange())
        self.view_box.sigResized.connect(lambda _vb: self._place_grid())
        self.group = group if group is not None else PlotGroup(self)
        self.group.add(self)
        self.view_box.sigRangeChangedManually.connect(lambda _mask: self.group.manual_range(self))

    def set_y_policy(self, y_range: tuple[float, float] | None, min_top: float = 1.0) -> None:
        """A fixed y range (percentages), or 0 to the visible maximum, never below min_top."""
        self.y_fixed, self.y_min_top = y_range, min_top
        self._y_top = None
        self.set_y_range(*(y_range or (0.0, min_top)))

    def set_y_range(self, low: float, high: float) -> None:
        self._y_shown = (low, high)
        self.setYRange(low, high, padding=0)
        self._place_grid()

    def _place_grid(self) -> None:
        low, high = self._y_shown
        levels = self.plot_item.getAxis("left").tickValues(low, high, max(self.view_box.height(), 60.0))
        self._grid.set_lines([v for v in (levels[0][1] if levels else []) if low < v < high], low, high)

    def sizeHint(self) -> QSize:
        return QSize(480, 220)

    # -- curves ----------------------------------------------------------------------------------

    def add_curve(self, key: str, name: str, colour: str | QColor, buffer: RingBuffer | None = None,
                  width: float = 1.0, dashed: bool = False) -> RingBuffer:
        """A curve drawn from `buffer` (a new one when None); its name goes to the legend.

        Keep width 1: software rasterising strokes wider lines as polygons, several times slower."""
        if key in self._curves:
            raise ValueError(f"this plot already has a curve {key!r}")
        buffer = buffer if buffer is not None else RingBuffer()
        pen = pg.mkPen(colour, width=width, style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
        item = self._make_item(pen)
        self.plot_item.addItem(item)
        self._curves[key] = _Curve(item, buffer)
        self._legend[key] = (name, QColor(colour).name(), False)
        self._show_title()
        return buffer

    def add_stack(self, layers: Sequence[tuple[str, str, str]],
                  buffers: Sequence[RingBuffer] | None = None) -> list[RingBuffer]:
        """Stacked areas (CPU user/system/iowait/steal): `layers` are (key, name, colour) bottom first and
        `buffers` hold the CUMULATIVE sums; each band is a FillBetweenItem over the curve below it."""
        made: list[RingBuffer] = []
        below: _Curve | None = None
        for index, (key, name, colour) in enumerate(layers):
            buffer = buffers[index] if buffers is not None else RingBuffer()
            edge = QColor(colour).darker(125)
            item = self._make_item(pg.mkPen(edge, width=1))
            fill_colour = QColor(colour)
            fill_colour.setAlpha(190)
            if below is None:
                item.setFillLevel(0.0)
                item.setBrush(pg.mkBrush(fill_colour))
            self.plot_item.addItem(item)
            curve = _Curve(item, buffer)
            if below is not None:
                # between the displayed (clipped, downsampled) curves: follows pans and zooms too
                curve.fill = StackBand(below.item.curve, item.curve, brush=pg.mkBrush(fill_colour))
                self.plot_item.addItem(curve.fill)
            self._curves[key] = curve
            self._legend[key] = (name, QColor(colour).name(), True)
            made.append(buffer)
            below = curve
        self._show_title()
        return made

    def set_title(self, title: str) -> None:
        self.title = title
        self._show_title()

    def _show_title(self) -> None:
        parts = [f"<span style='color:{INK}'>{escape(self.title)}</span>"] if self.title else []
        if self.legend:
            parts += [f"<span style='color:{colour}'>{'■' if filled else '━'}</span>&nbsp;"
                      f"<span style='color:{MUTED}'>{escape(name)}</span>"
                      for name, colour, filled in self._legend.values()]
        self.plot_item.setTitle("&nbsp;&nbsp;&nbsp;".join(parts) or None, size="9pt")
        # without a title line the top y label would be cut in half by the plot's edge
        self.plot_item.layout.setContentsMargins(1, 1 if parts else 8, 4, 1)

    def _make_item(self, pen: Any) -> pg.PlotDataItem:
        item = pg.PlotDataItem(pen=pen, antialias=False, connect="all", skipFiniteCheck=True)
        item.setDownsampling(auto=True, method="peak")
        item.setClipToView(True)
        return item

    def remove_curve(self, key: str) -> None:
        curve = self._curves.pop(key)
        self.plot_item.removeItem(curve.item)
        if curve.fill is not None:
            self.plot_item.removeItem(curve.fill)
        self._legend.pop(key, None)
        self._show_title()
        self._y_top = None

    def set_buffer(self, key: str, buffer: RingBuffer) -> None:
        """Draw this curve from another buffer (another disk) from the next frame on."""
        curve = self._curves[key]
        if curve.buffer is not buffer:
            curve.buffer = buffer
            curve.drawn = -1
            self._y_top = None

    def set_curve_visible(self, key: str, visible: bool) -> None:
        curve = self._curves[key]
        curve.item.setVisible(visible)
        if curve.fill is not None:
            curve.fill.setVisible(visible)
        self._y_top = None

    def rename_curve(self, key: str, name: str) -> None:
        _old, colour, filled = self._legend[key]
        self._legend[key] = (name, colour, filled)
        self._show_title()

    def buffer(self, key: str) -> RingBuffer:
        return self._curves[key].buffer

    def curve(self, key: str) -> pg.PlotDataItem:
        return self._curves[key].item

    def curve_keys(self) -> list[str]:
        return list(self._curves)

    def legend_names(self) -> list[str]:
        return [name for name, _colour, _filled in self._legend.values()] if self.legend else []

    def title_text(self) -> str:
        label = self.plot_item.titleLabel
        return str(label.text) if label.isVisible() else ""

    def newest_t(self) -> float | None:
        times = [c.buffer.last_t for c in self._curves.values() if len(c.buffer)]
        return max(times) if times else None  # type: ignore[type-var]

    # -- markers ---------------------------------------------------------------------------------

    def add_marker(self, x: float, label: str, colour: str = INK, dashed: bool = False,
                   show_label: bool = True) -> pg.InfiniteLine:
        """A vertical line at x (phase start/end) with its label at the top of the plot."""
        pen = pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
        opts = {"position": 0.97, "color": colour, "anchors": [(0, 0), (0, 0)],
                "fill": pg.mkBrush(255, 255, 255, 210)}
        line = pg.InfiniteLine(pos=x, angle=90, pen=pen, movable=False,
                               label=label if show_label else None, labelOpts=opts)
        line.setZValue(20)
        line.setToolTip(label)
        line.marker_text = label
        self.plot_item.addItem(line, ignoreBounds=True)
        self._markers.append(line)
        x0, x1 = self.view_box.viewRange()[0]
        line.setVisible(x0 <= x <= x1)
        return line

    def clear_markers(self) -> None:
        self._label_layout = None
        for line in self._markers:
            self.plot_item.removeItem(line)
        self._markers.clear()

    def _show_markers_in(self, x0: float, x1: float) -> None:
        # a label of a line out of view would stick to the plot's edge: hide the whole marker
        for line in self._markers:
            line.setVisible(x0 <= line.value() <= x1)
        self._layout_labels(x0, x1)

    def _layout_labels(self, x0: float, x1: float) -> None:
        """Labels of lines a few seconds apart would print over each other: each goes to the first row
        where it fits, left of its line near the right edge; a label with no room left is hidden (the
        line keeps it as its tooltip)."""
        rect = self.view_box.boundingRect()
        key = (x0, x1, rect.width(), rect.height(), len(self._markers))
        if key == self._label_layout or x1 <= x0 or rect.width() <= 0 or rect.height() <= 0:
            return
        self._label_layout = key
        scale = rect.width() / (x1 - x0)
        row_ends: list[float] = []
        shown = sorted((line for line in self._markers if line.isVisible() and line.label is not None),
                       key=lambda line: line.value())
        for line in shown:
            label = line.label
            box = label.boundingRect()
            x = (line.value() - x0) * scale
            fits_right = x + box.width() <= rect.width()
            left = x if fits_right else x - box.width()
            row = next((i for i, end in enumerate(row_ends) if end + LABEL_GAP_PX <= left), len(row_ends))
            top = row * (box.height() + 2) + 2
            if top + box.height() > rect.height():
                label.setVisible(False)
                continue
            if row == len(row_ends):
                row_ends.append(0.0)
            row_ends[row] = left + box.width()
            anchor = (0, 0) if fits_right else (1, 0)
            position = round(1.0 - top / rect.height(), 3)
            if not label.isVisible():
                label.setVisible(True)
            if (label.anchors[0], label.orthoPos) != (anchor, position):   # no repaint when nothing moves
                label.anchors = [anchor, anchor]
                label.setPosition(position)

    def markers(self) -> list[tuple[float, str]]:
        return [(float(line.value()), line.marker_text) for line in self._markers]

    # -- drawing ---------------------------------------------------------------------------------

    def on_screen(self) -> bool:
        """Shown and not scrolled out of sight (a grid of many hosts scrolls)."""
        if not self.isVisible():
            return False
        rect, widget = self.rect(), self
        parent = widget.parentWidget()
        while parent is not None:   # clipped by every parent: a scroll area's viewport hides the rest
            rect = rect.translated(widget.pos()).intersected(parent.rect())
            if rect.isEmpty():
                return False
            widget, parent = parent, parent.parentWidget()
        return True

    def dirty(self) -> bool:
        return any(c.drawn != c.buffer.version for c in self._curves.values())

    def refresh(self) -> int:
        """One setData per curve whose buffer changed; the number of setData calls."""
        calls = 0
        for curve in self._curves.values():
            if curve.drawn == curve.buffer.version:
                continue
            t, v = curve.buffer.view()
            curve.item.setData(t, v)
            curve.drawn = curve.buffer.version
            calls += 1
        return calls

    def fit_y(self, x0: float, x1: float) -> None:
        """Fit y to the visible data: 0 to a rounded maximum (never below y_min_top), or the fixed range."""
        self._show_markers_in(x0, x1)
        if self.y_fixed is not None:
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
