"""Hovering a live plot: a crosshair at the nearest sample, and every curve's value there in the title line
(shared with the other plots of its group). Part of widgets.live_plot.LivePlot."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QEvent, QPointF

from widgets.crosshair import CurveValue, nearest_index, nearest_value

if TYPE_CHECKING:
    import pyqtgraph as pg

    from widgets.crosshair import CrosshairLine
    from widgets.plot_group import PlotGroup
    from widgets.plot_title import PlotTitle
    from widgets.time_axis import TimeAxis


class CurveHover:
    """The crosshair and value readout of a LivePlot (a mixin: the plot makes the items below)."""

    view_box: pg.ViewBox
    crosshair: CrosshairLine
    time_axis: TimeAxis
    group: PlotGroup
    _title: PlotTitle
    _curves: dict[str, Any]                          # key -> the plot's curve (item, buffer, the band below)
    _legend: dict[str, tuple[str, str, bool]]        # key -> (name, colour, filled)

    if TYPE_CHECKING:   # the plot's own: never defined here, or it would hide that one
        def _show_title(self) -> None: ...

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
