"""Plots that scroll together: one x window (seconds since the run start) and one ~30 Hz frame timer."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QObject, QTimer, Signal

FRAME_MS = 33                  # ~30 Hz
DEFAULT_WINDOW = 300.0         # seconds shown while following: the last 5 minutes
WINDOW_STEPS = 300             # the followed window moves by 1/300 of its span at most
MIN_SPAN = 10.0                # the x axis never shows less than this many seconds while following
MOVES_PER_FRAME = 4            # plots whose x window moves in one frame


class GroupMember(Protocol):
    """What the group calls on its plots (widgets.live_plot.GroupMember is one)."""

    @property
    def view_box(self) -> pg.ViewBox: ...
    def setXRange(self, x0: float, x1: float, /, padding: float | None = None) -> None: ...
    def on_screen(self) -> bool: ...
    def refresh(self) -> int: ...                  # setData calls made
    def newest_t(self) -> float | None: ...
    def fit_y(self, x0: float, x1: float) -> None: ...
    def show_crosshair(self, x: float | None, readout: bool = True) -> None: ...


class PlotGroup(QObject):
    """Plots that share one x axis (seconds since the run start) and one ~30 Hz frame timer.

    While following, each frame moves the window to the newest sample: the last `window` seconds,
    or the whole run when window is None. Panning or zooming a plot by hand stops following.
    """

    follow_changed = Signal(bool)
    frame_done = Signal(int)     # setData calls in that frame (tests and benchmarks count them)

    def __init__(self, parent: QObject | None = None, window: float | None = DEFAULT_WINDOW,
                 active: bool = True) -> None:
        super().__init__(parent)
        self.plots: list[GroupMember] = []
        self.window = window
        self.follow = True
        self.frames = 0
        self._x_range: tuple[float, float] | None = None
        self._fitted: dict[int, tuple[float, float]] = {}   # per plot: the x range its y was fitted to
        self._syncing = False
        self._active = active
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self.frame)

    def add(self, plot: GroupMember) -> None:
        if plot in self.plots:
            return
        self.plots.append(plot)
        # our own x link, not pyqtgraph's: that one shifts plots of different screen positions to
        # "line them up", so two plots of one column would show slightly different seconds
        plot.view_box.sigXRangeChanged.connect(self._x_changed)
        self._x_range = None
        if self.plots[0] is not plot:
            plot.setXRange(*self.plots[0].view_box.viewRange()[0], padding=0)
        if self._active and not self._timer.isActive():
            self._timer.start()

    def remove(self, plot: GroupMember) -> None:
        if plot in self.plots:
            self.plots.remove(plot)
            plot.view_box.sigXRangeChanged.disconnect(self._x_changed)
            self._x_range = None
        if not self.plots:
            self._timer.stop()

    def _x_changed(self, view_box: pg.ViewBox, x_range: Sequence[float]) -> None:
        if self._syncing:
            return
        self.set_x_range(float(x_range[0]), float(x_range[1]), source=view_box)

    def set_x_range(self, x0: float, x1: float, source: pg.ViewBox | None = None,
                    plots: list[GroupMember] | None = None) -> None:
        """Show seconds x0..x1 in the plots (default: every plot of the group)."""
        self._syncing = True
        try:
            for plot in self.plots if plots is None else plots:
                if plot.view_box is not source and shiboken6.isValid(plot):
                    plot.setXRange(x0, x1, padding=0)
        finally:
            self._syncing = False

    def set_active(self, active: bool) -> None:
        """Only an active group spends frames (the dashboard view not shown is inactive)."""
        self._active = active
        if active and self.plots:
            self._x_range = None
            self._timer.start()
            self.frame()
        else:
            self._timer.stop()

    @property
    def active(self) -> bool:
        return self._active

    def set_window(self, seconds: float | None) -> None:
        """The span shown while following: seconds, or None for the whole run."""
        self.window = seconds
        self.set_follow(True)

    def set_follow(self, follow: bool) -> None:
        if follow != self.follow:
            self.follow = follow
            self.follow_changed.emit(follow)
        self._x_range = None
        if follow and self._active:
            self.frame()

    def crosshair_at(self, source: GroupMember, x: float | None) -> None:
        """The hovered time in the other plots too (a line, no readout): one moment across the charts."""
        for plot in self.plots:
            if plot is not source and shiboken6.isValid(plot) and plot.on_screen():
                plot.show_crosshair(x, readout=False)

    def manual_range(self, _plot: GroupMember) -> None:
        self.set_follow(False)

    def frame(self) -> int:
        """Redraw what changed, move the window, fit y. Called by the timer."""
        valid = [p for p in self.plots if shiboken6.isValid(p)]   # a deleted panel's plots go
        if len(valid) != len(self.plots):
            self.plots = valid
            self._fitted = {key: value for key, value in self._fitted.items() if key in {id(p) for p in valid}}
        shown = [p for p in self.plots if p.on_screen()]
        if not shown:
            return 0   # nothing on screen (another tab): the buffers' versions catch up when shown
        counts = {id(plot): plot.refresh() for plot in shown}
        calls = sum(counts.values())
        if self.follow:
            newest = max((t for t in (p.newest_t() for p in shown) if t is not None), default=None)
            if newest is not None:
                # the window moves in steps of about a pixel (1 s for the last 5 minutes): hosts whose
                # samples land at different moments of a second then move it once, not once each
                step = max(1.0, (self.window or newest) / WINDOW_STEPS)
                right = max(math.ceil(newest / step - 1e-9) * step, MIN_SPAN)
                left = 0.0 if self.window is None else max(0.0, right - self.window)
                if (left, right) != self._x_range:
                    self._x_range = (left, right)
            if self._x_range is not None:
                # only what is on screen moves now (a plot scrolled into view catches up then), and only
                # a few plots a frame: a one-pixel step spread over a few frames is invisible, while
                # re-clipping every plot at once makes one frame in thirty slow. The plots furthest behind
                # go first, and any plot more than a step behind moves now: when the window moves faster
                # than a few plots a frame (a replay at 10x), no plot is left showing another time
                target = self._x_range[1]
                step = max(1.0, (self.window or target) / WINDOW_STEPS)
                stale = sorted((p for p in shown if tuple(p.view_box.viewRange()[0]) != self._x_range),
                               key=lambda p: -abs(p.view_box.viewRange()[0][1] - target))
                behind = [p for p in stale if abs(p.view_box.viewRange()[0][1] - target) > step * 1.5]
                self.set_x_range(*self._x_range, plots=stale[:max(MOVES_PER_FRAME, len(behind))])
        for plot in shown:
            x_range = tuple(plot.view_box.viewRange()[0])
            if counts[id(plot)] or self._fitted.get(id(plot)) != x_range:
                self._fitted[id(plot)] = x_range
                plot.fit_y(*x_range)
                # pyqtgraph moves the view's transform only when painting begins, which schedules a
                # second paint of the whole plot: move it now, so a frame paints once
                plot.view_box.prepareForPaint()
        self.frames += 1
        self.frame_done.emit(calls)
        return calls
