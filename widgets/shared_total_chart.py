"""The live view of a shared-storage sweep: the TOTAL across clients as one curve, the clients stacked under it.

Each client's second adds a band on top of the clients before it (in host-colour order), so the top of
the last band is the total, drawn again as a bold line in the text colour. x is seconds on the common
clock from the sweep's start; the step now running is named in the title, never on the plot, so no
label covers a curve. A second a client has not reported yet counts as 0 until it comes.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from widgets.chart_theme import chart_colours
from widgets.host_colours import host_colour, host_order

REDRAW_MS = 100        # ticks come once a second per client: redraw at most ten times a second
FILL_ALPHA = 110
TOTAL_NAME = "TOTAL"
GAP_EDGE = 0.01        # seconds after a step's last second: where its curve drops to 0


class SharedTotalChart(QWidget):
    def __init__(self, unit: str = "op/s", parent: QWidget | None = None, name: str = "Shared storage") -> None:
        super().__init__(parent)
        self.setObjectName("sharedTotalChart")
        self.unit = unit
        self.name = name   # the test, first in the title
        self._colours = chart_colours(self.palette())
        self.title = QLabel()
        self.title.setObjectName("sharedTotalTitle")
        self.plot = pg.PlotWidget(background=self._colours.background)
        self.plot.setObjectName("sharedTotalPlot")
        self.plot.showGrid(y=True, alpha=0.25)
        self.plot.setLabel("bottom", "seconds since the sweep began")
        self.plot.setLabel("left", unit)
        self.plot.setMouseEnabled(x=False, y=False)
        # the legend sits above the plot, not on it: no label covers a curve
        self.legend = QLabel()
        self.legend.setObjectName("sharedTotalLegend")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)
        self._values: dict[str, dict[float, float]] = {}
        self._edges: dict[str, pg.PlotDataItem] = {}
        self._fills: dict[str, pg.FillBetweenItem] = {}
        self._floor = pg.PlotDataItem([], [])
        self.plot.addItem(self._floor)
        self._total = pg.PlotDataItem([], [], pen=pg.mkPen(self._colours.ink, width=3))
        self.plot.addItem(self._total)
        self._step = ""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        self._update_title()

    # -- data in ---------------------------------------------------------------------------------

    def set_step(self, label: str) -> None:
        """The step now running ("2 clients x 4 threads"), shown in the title."""
        self._step = label
        self._update_title()

    def add_tick(self, client: str, x: float, value: float) -> None:
        """One client's figure for the second ending at x (seconds since the sweep began)."""
        self._values.setdefault(client, {})[float(x)] = float(value)
        if not self._timer.isActive():
            self._timer.start()

    def set_series(self, per_client: Mapping[str, Sequence[tuple[float, float]]]) -> None:
        """A whole stored sweep at once: client -> (x, value) pairs."""
        self._values = {client: {float(x): float(v) for x, v in points} for client, points in per_client.items()}
        self.redraw()

    def clear(self) -> None:
        self._values = {}
        self._step = ""
        self._update_title()
        self.redraw()

    # -- what is shown ---------------------------------------------------------------------------

    def clients(self) -> list[str]:
        return host_order(self._values)

    def seconds(self) -> list[float]:
        """The x of every second some client reported."""
        return sorted({x for values in self._values.values() for x in values})

    def drawn_xs(self) -> list[float]:
        """The seconds, and a 0 where each step began and where it ended: between the steps nobody
        works, and a line drawn straight across the pause would say otherwise."""
        seen, out = self.seconds(), []
        for index, x in enumerate(seen):
            if index == 0 or x - seen[index - 1] > 1.5:
                if index:
                    out.append(seen[index - 1] + GAP_EDGE)
                out.append(x - 1.0)
            out.append(x)
        return out

    def stacked(self, xs: Sequence[float] | None = None) -> dict[str, list[float]]:
        """Each client's upper edge at every x (default: the reported seconds): its value plus those of
        the clients below it."""
        xs = self.seconds() if xs is None else xs
        running: list[float] | None = None
        out = {}
        for client in self.clients():
            own = [self._values[client].get(x, 0.0) for x in xs]
            running = own if running is None else [a + b for a, b in zip(running, own, strict=True)]
            out[client] = list(running)
        return out

    def totals(self, xs: Sequence[float] | None = None) -> list[float]:
        edges = self.stacked(xs)
        return edges[self.clients()[-1]] if edges else []

    def redraw(self) -> None:
        xs, clients = self.drawn_xs(), self.clients()
        edges = self.stacked(xs)
        for gone in [c for c in self._edges if c not in edges]:
            self.plot.removeItem(self._fills.pop(gone))
            self.plot.removeItem(self._edges.pop(gone))
        self._floor.setData(xs, [0.0] * len(xs))
        below = self._floor
        for client in clients:
            colour = host_colour(client, clients)
            edge = self._edges.get(client)
            if edge is None:
                edge = pg.PlotDataItem([], [], pen=pg.mkPen(colour, width=1))
                self._edges[client] = edge
                self.plot.addItem(edge)
            fill_colour = QColor(colour)
            fill_colour.setAlpha(FILL_ALPHA)
            old = self._fills.pop(client, None)
            if old is not None:
                self.plot.removeItem(old)
            edge.setData(xs, edges[client])
            fill = pg.FillBetweenItem(below, edge, brush=pg.mkBrush(fill_colour))
            fill.setZValue(-10)
            self._fills[client] = fill
            self.plot.addItem(fill)
            below = edge
        self._total.setData(xs, self.totals(xs))
        self._total.setZValue(10)
        self._update_title()
        self._update_legend(clients)

    def _update_legend(self, clients: list[str]) -> None:
        swatch = "<span style='color:{}'>&#9632;</span> {}"
        items = [f"<b>{swatch.format(self._colours.ink, TOTAL_NAME)}</b>"]
        items += [swatch.format(host_colour(c, clients), c) for c in reversed(clients)]   # top band first
        self.legend.setText("&nbsp;&nbsp;&nbsp;".join(items))

    def _update_title(self) -> None:
        totals = self.totals()
        now = f"{totals[-1]:,.0f} {self.unit} total" if totals else "waiting for the first second"
        step = f" — {self._step}" if self._step else ""
        self.title.setText(f"<b>{self.name}: {TOTAL_NAME} {self.unit}, clients stacked</b>{step} — {now}")
