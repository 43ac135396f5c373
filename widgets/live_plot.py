"""Live time-series plots: pyqtgraph's scrolling plot done for an hour of data at ~30 frames a second.

Curves read from RingBuffers that the data side appends to; nothing is drawn on append. A
PlotGroup's timer (~30 Hz) then calls setData once per curve whose buffer changed, moves the shared
x window to the newest data, and fits the y axes to what is visible. Curves use peak downsampling
and clip-to-view, so a frame costs what fits on screen, not what the buffer holds.

Phase markers live in a strip between the data and the time axis (widgets.marker_strip); hovering
shows a crosshair and every curve's value in the title line (widgets.plot_hover, widgets.crosshair); the y
axis is fitted to the visible data (widgets.plot_y_axis). Colours come from
the widget's palette, so the charts follow a light or dark theme.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QColor, QWheelEvent
from PySide6.QtWidgets import QGraphicsItem, QWidget

from widgets.chart_theme import ChartColours, chart_colours
from widgets.crosshair import CrosshairLine
from widgets.marker_strip import END, START, StripMarker, install_marker_strip
from widgets.plot_group import DEFAULT_WINDOW, FRAME_MS, MIN_SPAN, PlotGroup
from widgets.plot_hover import CurveHover
from widgets.plot_items import BACKGROUND, GRID, INK, MUTED, GridLines, StackBand
from widgets.plot_title import PlotTitle
from widgets.plot_y_axis import LEFT_AXIS_PX, YAxisFit
from widgets.ring_buffer import RingBuffer
from widgets.time_axis import CLOCK, TimeAxis, format_elapsed
from widgets.wheel_scroll import on_screen, scroll_page

__all__ = ["BACKGROUND", "DEFAULT_WINDOW", "FRAME_MS", "GRID", "INK", "MIN_SPAN", "MUTED", "LivePlot", "PlotGroup",
           "format_elapsed"]
_THEME_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange, QEvent.Type.StyleChange)


@dataclass
class _Curve:
    item: pg.PlotDataItem
    buffer: RingBuffer
    drawn: int = -1            # the buffer version on screen
    fill: pg.FillBetweenItem | None = None
    below: _Curve | None = None  # a stacked band: the curve it sits on (its value is the difference)


class LivePlot(YAxisFit, CurveHover, pg.PlotWidget):
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
