"""The dns runs of a comparison: the latency distribution (CDF, log time axis), the counts table with the
verdicts on p50, p99 and timeouts, and the slowest names.

One line per resolver (or per host for one resolver asked from several hosts), in its colour; the cold
pass solid, the warm pass dashed. The curve is the stored distribution exactly; what was never answered
(timeouts) is a bar at the right edge from 1 − that share to 1, with the share written in the legend, so
a resolver that "wins" on the median but loses queries is seen losing them.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from widgets.chart_theme import chart_colours
from widgets.dns_table import COLUMNS, line_cells, ms
from widgets.plot_items import MUTED, escape
from widgets.resolver_colours import resolver_colours

SLOWEST_SHOWN = 10
VERDICT_FIGURES = (("p50_ms", "p50"), ("p99_ms", "p99"), ("timeouts", "timeouts"))


class DnsLineView(Protocol):
    """What the panel reads of one resolver's pass (app.compare.dns.DnsLine)."""

    @property
    def label(self) -> str: ...
    @property
    def pass_(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def queries(self) -> int: ...
    @property
    def counts(self) -> Mapping[str, int]: ...
    @property
    def latency(self) -> Mapping[str, float]: ...
    @property
    def total_s(self) -> float | None: ...
    @property
    def qps(self) -> float | None: ...
    @property
    def cdf(self) -> Sequence[tuple[float, float]]: ...
    @property
    def slowest(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def verdicts(self) -> Mapping[str, str]: ...
    @property
    def never_share(self) -> float: ...
    @property
    def note(self) -> str: ...


def percent(share: float) -> str:
    return f"{100.0 * share:.2g} %" if share < 0.1 else f"{100.0 * share:.0f} %"


class DnsCdfChart(QWidget):
    """Share of the queries answered within a time, on a log time axis, one curve per line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dnsCdfChart")
        colours = chart_colours(self.palette())
        self.plot = pg.PlotWidget(background=colours.background)
        self.plot.setLogMode(x=True, y=False)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setLabel("left", "share of queries answered within")
        self.plot.setLabel("bottom", "latency (ms, log scale)")
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setYRange(0.0, 1.0, padding=0.02)
        # the key above the plot, never on it: every curve reaches the top left
        self.key = QLabel()
        self.key.setObjectName("dnsCdfKey")
        self.key.setWordWrap(True)
        self.key.setTextFormat(Qt.TextFormat.RichText)
        self.names: list[str] = []     # each curve's name in the key, in drawing order
        self.setMinimumHeight(320)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.key)
        layout.addWidget(self.plot, 1)
        self.curves: dict[tuple[str, str], pg.PlotDataItem] = {}
        self.never: dict[tuple[str, str], pg.PlotDataItem] = {}

    def set_lines(self, lines: Sequence[DnsLineView], colours: Mapping[str, str]) -> None:
        self.plot.clear()
        self.curves, self.never = {}, {}
        self.names = []
        keys = []
        right = max((ms for line in lines for ms, _share in line.cdf if ms > 0), default=1000.0)
        edge = right * 1.6       # where the never-answered bars stand, right of every curve
        for line in lines:
            colour = colours.get(line.label, "#3b7dd8")
            dashed = line.pass_ != "cold"
            pen = pg.mkPen(colour, width=2, style=Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine)
            xs = [ms for ms, _share in line.cdf]
            ys = [share for _ms, share in line.cdf]
            name = f"{line.label}, {line.pass_}"
            if line.never_share > 0:
                name += f" — never answered {percent(line.never_share)}"
            curve = pg.PlotDataItem(xs, ys, pen=pen)
            self.plot.addItem(curve)
            self.names.append(name)
            keys.append(f"<span style='color:{colour}; font-weight:bold'>{'- - -' if dashed else '━━━'}</span>"
                        f"&nbsp;{escape(name)}")
            self.curves[(line.label, line.pass_)] = curve
            if line.never_share > 0:
                bar = pg.PlotDataItem([edge, edge], [1.0 - line.never_share, 1.0],
                                      pen=pg.mkPen(colour, width=7), symbol="t1", symbolSize=8,
                                      symbolBrush=colour, symbolPen=colour)
                self.plot.addItem(bar)
                self.never[(line.label, line.pass_)] = bar
                edge *= 1.25     # two resolvers' bars side by side, never on top of each other
        self.key.setText("&nbsp;&nbsp;&nbsp; ".join(keys))
        if lines:
            lows = [ms for line in lines for ms, _s in line.cdf if ms > 0]
            low = min(lows) if lows else 0.1
            self.plot.setXRange(math.log10(low * 0.8), math.log10(edge * 1.3), padding=0.0)


class DnsPanel(QWidget):
    """The dns section of the Compare tab (hidden when no dns run is compared)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dnsPanel")
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet(f"color: {MUTED};")
        self.chart = DnsCdfChart()
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("dnsCounts")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setWordWrap(True)
        self.verdicts = QLabel()
        self.verdicts.setObjectName("dnsVerdicts")
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextFormat(Qt.TextFormat.RichText)
        self.verdicts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.slowest = QLabel()
        self.slowest.setObjectName("dnsSlowest")
        self.slowest.setWordWrap(True)
        self.slowest.setTextFormat(Qt.TextFormat.RichText)
        self.slowest.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.chart)
        layout.addWidget(self.table)
        layout.addWidget(self.verdicts)
        layout.addWidget(self.slowest)
        self.lines: list[DnsLineView] = []

    def set_lines(self, lines: Sequence[DnsLineView]) -> bool:
        """Show these lines; False (and hidden) when there are none."""
        self.lines = list(lines)
        self.setVisible(bool(self.lines))
        if not self.lines:
            return False
        colours = resolver_colours(line.label for line in self.lines)
        self.chart.set_lines(self.lines, colours)
        self.caption.setText("Latency distribution of every query, cold pass solid, warm pass dashed; the bar at "
                             "the right edge is the share never answered (timeouts).")
        self._fill_table(colours)
        self.verdicts.setText(self._verdicts_html(colours))
        self.slowest.setText(self._slowest_html(colours))
        return True

    def _fill_table(self, colours: Mapping[str, str]) -> None:
        self.table.setRowCount(len(self.lines))
        for row, line in enumerate(self.lines):
            cells = line_cells(line)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == 0:
                    item.setForeground(pg.mkColor(colours.get(line.label, "#000000")))
                elif column not in (1, len(cells) - 1):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()
        height = self.table.horizontalHeader().height() + sum(self.table.rowHeight(r) for r in range(len(self.lines)))
        self.table.setFixedHeight(height + 4)

    def _verdicts_html(self, colours: Mapping[str, str]) -> str:
        """Per pass and figure, every line's verdict against the leader of that pass."""
        parts = ["<b>Verdicts</b> (lower is better; against the leader of each pass)"]
        for pass_ in dict.fromkeys(line.pass_ for line in self.lines):
            these = [line for line in self.lines if line.pass_ == pass_]
            for key, title in VERDICT_FIGURES:
                said = [f"<span style='color:{colours.get(line.label, '#000')}'>{escape(line.label)}</span> "
                        f"{escape(line.verdicts[key])}" for line in these if line.verdicts.get(key)]
                if said:
                    parts.append(f"{escape(pass_)} pass, {title}: " + "; ".join(said))
        for line in self.lines:
            if line.note:
                parts.append(f"<b>Note</b>: <span style='color:{colours.get(line.label, '#000')}'>"
                             f"{escape(line.label)}</span>, {escape(line.note)}")
        return "<br>".join(parts)

    def _slowest_html(self, colours: Mapping[str, str]) -> str:
        parts = ["<b>Slowest names</b> (timeouts first)"]
        for line in self.lines:
            if not line.slowest:
                continue
            items = ", ".join(f"{escape(str(item.get('name', '?')))} {escape(ms(item.get('ms')))}"
                              + ("" if item.get("ms") is None else " ms")
                              + (f" {escape(str(item['rcode']))}" if item.get("rcode") not in (None, "NOERROR")
                                 and item.get("ms") is not None else "")
                              for item in line.slowest[:SLOWEST_SHOWN])
            more = len(line.slowest) - SLOWEST_SHOWN
            tail = f" … and {more} more" if more > 0 else ""
            parts.append(f"<span style='color:{colours.get(line.label, '#000')}'><b>{escape(line.label)}</b></span>"
                         f", {escape(line.pass_)}: {items}{tail}")
        return "<br>".join(parts)
