"""Stored database-load runs drawn: throughput over time, p99 latency over time, and the sweep curve.

One run (the results window): each operation is a line (throughput: the total too), in fixed operation
colours. Several runs (Compare): one line per server in its host's colour on a shared time axis, the p99 of
the operation picked above the charts. The sweep: ops/s by clients per server, the knee ringed on its point
and named in the caption (never written on the plot, where it would cover a curve). Step boundaries are thin
vertical lines; what each step was is in the hover text, not over the data.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from widgets.dbload_data import DbLoadCurves, Line
from widgets.host_colours import host_colour
from widgets.plot_items import INK, MUTED, ThousandsAxis, escape, small_plot

HEIGHT_PX = 220
KNEE_COLOUR = "#d9483b"
TOTAL_COLOUR = "#1f2933"
# each operation its own colour in a single run's charts (hosts' colours are for servers)
TXN = "txn"           # pgbench and sysbench count whole transactions: the total, drawn as such
OP_COLOURS = {"txn": TOTAL_COLOUR, "read": "#2f6db5", "get": "#2f6db5", "write": "#d9822b", "set": "#d9822b",
              "other": "#8e6bbf"}
FALLBACK_OP = "#4c9f70"


def op_colour(op: str) -> str:
    return OP_COLOURS.get(op, FALLBACK_OP)


def _plot(title: str, y_label: str, x_label: str) -> pg.PlotWidget:
    plot = small_plot(escape(title), HEIGHT_PX, {"left": ThousandsAxis("left")})
    item = plot.getPlotItem()
    item.setLabel("left", y_label, color=MUTED)
    item.setLabel("bottom", x_label, color=MUTED)
    item.showGrid(x=False, y=True, alpha=0.25)
    return plot


class DbLoadCharts(QWidget):
    """Throughput and p99 over time side by side, the sweep curve beside them; hidden without data."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dbloadCharts")
        self.caption = QLabel()
        self.caption.setObjectName("dbloadCaption")
        self.caption.setWordWrap(True)
        self.caption.setTextFormat(Qt.TextFormat.RichText)
        self.op_label = QLabel("p99 of:")
        self.op_picker = QComboBox()
        self.op_picker.setObjectName("dbloadOpPicker")
        self.op_picker.setToolTip("The operation whose p99 latency per second is drawn, one line per server")
        self.throughput_plot = _plot("Operations per second", "ops/s", "seconds since the first step began")
        # sysbench: its queries by kind run 10-20x its transactions: on their own chart, not flattening those
        self.queries_plot = _plot("Queries per second, by kind", "queries/s", "seconds since the first step began")
        self.queries_items: dict[str, pg.PlotDataItem] = {}
        self.p99_plot = _plot("p99 latency per second", "ms", "seconds since the first step began")
        self.sweep_plot = _plot("Sweep: ops/s by clients", "ops/s", "clients")
        self.sweep_plot.setToolTip("Each step's throughput: the median of its per-second totals; the ring marks "
                                   "the knee")
        self.legend = QLabel()
        self.legend.setObjectName("dbloadLegend")
        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(self.op_label)
        top.addWidget(self.op_picker)
        charts = QHBoxLayout()
        charts.setContentsMargins(0, 0, 0, 0)
        charts.addWidget(self.throughput_plot, 3)
        charts.addWidget(self.queries_plot, 3)
        charts.addWidget(self.p99_plot, 3)
        charts.addWidget(self.sweep_plot, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.legend)
        layout.addLayout(charts)
        self.runs: list[DbLoadCurves] = []
        self.colours: dict[str, str] = {}
        self.throughput_items: dict[str, pg.PlotDataItem] = {}    # label or op -> its line
        self.p99_items: dict[str, pg.PlotDataItem] = {}
        self.sweep_items: dict[str, pg.PlotDataItem] = {}
        self.knee_items: dict[str, pg.ScatterPlotItem] = {}
        self._step_lines: list[pg.InfiniteLine] = []
        self.op_picker.currentIndexChanged.connect(lambda _i: self._draw_p99())
        self.setVisible(False)

    # -- data in ---------------------------------------------------------------------------------

    def set_runs(self, runs: Sequence[DbLoadCurves], colours: Mapping[str, str] | None = None) -> None:
        """The runs to draw; colours: each run label's host colour (default: by label among the runs)."""
        self.runs = [r for r in runs if r.throughput[0] or r.p99]
        labels = [r.label for r in self.runs]
        self.colours = {label: (colours or {}).get(label) or host_colour(label, labels) for label in labels}
        self.setVisible(bool(self.runs))
        ops = list(dict.fromkeys(op for run in self.runs for op in run.p99))
        current = self.op_picker.currentText()
        self.op_picker.blockSignals(True)
        self.op_picker.clear()
        self.op_picker.addItems(ops)
        if current in ops:
            self.op_picker.setCurrentText(current)
        self.op_picker.blockSignals(False)
        several = len(self.runs) > 1 and len(ops) > 1
        self.op_label.setVisible(several)
        self.op_picker.setVisible(several)
        self._draw_throughput()
        self._draw_p99()
        self._draw_sweep()
        self._draw_steps()
        self._caption()

    @property
    def single(self) -> bool:
        return len(self.runs) == 1

    # -- drawing ---------------------------------------------------------------------------------

    def _replace(self, plot: pg.PlotWidget, items: dict, key: str, line: Line, colour: str,
                 width: float = 1.5, dashed: bool = False) -> None:
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        # a second the tool did not report is a gap in the line, not a fall to zero
        item = pg.PlotDataItem(list(line[0]), list(line[1]), pen=pg.mkPen(colour, width=width, style=style),
                               connect="finite")
        plot.addItem(item)
        items[key] = item

    def _clear(self, plot: pg.PlotWidget, items: dict) -> None:
        for item in items.values():
            plot.removeItem(item)
        items.clear()

    def _draw_throughput(self) -> None:
        self._clear(self.throughput_plot, self.throughput_items)
        self._clear(self.queries_plot, self.queries_items)
        queries = False
        if self.single:
            run = self.runs[0]
            queries = TXN in run.by_op and len(run.by_op) > 1
            several = len(run.by_op) > 1 and not queries
            for op, line in run.by_op.items():
                if queries and op != TXN:   # the queries inside the transactions, on their own chart
                    self._replace(self.queries_plot, self.queries_items, op, line, op_colour(op))
                elif several:
                    self._replace(self.throughput_plot, self.throughput_items, op, line, op_colour(op))
            self._replace(self.throughput_plot, self.throughput_items, "total", run.throughput,
                          TOTAL_COLOUR if several else self.colours[run.label], width=2.0)
            self.throughput_plot.setTitle(f"<span style='color:{INK}; font-size:9pt'>"
                                          f"{'Transactions' if TXN in run.by_op else 'Operations'} per second</span>")
            self._fit(self.queries_plot, self.queries_items)
        else:
            for run in self.runs:
                self._replace(self.throughput_plot, self.throughput_items, run.label, run.throughput,
                              self.colours[run.label])
        self._fit(self.throughput_plot, self.throughput_items)
        self.queries_plot.setVisible(queries)

    def _draw_p99(self) -> None:
        self._clear(self.p99_plot, self.p99_items)
        if self.single:
            run = self.runs[0]
            for op, line in run.p99.items():
                colour = op_colour(op) if len(run.p99) > 1 else self.colours[run.label]
                self._replace(self.p99_plot, self.p99_items, op, line, colour)
            ops = list(run.p99)
            title = f"p99 latency per second, {ops[0]}" if len(ops) == 1 else "p99 latency per second, by operation"
        else:
            op = self.op_picker.currentText()
            for run in self.runs:
                if op in run.p99:
                    self._replace(self.p99_plot, self.p99_items, run.label, run.p99[op], self.colours[run.label])
            title = f"p99 latency per second, {op}" if op else "p99 latency per second"
        self.p99_plot.setTitle(f"<span style='color:{INK}; font-size:9pt'>{escape(title)}</span>")
        self._fit(self.p99_plot, self.p99_items)

    def _draw_sweep(self) -> None:
        self._clear(self.sweep_plot, self.sweep_items)
        self._clear(self.sweep_plot, self.knee_items)
        # clients double from step to step: evenly spaced points read better than a linear axis
        clients = sorted({c for run in self.runs for c in run.sweep.clients})
        index = {c: i for i, c in enumerate(clients)}
        self.sweep_plot.getAxis("bottom").setTicks([[(i, str(c)) for c, i in index.items()]])
        for run in self.runs:
            total = self.throughput_items.get("total") if self.single else None   # the sweep is of that line
            colour = total.opts["pen"].color().name() if total is not None else self.colours[run.label]
            xs = [float(index[c]) for c in run.sweep.clients]
            item = pg.PlotDataItem(xs, list(run.sweep.ops), pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=6,
                                   symbolBrush=colour, symbolPen=None)
            self.sweep_plot.addItem(item)
            self.sweep_items[run.label] = item
            if run.sweep.knee_clients is not None and run.sweep.knee_clients in index:
                at = run.sweep.clients.index(run.sweep.knee_clients)
                ring = pg.ScatterPlotItem([xs[at]], [run.sweep.ops[at]], size=15, symbol="o",
                                          pen=pg.mkPen(KNEE_COLOUR, width=2.5), brush=None)
                self.sweep_plot.addItem(ring)
                self.knee_items[run.label] = ring
        if clients:
            self.sweep_plot.setXRange(-0.4, len(clients) - 0.6, padding=0)
        self._fit_y(self.sweep_plot, [v for run in self.runs for v in run.sweep.ops])

    def _draw_steps(self) -> None:
        for line in self._step_lines:
            for plot in (self.throughput_plot, self.queries_plot, self.p99_plot):
                if line.scene() is plot.scene():
                    plot.removeItem(line)
        self._step_lines = []
        if not self.runs:
            return
        # the first run's steps; with several servers their sweeps normally share the steps
        for x, label in self.runs[0].steps[1:]:
            for plot in (self.throughput_plot, self.queries_plot, self.p99_plot):
                line = pg.InfiniteLine(pos=x, angle=90, movable=False,
                                       pen=pg.mkPen(MUTED, width=1, style=Qt.PenStyle.DotLine))
                line.setToolTip(f"{label} from here")
                plot.addItem(line, ignoreBounds=True)
                self._step_lines.append(line)

    def _fit(self, plot: pg.PlotWidget, items: Mapping[str, pg.PlotDataItem]) -> None:
        xs = [x for item in items.values() for x in (item.getData()[0] if item.getData()[0] is not None else [])]
        ys = [y for item in items.values() for y in (item.getData()[1] if item.getData()[1] is not None else [])]
        if xs:
            plot.setXRange(0.0, max(xs), padding=0.01)
        self._fit_y(plot, ys)

    @staticmethod
    def _fit_y(plot: pg.PlotWidget, values: Sequence[float]) -> None:
        finite = [v for v in values if v == v]
        plot.setYRange(0.0, (max(finite) * 1.1 if finite and max(finite) > 0 else 1.0), padding=0)

    def _caption(self) -> None:
        swatch = "<span style='color:{}'>&#9632;</span>&nbsp;{}"
        if self.single:
            run = self.runs[0]
            ops = [op for op in dict.fromkeys([*run.by_op, *run.p99]) if op != TXN]
            keys = [swatch.format(op_colour(op), escape(op)) for op in ops] if len(run.by_op) > 1 or len(run.p99) > 1 \
                else []
            if len(run.by_op) > 1 and TXN not in run.by_op:
                keys.insert(0, swatch.format(TOTAL_COLOUR, "total"))
            self.legend.setText("&nbsp;&nbsp;&nbsp;".join(keys))
            self.legend.setVisible(bool(keys))
        else:
            self.legend.setText("&nbsp;&nbsp;&nbsp;".join(swatch.format(self.colours[r.label], escape(r.label))
                                                          for r in self.runs))
            self.legend.setVisible(bool(self.runs))
        parts = []
        for run in self.runs:
            who = f"{escape(run.label)}: " if not self.single else ""
            tool = f"{escape(run.engine)}, {escape(run.workload)}" if run.workload else escape(run.engine)
            knee = escape(run.sweep.knee_text) if run.sweep.knee_text else "knee not stored"
            parts.append(f"{who}{tool} — best at {escape(run.best)}; {knee}")
        self.caption.setText("<b>Database load</b> — " + " · ".join(parts) if parts else "")

    # -- what is drawn (tests) -------------------------------------------------------------------

    @staticmethod
    def drawn(item: pg.PlotDataItem) -> Line:
        xs, ys = item.getData()
        return ([] if xs is None else [float(x) for x in xs], [] if ys is None else [float(y) for y in ys])
