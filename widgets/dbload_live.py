"""A database load live: operations per second and p99 latency per second by operation, errors per second,
and the step now running ("8 clients, step 4 of 6"), on the host's own time axis beside its telemetry.

DbLoadSeries (Qt-free) turns each "dbload_tick" event (one per second of a step) into ring-buffer points;
DbLoadPanel's LivePlots read those buffers on their PlotGroup's frame timer (one setData per curve that
changed), like the telemetry charts. A curve appears with the first second that names its operation.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from widgets.live_plot import MUTED, LivePlot, PlotGroup
from widgets.ring_buffer import RingBuffer

TICK = "dbload_tick"
TOTAL = "total"
THIRD = "#8c96a3"        # a third operation (sysbench "other"): grey, as the load chart's 15 min line
ERRORS_COLOUR = "#d0453a"
RETRIES_COLOUR = "#b7791f"
PLOT_MIN_HEIGHT = 170


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


class DbLoadSeries:
    """One host's load ticks as (x, value) buffers: "ops.<op>", "ops.total", "p99.<op>", "errors", "retries"."""

    def __init__(self, capacity: int | None = None) -> None:
        self._capacity = capacity
        self.buffers: dict[str, RingBuffer] = {}
        self.ops: list[str] = []            # in the order they first came
        self.step: int | None = None
        self.clients: int | None = None
        self.second = 0
        self.total_steps: int | None = None   # from the run's clients list, when the workbench knows it
        self.engine = ""
        self.errors = 0.0
        self.ticks = 0
        self.version = 0                     # grows when a new operation appears (the panel adds curves)

    def buffer(self, key: str) -> RingBuffer:
        if key not in self.buffers:
            self.buffers[key] = RingBuffer(self._capacity) if self._capacity else RingBuffer()
        return self.buffers[key]

    def add_tick(self, event: Mapping[str, Any], x: float) -> None:
        """One second of a step, drawn at x (its end on the host's time axis)."""
        ops = event.get("ops") if isinstance(event.get("ops"), Mapping) else {}
        lat = event.get("lat_ms") if isinstance(event.get("lat_ms"), Mapping) else {}
        total = 0.0
        for op, count in ops.items():
            value = _number(count)
            if value is None:
                continue
            self._know(str(op))
            self.buffer(f"ops.{op}").append(x, value)
            total += value
        self.buffer(f"ops.{TOTAL}").append(x, total)
        slowest = None
        for op, figures in lat.items():
            p99 = _number(figures.get("p99")) if isinstance(figures, Mapping) else None
            if p99 is not None:
                self._know(str(op))
                self.buffer(f"p99.{op}").append(x, p99)
                slowest = p99 if slowest is None else max(slowest, p99)
        if slowest is not None:
            self.buffer("p99.max").append(x, slowest)
        errors = _number(event.get("errors")) or 0.0
        self.buffer("errors").append(x, errors)
        self.buffer("retries").append(x, _number(event.get("retries")) or 0.0)
        self.errors += errors
        step, clients, second = event.get("step"), event.get("clients"), event.get("second")
        self.step = int(step) if isinstance(step, int) else self.step
        self.clients = int(clients) if isinstance(clients, int) else self.clients
        self.second = int(second) if isinstance(second, int) else self.second
        self.engine = str(event.get("engine") or self.engine)
        self.ticks += 1

    @property
    def active(self) -> bool:
        """The host runs a database load: a second came, or the workbench said how many steps it has."""
        return self.ticks > 0 or self.total_steps is not None

    def _know(self, op: str) -> None:
        if op not in self.ops:
            self.ops.append(op)
            self.version += 1

    def step_text(self) -> str:
        """ "8 clients, step 4 of 6, second 7" (the step as a reader counts: from 1)."""
        if self.step is None:
            return "waiting for the first second"
        who = f"{self.clients} client{'s' if self.clients != 1 else ''}" if self.clients is not None else "step"
        of = f" of {self.total_steps}" if self.total_steps else ""
        return f"{who}, step {self.step + 1}{of}, second {self.second}"

    def now_text(self) -> str:
        """The newest second: total ops/s, each operation's p99, errors so far, the tool."""
        parts = []
        total = self.buffers.get(f"ops.{TOTAL}")
        if total is not None and total.last_value is not None:
            parts.append(f"{total.last_value:,.0f} ops/s")
        for op in self.ops:
            p99 = self.buffers.get(f"p99.{op}")
            if p99 is not None and p99.last_value is not None:
                parts.append(f"p99 {op} {p99.last_value:,.1f} ms")
        parts.append(f"{self.errors:,.0f} error{'s' if self.errors != 1 else ''}")
        if self.engine:
            parts.append(self.engine)
        return " · ".join(parts)


class DbLoadPanel(QWidget):
    """The load's three charts and its step line, above a host's telemetry panels."""

    def __init__(self, series: DbLoadSeries, group: PlotGroup, colour: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dbloadPanel")
        self.series = series
        self.colour = colour     # the host's: its operations are its colour, its second shade dashed, then grey
        self.step_label = QLabel()
        self.step_label.setObjectName("dbloadStep")
        self.now_label = QLabel()
        self.now_label.setObjectName("dbloadNow")
        self.now_label.setStyleSheet(f"color: {MUTED};")
        self.ops_plot = LivePlot("Operations per second", group=group, short_title="ops/s")
        self.ops_plot.set_y_label("ops/s")
        self.p99_plot = LivePlot("p99 latency per second", group=group, short_title="p99 ms")
        self.p99_plot.set_y_label("p99 (ms)")
        self.errors_plot = LivePlot("Errors and retries per second", group=group, short_title="errors/s",
                                    y_min_top=2.0)
        self.errors_plot.set_y_label("per second")
        self.errors_plot.add_curve("errors", "errors", ERRORS_COLOUR, series.buffer("errors"))
        self.errors_plot.add_curve("retries", "retries", RETRIES_COLOUR, series.buffer("retries"), dashed=True)
        self.plots = {"ops": self.ops_plot, "p99": self.p99_plot, "errors": self.errors_plot}
        for plot in self.plots.values():
            plot.setMinimumHeight(PLOT_MIN_HEIGHT)
        grid = QGridLayout()
        grid.setSpacing(4)
        # one row: the errors chart is mostly a flat zero and needs less width than the other two
        grid.addWidget(self.ops_plot, 0, 0)
        grid.addWidget(self.p99_plot, 0, 1)
        grid.addWidget(self.errors_plot, 0, 2)
        grid.setColumnStretch(0, 2)
        grid.setColumnStretch(1, 2)
        grid.setColumnStretch(2, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.step_label)
        layout.addWidget(self.now_label)
        layout.addLayout(grid)
        self._known = -1
        self.update_from_series()

    def update_from_series(self) -> None:
        """New operations get their curves; the step and the newest figures are said in the two lines."""
        if self._known != self.series.version:
            self._known = self.series.version
            several = len(self.series.ops) > 1
            if several and TOTAL not in self.ops_plot.curve_keys():
                self.ops_plot.add_curve(TOTAL, TOTAL, self.ops_plot.colours.ink, self.series.buffer(f"ops.{TOTAL}"))
            for index, op in enumerate(self.series.ops):
                colour = self._op_colour(index)
                for plot, key in ((self.ops_plot, "ops"), (self.p99_plot, "p99")):
                    if op not in plot.curve_keys():
                        plot.add_curve(op, op, colour, self.series.buffer(f"{key}.{op}"), dashed=index == 1)
        self.step_label.setText(f"<b>Database load</b> — {self.series.step_text()}")
        self.now_label.setText(self.series.now_text())

    def _op_colour(self, index: int) -> str:
        return self.colour if index == 0 else self.ops_plot.colours.companion(self.colour) if index == 1 else THIRD

    def set_colour(self, colour: str) -> None:
        """The host's colour changed (hosts were added): its operations' curves follow."""
        self.colour = colour
        for index, op in enumerate(self.series.ops):
            for plot in (self.ops_plot, self.p99_plot):
                if op in plot.curve_keys():
                    plot.set_curve_colour(op, self._op_colour(index))

    def set_time(self, mode: str, origin: float | None) -> None:
        for plot in self.plots.values():
            plot.set_time(mode, origin)
