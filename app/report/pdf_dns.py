"""The dns runs in the PDF: the latency distribution (CDF on a log time axis, one line per resolver and pass,
the share never answered as a bar at the right edge), the counts per resolver and pass, the verdicts on
p50, p99 and timeouts, and the slowest names.

The curves are the stored points (app.compare.dns.DnsLine.cdf) joined by straight lines; the time axis is
log10 of the milliseconds, ticked at powers of ten. Nothing is written over a curve: the key is above the
plot and the never-answered bars stand right of the last point of every curve.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPainterPath, QPen

from app.compare.dns import DnsLine, ms_text
from app.report.content import ReportData
from app.report.pdf_charts import titled
from app.report.pdf_pages import GRID, INK, MUTED, SMALL, SMALL_INK, Flow, Line, Style, font
from app.report.pdf_tables import cell, table
from widgets.dns_table import COLUMNS, line_cells
from widgets.resolver_colours import resolver_colours

DNS_CHART_HEIGHT = 230.0
TITLE = Style(9.0, bold=True)
KEY_ROW = 12.0
SLOWEST_PRINTED = 10
NEVER_BAR = 5.0
# the Compare tab's columns the page has room for: all but the engine (said in the method notes)
PDF_COLUMNS = tuple(range(2, len(COLUMNS) - 1))


def dns_colours(lines: Sequence[DnsLine]) -> dict[str, QColor]:
    """The same colours as the Compare tab and the live charts (by the lines' labels: widgets.resolver_colours)."""
    return {label: QColor(colour) for label, colour in resolver_colours(x.label for x in lines).items()}


def key_text(line: DnsLine) -> str:
    text = f"{line.label}, {line.pass_}"
    if line.never_share > 0:
        share = 100.0 * line.never_share
        text += f" — never answered {share:.2g} %" if share < 10 else f" — never answered {share:.0f} %"
    return text


def table_texts(lines: Sequence[DnsLine]) -> list[list[str]]:
    """Per line, the texts of the PDF's counts table: "resolver, pass", then the Compare tab's own cells of
    PDF_COLUMNS (one formatter: widgets.dns_table)."""
    out = []
    for line in lines:
        cells = line_cells(line)
        out.append([f"{line.label}, {line.pass_}"] + [cells[i] for i in PDF_COLUMNS])
    return out


def dns_block(flow: Flow, data: ReportData) -> None:
    """Chart, counts, verdicts and slowest names of the compared dns runs."""
    lines = list(data.dns)
    if not lines:
        return
    colours = dns_colours(lines)
    title: list[Line] = [[("Latency distribution of every query", TITLE)],
                         [("share answered within a time (log scale); cold pass solid, warm dashed; bar at the "
                           "right: never answered", SMALL)]]

    def paint(painter: QPainter, rect: QRectF) -> None:
        cdf_chart(painter, titled(painter, rect, title), lines, colours)
    flow.gap(4.0)
    flow.place(DNS_CHART_HEIGHT, paint)
    flow.gap(6.0)
    headers = ["Resolver, pass"] + [COLUMNS[i] for i in PDF_COLUMNS]
    rows = []
    for line, texts in zip(lines, table_texts(lines), strict=True):
        rows.append([cell(texts[0], Style(8.0, bold=True, color=colours[line.label]))]
                    + [cell(text, right=True) for text in texts[1:]])
    table(flow, headers, rows, fixed=1)
    flow.gap(4.0)
    verdicts = []
    for pass_ in dict.fromkeys(x.pass_ for x in lines):
        these = [x for x in lines if x.pass_ == pass_]
        for key, name in (("p50_ms", "p50"), ("p99_ms", "p99"), ("timeouts", "timeouts")):
            said = [f"{x.label} {x.verdicts[key]}" for x in these if x.verdicts.get(key)]
            if said:
                verdicts.append(f"{pass_} pass, {name}: " + "; ".join(said))
    verdicts += [f"Note: {x.label}, {x.note}" for x in lines if x.note]
    if verdicts:
        flow.text("Verdicts (lower is better; against the leader of each pass)", Style(8.5, bold=True), after=1.0,
                  keep=12.0)
        flow.bullets(verdicts, SMALL_INK, after=3.0)
    slowest = [f"{x.label}, {x.pass_}: " + "; ".join(
        f"{item.get('name')} " + ("timeout" if item.get("ms") is None else f"{ms_text(item.get('ms'))} ms")
        for item in x.slowest[:SLOWEST_PRINTED]) for x in lines if x.slowest]
    if slowest:
        flow.text("Slowest names (timeouts first)", Style(8.5, bold=True), after=1.0, keep=12.0)
        flow.bullets(slowest, SMALL_INK, after=3.0)


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten from below low to above high (ms)."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    return [10.0 ** e for e in range(first, last + 1)]


def tick_label(value: float) -> str:
    return f"{value:g}" if value < 1 else f"{int(value):,}"


def cdf_chart(painter: QPainter, rect: QRectF, lines: Sequence[DnsLine], colours: dict[str, QColor]) -> None:
    metrics = QFontMetricsF(font(SMALL_INK), painter.device())
    # the key above the plot, wrapping at the width
    x, y = rect.left(), rect.top()
    painter.setFont(font(SMALL_INK))
    for line in lines:
        text = key_text(line)
        width = 22.0 + metrics.horizontalAdvance(text) + 14.0
        if x > rect.left() and x + width > rect.right():
            x, y = rect.left(), y + KEY_ROW
        painter.setPen(_pen(colours[line.label], line.pass_ != "cold", 2.0))
        painter.drawLine(QPointF(x, y + 6.0), QPointF(x + 16.0, y + 6.0))
        painter.setPen(INK)
        painter.drawText(QRectF(x + 20.0, y, width, KEY_ROW), int(Qt.AlignmentFlag.AlignLeft), text)
        x += width
    top = y + KEY_ROW + 6.0
    points = [ms for line in lines for ms, _share in line.cdf if ms > 0]
    if not points:
        return
    never = [line for line in lines if line.never_share > 0]
    ticks = log_ticks(min(points), max(points))
    left = rect.left() + metrics.horizontalAdvance("100 %") + 8.0
    bars = (len(never) + 1) * (NEVER_BAR + 4.0)
    plot = QRectF(left, top, rect.right() - left - bars - 8.0, rect.bottom() - top - 28.0)
    axes = Axes(plot, ticks[0], ticks[-1])
    px, py = axes.x, axes.y

    painter.setFont(font(SMALL))
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        painter.setPen(QPen(GRID, 0.5))
        painter.drawLine(QPointF(plot.left(), py(share)), QPointF(plot.right(), py(share)))
        painter.setPen(MUTED)
        painter.drawText(QRectF(rect.left(), py(share) - 7.0, left - rect.left() - 4.0, 14.0),
                         int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), f"{share * 100:.0f} %")
    for tick in ticks:
        painter.setPen(QPen(GRID, 0.5))
        painter.drawLine(QPointF(px(tick), plot.top()), QPointF(px(tick), plot.bottom()))
        painter.setPen(MUTED)
        painter.drawText(QRectF(px(tick) - 30.0, plot.bottom() + 3.0, 60.0, 12.0),
                         int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), tick_label(tick))
    painter.setPen(QPen(MUTED, 0.8))
    painter.drawLine(plot.bottomLeft(), plot.bottomRight())
    painter.drawLine(plot.bottomLeft(), plot.topLeft())
    painter.drawText(QRectF(plot.left(), rect.bottom() - 12.0, plot.width(), 12.0),
                     int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), "latency (ms, log scale)")
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for line in lines:
        path = QPainterPath()
        for n, at in enumerate(curve_points(line, axes)):
            path.lineTo(at) if n else path.moveTo(at)
        painter.setPen(_pen(colours[line.label], line.pass_ != "cold", 1.4))
        painter.drawPath(path)
    # never answered: from 1 − share up to 100 %, right of the plot, one bar per line that lost queries
    for index, line in enumerate(never):
        x = plot.right() + 6.0 + index * (NEVER_BAR + 4.0)
        height = max(line.never_share * plot.height(), 4.0)   # a few in thousands still shows
        painter.fillRect(QRectF(x, py(1.0), NEVER_BAR, height), colours[line.label])
        if line.pass_ != "cold":
            painter.fillRect(QRectF(x + 1.5, py(1.0) + 0.5, NEVER_BAR - 3.0, max(height - 1.0, 0.5)),
                             QColor("white"))


@dataclass(frozen=True)
class Axes:
    """Where a (ms, share) point lands: log10 of ms across the plot, the share up it."""

    plot: QRectF
    low_ms: float
    high_ms: float

    def x(self, ms: float) -> float:
        lo, hi = math.log10(self.low_ms), math.log10(self.high_ms)
        return self.plot.left() + (math.log10(ms) - lo) / (hi - lo) * self.plot.width()

    def y(self, share: float) -> float:
        return self.plot.bottom() - share * self.plot.height()

    def back(self, point: QPointF) -> tuple[float, float]:
        """The (ms, share) a drawn point stands for."""
        lo, hi = math.log10(self.low_ms), math.log10(self.high_ms)
        ms = 10.0 ** (lo + (point.x() - self.plot.left()) / self.plot.width() * (hi - lo))
        return ms, (self.plot.bottom() - point.y()) / self.plot.height()


def curve_points(line: DnsLine, axes: Axes) -> list[QPointF]:
    """The stored points of a line's distribution where the chart draws them (a point at 0 ms has no place
    on a log axis)."""
    return [QPointF(axes.x(ms), axes.y(share)) for ms, share in line.cdf if ms > 0]


def _pen(colour: QColor, dashed: bool, width: float) -> QPen:
    pen = QPen(colour, width)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    return pen
