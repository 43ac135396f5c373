"""Charts drawn as vector shapes with QPainter: bars per figure and telemetry curves on one time axis."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPainterPath, QPen

from app.report.pdf_pages import BEST, GRID, INK, MUTED, SMALL, SMALL_INK, Style, font

BAR = QColor("#9aa9bb")
BAR_HEIGHT = 12.0
BAR_GAP = 4.0
TITLE_LINE = 12.0
VALUE = Style(7.5)
VALUE_BEST = Style(7.5, bold=True, color=BEST)
WHISKER = QColor("#1d2733")


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str          # the value as printed: "17,000"
    best: bool
    colour: QColor = field(default_factory=lambda: QColor(BAR))
    low: float | None = None     # the spread as a whisker, in the value's unit
    high: float | None = None


def bar_chart_height(count: int) -> float:
    """A bar chart with a title of two lines (the figure; its unit and which way is better)."""
    return 2 * TITLE_LINE + 5.0 + count * (BAR_HEIGHT + BAR_GAP) + 4.0


def titled(painter: QPainter, rect: QRectF, title: Sequence[Sequence[tuple[str, Style]]]) -> QRectF:
    """A chart's title lines at the top of rect (each elided when too long); returns the room below them."""
    top = rect.top()
    for line in title:
        x = rect.left()
        for text, style in line:
            metrics = QFontMetricsF(font(style), painter.device())
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(rect.right() - x, 0.0))
            painter.setFont(font(style))
            painter.setPen(style.color)
            painter.drawText(QPointF(x, top + metrics.ascent()), shown)
            x += metrics.horizontalAdvance(shown)
        top += TITLE_LINE
    return QRectF(rect.left(), top + 5.0, rect.width(), rect.bottom() - top - 5.0)


def bar_chart(painter: QPainter, rect: QRectF, bars: Sequence[Bar]) -> None:
    """Horizontal bars from zero in the servers' colours, the spread as a whisker, the value after it."""
    metrics = QFontMetricsF(font(SMALL_INK), painter.device())
    value_metrics = QFontMetricsF(font(VALUE_BEST), painter.device())
    label_width = min(max((metrics.horizontalAdvance(b.label) for b in bars), default=0.0) + 6.0, rect.width() * 0.42)
    left = rect.left() + label_width
    top = rect.top() + 2.0
    widest_text = max((value_metrics.horizontalAdvance(b.text) for b in bars), default=0.0) + 8.0
    span = max(rect.width() - label_width - widest_text, 10.0)
    peak = max((max(b.value, b.high or 0.0) for b in bars), default=0.0)

    def x_of(value: float) -> float:
        return left + span * value / peak if peak > 0 and value > 0 else left

    for index, bar in enumerate(bars):
        y = top + index * (BAR_HEIGHT + BAR_GAP)
        painter.setFont(font(SMALL_INK))
        painter.setPen(INK)
        name = metrics.elidedText(bar.label, Qt.TextElideMode.ElideMiddle, label_width - 6.0)
        painter.drawText(QRectF(rect.left(), y, label_width - 6.0, BAR_HEIGHT),
                         int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), name)
        end = x_of(bar.value)
        painter.fillRect(QRectF(left, y, max(end - left, 0.5), BAR_HEIGHT), bar.colour)
        right = end
        if bar.low is not None and bar.high is not None and bar.high > bar.low:
            low, high, mid = x_of(max(bar.low, 0.0)), x_of(bar.high), y + BAR_HEIGHT / 2
            painter.setPen(QPen(WHISKER, 0.9))
            painter.drawLine(QPointF(low, mid), QPointF(high, mid))
            for x in (low, high):
                painter.drawLine(QPointF(x, mid - 3.5), QPointF(x, mid + 3.5))
            right = max(end, high)
        style = VALUE_BEST if bar.best else VALUE
        painter.setFont(font(style))
        painter.setPen(style.color)
        painter.drawText(QRectF(right + 4.0, y, widest_text, BAR_HEIGHT),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), bar.text)
    painter.setPen(QPen(MUTED, 0.8))
    bottom = top + len(bars) * (BAR_HEIGHT + BAR_GAP) - BAR_GAP + 2.0
    painter.drawLine(QPointF(left, top - 2.0), QPointF(left, bottom))


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^n) covering low..high."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        high = low + 1.0
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-6:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 10))
    return ticks


PERCENT_SLACK = 105.0   # %util a hair over 100 (counters read a moment apart) still reads on a 0-100 axis


def percent_ticks(low: float, high: float) -> list[float]:
    """A percent axis: 0-100 for a busy curve (also one a little over 100), never 0-125."""
    if 50.0 < high <= PERCENT_SLACK:
        return nice_ticks(low, 100.0, 5)
    return nice_ticks(low, high if high > low else low + 1.0, 5)


def tick_text(value: float) -> str:
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Curve:
    label: str
    t: Sequence[float]
    values: Sequence[float]
    colour: QColor


LEGEND_ROW = 13.0


def legend_height(painter_width: float, curves: Sequence[Curve], measure) -> float:
    """Rows the legend needs at this width (measure: text -> width)."""
    rows, x = 1, 0.0
    for curve in curves:
        width = 22.0 + measure(curve.label) + 14.0
        if x and x + width > painter_width:
            rows, x = rows + 1, 0.0
        x += width
    return rows * LEGEND_ROW + 4.0


def draw_legend(painter: QPainter, rect: QRectF, curves: Sequence[Curve]) -> None:
    """A short line of each curve's colour and its label, left to right, wrapping at the width."""
    metrics = QFontMetricsF(font(SMALL_INK), painter.device())
    x, y = rect.left(), rect.top()
    painter.setFont(font(SMALL_INK))
    for curve in curves:
        width = 22.0 + metrics.horizontalAdvance(curve.label) + 14.0
        if x > rect.left() and x + width > rect.right():
            x, y = rect.left(), y + LEGEND_ROW
        painter.setPen(QPen(curve.colour, 2.2))
        painter.drawLine(QPointF(x, y + 6.0), QPointF(x + 16.0, y + 6.0))
        painter.setPen(INK)
        painter.drawText(QRectF(x + 20.0, y, width, LEGEND_ROW), int(Qt.AlignmentFlag.AlignLeft), curve.label)
        x += width


def line_chart(painter: QPainter, rect: QRectF, curves: Sequence[Curve], unit: str, x_title: str,
               with_legend: bool = True) -> None:
    """Curves over time with ticked axes and the unit on the y axis; a legend on top unless the charts
    around it share one."""
    metrics = QFontMetricsF(font(SMALL_INK), painter.device())
    legend = legend_height(rect.width(), curves, metrics.horizontalAdvance) if with_legend else 0.0
    if with_legend:
        draw_legend(painter, rect, curves)
    t_all = [t for c in curves for t in c.t]
    v_all = [v for c in curves for v in c.values if math.isfinite(v)]
    if not t_all or not v_all:
        return
    x_ticks = nice_ticks(min(t_all), max(t_all), 8)
    low = min(0.0, min(v_all))
    high = max(v_all)
    y_ticks = percent_ticks(low, high) if unit == "%" else nice_ticks(low, high if high > low else low + 1.0, 5)
    y_labels = [tick_text(v) for v in y_ticks]
    axis_left = rect.left() + max(metrics.horizontalAdvance(s) for s in y_labels) + 8.0
    plot = QRectF(axis_left, rect.top() + legend + 14.0, rect.right() - axis_left - 6.0,
                  rect.height() - legend - 14.0 - 30.0)

    def px(t: float) -> float:
        return plot.left() + (t - x_ticks[0]) / (x_ticks[-1] - x_ticks[0]) * plot.width()

    def py(v: float) -> float:
        return plot.bottom() - (v - y_ticks[0]) / (y_ticks[-1] - y_ticks[0]) * plot.height()

    painter.setFont(font(SMALL))
    for value, label in zip(y_ticks, y_labels, strict=True):
        painter.setPen(QPen(GRID, 0.5))
        painter.drawLine(QPointF(plot.left(), py(value)), QPointF(plot.right(), py(value)))
        painter.setPen(MUTED)
        painter.drawText(QRectF(rect.left(), py(value) - 7.0, axis_left - rect.left() - 4.0, 14.0),
                         int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), label)
    for value in x_ticks:
        painter.setPen(QPen(GRID, 0.5))
        painter.drawLine(QPointF(px(value), plot.top()), QPointF(px(value), plot.bottom()))
        painter.setPen(QPen(MUTED, 0.8))
        painter.drawLine(QPointF(px(value), plot.bottom()), QPointF(px(value), plot.bottom() + 3.0))
        painter.drawText(QRectF(px(value) - 30.0, plot.bottom() + 4.0, 60.0, 12.0),
                         int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), tick_text(value))
    painter.setPen(QPen(MUTED, 0.8))
    painter.drawLine(plot.bottomLeft(), plot.bottomRight())
    painter.drawLine(plot.bottomLeft(), plot.topLeft())
    if x_ticks[0] < 0.0:   # the test start
        painter.setPen(QPen(INK, 0.8, Qt.PenStyle.DashLine))
        painter.drawLine(QPointF(px(0.0), plot.top()), QPointF(px(0.0), plot.bottom()))
    painter.setPen(MUTED)
    painter.drawText(QRectF(plot.left(), plot.bottom() + 16.0, plot.width(), 12.0),
                     int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), x_title)
    painter.drawText(QRectF(rect.left(), plot.top() - 14.0, plot.width(), 12.0),
                     int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop), unit or "value")
    painter.save()
    painter.setClipRect(plot.adjusted(-1.0, -1.0, 1.0, 1.0))
    for curve in curves:
        path = QPainterPath()
        started = False
        for t, v in zip(curve.t, curve.values, strict=False):
            if not math.isfinite(v):
                started = False
                continue
            point = QPointF(px(t), py(v))
            if started:
                path.lineTo(point)
            else:
                path.moveTo(point)
                started = True
        painter.setPen(QPen(curve.colour, 1.3))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
    painter.restore()
