"""A database load live: operations per second and p99 latency per second by operation, errors per second,
and the step now running ("8 clients, step 4 of 6"), on the host's own time axis beside its telemetry.

DbLoadSeries (widgets.dbload_series, Qt-free) turns each "dbload_tick" event (one per second of a step) into
ring-buffer points; DbLoadPanel's LivePlots read those buffers on their PlotGroup's frame timer (one
setData per curve that changed), like the telemetry charts. A curve appears with the first second that
names its operation.
"""
from __future__ import annotations

from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from widgets.dbload_series import TICK, TOTAL, TXN, DbLoadSeries
from widgets.live_plot import MUTED, LivePlot, PlotGroup

__all__ = ["TICK", "DbLoadPanel", "DbLoadSeries"]

THIRD = "#8c96a3"        # a third operation (sysbench "other"): grey, as the load chart's 15 min line
ERRORS_COLOUR = "#d0453a"
RETRIES_COLOUR = "#b7791f"
PLOT_MIN_HEIGHT = 170


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
            # the transactions are the total where the tool counts them; else the operations' sum is drawn too
            several = len(self.series.ops) > 1 and TXN not in self.series.ops
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
