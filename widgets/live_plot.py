"""Live time-series plots: pyqtgraph's scrolling plot done for an hour of data at ~30 frames a second.

Curves read from RingBuffers that the data side appends to; nothing is drawn on append. A
PlotGroup's timer (~30 Hz) then calls setData once per curve whose buffer changed, moves the shared
x window to the newest data, and fits the y axes to what is visible. Curves use peak downsampling
and clip-to-view, so a frame costs what fits on screen, not what the buffer holds.

Phase markers live in a strip between the data and the time axis (widgets.marker_strip); hovering
shows a crosshair and every curve's value in the title line (widgets.crosshair). Colours come from
the widget's palette, so the charts follow a light or dark theme.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QWheelEvent
from PySide6.QtWidgets import QGraphicsItem, QWidget

from widgets.chart_theme import ChartColours, chart_colours
from widgets.crosshair import CrosshairLine, CurveValue, nearest_index, nearest_value
from widgets.marker_strip import END, START, StripMarker, install_marker_strip
from widgets.plot_group import DEFAULT_WINDOW, FRAME_MS, MIN_SPAN, PlotGroup
from widgets.plot_items import BACKGROUND, GRID, INK, MUTED, GridLines, StackBand, nice_ceiling
from widgets.plot_title import PlotTitle
from widgets.ring_buffer import RingBuffer
from widgets.time_axis import CLOCK, TimeAxis, format_elapsed
from widgets.wheel_scroll import on_screen, scroll_page

__all__ = ["BACKGROUND", "DEFAULT_WINDOW", "FRAME_MS", "GRID", "INK", "MIN_SPAN", "MUTED", "LivePlot", "PlotGroup",
           "format_elapsed"]
LEFT_AXIS_PX = 44
Y_LABEL_PT = 8
_THEME_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange, QEvent.Type.StyleChange)


@dataclass
class _Curve:
    item: pg.PlotDataItem
    buffer: RingBuffer
    drawn: int = -1            # the buffer version on screen
    fill: pg.FillBetweenItem | None = None
    below: _Curve | None = None  # a stacked band: the curve it sits on (its value is the difference)


class LivePlot(pg.PlotWidget):
    """One plot of curves backed by ring buffers; redrawn by its PlotGroup's frame timer."""

    def __init__(self, title: str = "", group: PlotGroup | None = None, parent: QWidget | None = None,
                 y_range: tuple[float, float] | None = None, y_min_top: float = 1.0,
                 legend: bool = True, x_axis: bool = True, short_title: str = "") -> None:
        self.time_axis = TimeAxis("bottom")
        super().__init__(parent, background=BACKGROUND, axisItems={"bottom": self.time_axis})
        self.setObjectName("livePlot")
        self.plot_item: pg.PlotItem = self.getPlotItem()
        self.view_box: pg.ViewBox = self.plot_item.getViewBox()
        self.y_fixed = y_range
        self.y_min_top = y_min_top
        self.colours: ChartColours = chart_colours(self.palette())
        self._curves: dict[str, _Curve] = {}
        self._y_top: float | None = None
        self.log_y = False     # set_log_y: latencies that span decades
        self._decades: tuple[int, int] | None = None
        # the legend is a line of the title ("IOPS  — r/s  — w/s"): over the data it would hide the
        # newest samples, and inside the view it would be repainted with every frame
        self._title = PlotTitle(self.plot_item, lambda: self.width() - self._left_axis_px() - 10.0, title, short_title,
                                legend)
        self.y_label = ""
        self._legend = self._title.entries   # key -> (name, colour, filled)
        self.plot_item.hideButtons()
        self.plot_item.setMenuEnabled(False)
        # pyqtgraph's grid is drawn by the axes and made a repaint several times dearer: a few
        # horizontal lines at the y ticks do the same job (no vertical ones: they would move every frame)
        self._grid = GridLines(self.view_box)
        self._y_shown: tuple[float, float] = (0.0, 1.0)
        self.view_box.setMouseEnabled(x=True, y=False)   # y is fitted to the visible data
        self.view_box.disableAutoRange()
        self.plot_item.getAxis("left").setWidth(LEFT_AXIS_PX)
        # the y labels change only with the y range: paint them from a pixmap, not text every frame
        self.plot_item.getAxis("left").setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.marker_strip = install_marker_strip(self.plot_item, self.time_axis.format_x)
        # ticks point down, to their labels: upwards they would cut through the marker strip
        self.time_axis.setStyle(tickLength=4)
        if not x_axis:
            self.plot_item.hideAxis("bottom")
        self.crosshair = CrosshairLine(self.colours.muted)
        self.plot_item.addItem(self.crosshair, ignoreBounds=True)
        self.apply_theme()
        self.set_y_policy(y_range, y_min_top)
        self.view_box.sigResized.connect(lambda _vb: self._grid.prepareGeometryChange())
        self.view_box.sigResized.connect(lambda _vb: self._place_grid())
        self.group = group if group is not None else PlotGroup(self)
        self.group.add(self)
        self.view_box.sigRangeChangedManually.connect(lambda _mask: self.group.manual_range(self))
        self.scene().sigMouseMoved.connect(self._mouse_moved)

    # -- theme -------------------------------------------------------------------------------------

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in _THEME_EVENTS and "marker_strip" in self.__dict__:   # not during __init__
            self.apply_theme()

    def apply_theme(self) -> None:
        """Background, axes, grid, title and markers in the colours of the widget's palette."""
        colours = chart_colours(self.palette())
        self.colours = colours
        self.setBackground(colours.background)
        for name in ("left", "bottom"):
            axis = self.plot_item.getAxis(name)
            axis.setPen(pg.mkPen(colours.muted))
            axis.setTextPen(pg.mkPen(colours.muted))
        self._grid.set_pen(colours.grid)
        if self.__dict__.get("y_label"):
            self.set_y_label(self.y_label)
        self.marker_strip.set_colours(colours.ink, colours.grid, colours.background)
        self.crosshair.set_colour(colours.muted)
        self._show_title()

    # -- y axis ------------------------------------------------------------------------------------

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

    def sizeHint(self) -> QSize:
        return QSize(480, 220)

    # -- time axis -----------------------------------------------------------------------------------

    def set_time(self, mode: str = CLOCK, origin: float | None = None) -> None:
        """Label x as the host's wall clock (origin: the run start in epoch seconds) or as elapsed time."""
        self.time_axis.set_time(mode, origin)
        self.marker_strip.refresh_tooltips()

    def format_x(self, x: float) -> str:
        return self.time_axis.format_x(x)

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
        if dashed:
            self._title.dashed.add(key)
        self._legend[key] = (name, QColor(colour).name(), False)
        self._show_title()
        return buffer

    def set_curve_colour(self, key: str, colour: str) -> None:
        name, _old, filled = self._legend[key]
        if filled:
            return
        style = Qt.PenStyle.DashLine if key in self._title.dashed else Qt.PenStyle.SolidLine
        self._curves[key].item.setPen(pg.mkPen(colour, width=1, style=style))
        self._legend[key] = (name, QColor(colour).name(), filled)
        self._show_title()

    def curve_colour(self, key: str) -> str:
        return self._legend[key][1]

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
            curve = _Curve(item, buffer, below=below)
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

    @property
    def title(self) -> str:
        return self._title.title

    @property
    def legend(self) -> bool:
        return self._title.legend

    def set_title(self, title: str, short_title: str | None = None) -> None:
        self._title.title = title
        if short_title is not None:
            self._title.short_title = short_title
        self._show_title()

    def _show_title(self) -> None:
        self._title.show(self.colours)

    def resizeEvent(self, event: Any) -> None:
        # the title for the new width first: the plot is then laid out once, at that width
        if "_title" in self.__dict__:   # pyqtgraph resizes once before __init__ is through
            self._show_title()
        super().resizeEvent(event)

    def _make_item(self, pen: Any) -> pg.PlotDataItem:
        item = pg.PlotDataItem(pen=pen, antialias=False, connect="all", skipFiniteCheck=True)
        item.setDownsampling(auto=True, method="peak")
        item.setClipToView(True)
        return item

    def remove_curve(self, key: str) -> None:
        curve = self._curves.pop(key)
        self._title.dashed.discard(key)
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
        return self._title.names()

    def title_text(self) -> str:
        """The title line as shown (plain text)."""
        return self._title.text()

    def newest_t(self) -> float | None:
        times = [c.buffer.last_t for c in self._curves.values() if len(c.buffer)]
        return max(times) if times else None  # type: ignore[type-var]

    # -- markers ---------------------------------------------------------------------------------

    def set_markers(self, markers: Sequence[StripMarker]) -> None:
        """Phase and event markers, shown in the strip along the time axis."""
        self.marker_strip.set_markers(markers)

    def add_marker(self, x: float, label: str, colour: str | None = None, dashed: bool = False) -> None:
        self.marker_strip.set_markers([*self.marker_strip.markers(),
                                       StripMarker(x, label, END if dashed else START, colour)])

    def clear_markers(self) -> None:
        self.marker_strip.set_markers([])

    def markers(self) -> list[tuple[float, str]]:
        return [(float(m.x), m.label) for m in self.marker_strip.markers()]

    # -- hover -----------------------------------------------------------------------------------

    def values_at(self, x: float) -> list[CurveValue]:
        """Every visible curve's value at x (its nearest sample within a few intervals), legend order."""
        values: list[CurveValue] = []
        for key, curve in self._curves.items():
            if not curve.item.isVisible():
                continue
            name, colour, filled = self._legend[key]
            t, v = curve.buffer.view()
            tolerance = 2.5 * float(np.median(np.diff(t[-50:]))) if len(t) > 2 else 5.0
            value = nearest_value(t, v, x, tolerance)
            if value is not None and curve.below is not None:
                below_t, below_v = curve.below.buffer.view()
                under = nearest_value(below_t, below_v, x, tolerance)
                value = value - under if under is not None else None
            values.append(CurveValue(name, colour, value, filled))
        return values

    def show_crosshair(self, x: float | None, readout: bool = True) -> None:
        """The line at x (None hides it); with readout, every curve's value there in the title line."""
        if x is None:
            self.crosshair.setVisible(False)
            if self._title.readout is not None:
                self._title.readout = None
                self._show_title()
            return
        self.crosshair.setPos(x)
        self.crosshair.setVisible(True)
        if readout:
            self._title.readout = (self.time_axis.format_tick(x), self.values_at(x))
            self._show_title()
        elif self._title.readout is not None:
            self._title.readout = None
            self._show_title()

    def _mouse_moved(self, pos: QPointF) -> None:
        if not self.view_box.sceneBoundingRect().contains(pos):
            self._hover(None)
            return
        self._hover(float(self.view_box.mapSceneToView(pos).x()))

    def _hover(self, x: float | None) -> None:
        if x is not None:
            x = self.nearest_sample_t(x)   # the readout's time is that of the values it shows
        self.show_crosshair(x)
        self.group.crosshair_at(self, x)

    def nearest_sample_t(self, x: float) -> float:
        t = next((c.buffer.view()[0] for c in self._curves.values() if len(c.buffer)), None)
        index = nearest_index(t, x) if t is not None else None
        return float(t[index]) if t is not None and index is not None else x

    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        self._hover(None)

    # -- wheel -----------------------------------------------------------------------------------

    @property
    def zoomed(self) -> bool:
        """Panned or zoomed by hand (not following the newest data)."""
        return not self.group.follow

    def wheelEvent(self, event: QWheelEvent) -> None:
        # the page scrolls, unless the user zooms (Ctrl) or has zoomed this chart already
        if self.zoomed or event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            super().wheelEvent(event)
            return
        if not scroll_page(self, event):
            event.ignore()

    # -- drawing ---------------------------------------------------------------------------------

    def on_screen(self) -> bool:
        return on_screen(self)

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
