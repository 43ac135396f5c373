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
COLUMN_STRETCH = (2, 2, 2, 1)   # operations, queries, p99, errors: the errors chart is mostly a flat zero


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
        # sysbench's queries by kind run 10-20x its transactions: their own chart, shown when they come
        self.queries_plot = LivePlot("Queries per second, by kind", group=group, short_title="queries/s")
        self.queries_plot.set_y_label("queries/s")
        self.queries_plot.hide()
        self.errors_plot = LivePlot("Errors and retries per second", group=group, short_title="errors/s",
                                    y_min_top=2.0)
        self.errors_plot.set_y_label("per second")
        self.errors_plot.add_curve("errors", "errors", ERRORS_COLOUR, series.buffer("errors"))
        self.errors_plot.add_curve("retries", "retries", RETRIES_COLOUR, series.buffer("retries"), dashed=True)
        self.plots = {"ops": self.ops_plot, "queries": self.queries_plot, "p99": self.p99_plot,
                      "errors": self.errors_plot}
        for plot in self.plots.values():
            plot.setMinimumHeight(PLOT_MIN_HEIGHT)
        grid = QGridLayout()
        grid.setSpacing(4)
        # one row: the errors chart is mostly a flat zero and needs less width than the other two
        grid.addWidget(self.ops_plot, 0, 0)
        grid.addWidget(self.queries_plot, 0, 1)
        grid.addWidget(self.p99_plot, 0, 2)
        grid.addWidget(self.errors_plot, 0, 3)
        self._grid = grid
        self._lay_out_columns()
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
            queries = TXN in self.series.ops and len(self.series.ops) > 1
            several = len(self.series.ops) > 1 and not queries
            if several and TOTAL not in self.ops_plot.curve_keys():
                self.ops_plot.add_curve(TOTAL, TOTAL, self.ops_plot.colours.ink, self.series.buffer(f"ops.{TOTAL}"))
            for op in self._ordered():
                counted = self.queries_plot if queries and op != TXN else self.ops_plot
                if op not in counted.curve_keys():
                    index = self._index(op, counted)
                    counted.add_curve(op, op, self._op_colour(index), self.series.buffer(f"ops.{op}"),
                                      dashed=index == 1)
                if op not in self.p99_plot.curve_keys() and len(self.series.buffer(f"p99.{op}")):
                    index = self._index(op, self.p99_plot)
                    self.p99_plot.add_curve(op, op, self._op_colour(index), self.series.buffer(f"p99.{op}"),
                                            dashed=index == 1)
            if self.queries_plot.isHidden() == queries:
                self.queries_plot.setVisible(queries)
                self._lay_out_columns()
            if TXN in self.series.ops and self.ops_plot.title != "Transactions per second":
                self.ops_plot.set_title("Transactions per second", "txn/s")
        self.step_label.setText(f"<b>Database load</b> — {self.series.step_text()}")
        self.now_label.setText(self.series.now_text())

    def _lay_out_columns(self) -> None:
        """The shown charts share the width: a hidden chart's column keeps no stretch (else a wide gap)."""
        for column, (plot, stretch) in enumerate(zip((self.ops_plot, self.queries_plot, self.p99_plot,
                                                      self.errors_plot), COLUMN_STRETCH, strict=True)):
            self._grid.setColumnStretch(column, 0 if plot.isHidden() else stretch)

    def _ordered(self) -> list[str]:
        """The transactions first (the host's own colour), then the operations as they came."""
        return sorted(self.series.ops, key=lambda op: op != TXN)

    def _index(self, op: str, plot: LivePlot) -> int:
        """The op's place among the curves of its chart (a curve about to be added: after them)."""
        keys = [k for k in plot.curve_keys() if k != TOTAL]
        return keys.index(op) if op in keys else len(keys)

    def _op_colour(self, index: int) -> str:
        return self.colour if index == 0 else self.ops_plot.colours.companion(self.colour) if index == 1 else THIRD

    def set_colour(self, colour: str) -> None:
        """The host's colour changed (hosts were added): its operations' curves follow."""
        self.colour = colour
        for plot in (self.ops_plot, self.queries_plot, self.p99_plot):
            for op in plot.curve_keys():
                if op != TOTAL:
                    plot.set_curve_colour(op, self._op_colour(self._index(op, plot)))

    def set_time(self, mode: str, origin: float | None) -> None:
        for plot in self.plots.values():
            plot.set_time(mode, origin)
