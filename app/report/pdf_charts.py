"""Charts drawn as vector shapes with QPainter: bars per figure and telemetry curves on one time axis."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPainterPath, QPen

from app.report.pdf_pages import BEST, GRID, INK, MUTED, SMALL, SMALL_INK, Style, font

BAR = QColor("#9aa9bb")
SERIES_COLOURS = (QColor("#2f6db5"), QColor("#d1495b"), QColor("#2e9e5b"), QColor("#e0a030"),
                  QColor("#7b4fb3"), QColor("#1aa3a3"), QColor("#8c6d46"), QColor("#555555"))
BAR_HEIGHT = 17.0
BAR_GAP = 6.0
VALUE = Style(8.0, bold=True)


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str          # the value as printed: "17,000"
    best: bool


def bar_chart_height(count: int) -> float:
    return count * (BAR_HEIGHT + BAR_GAP) + 4.0


def bar_chart(painter: QPainter, rect: QRectF, bars: Sequence[Bar]) -> None:
    """Horizontal bars from zero: server names on the left axis, the value printed on each bar."""
    metrics = QFontMetricsF(font(SMALL_INK), painter.device())
    value_metrics = QFontMetricsF(font(VALUE), painter.device())
    label_width = min(max((metrics.horizontalAdvance(b.label) for b in bars), default=0.0) + 8.0, rect.width() * 0.4)
    left = rect.left() + label_width
    top = rect.top() + 2.0
    widest_text = max((value_metrics.horizontalAdvance(b.text) for b in bars), default=0.0) + 8.0
    span = rect.width() - label_width - widest_text
    peak = max((b.value for b in bars), default=0.0)
    for index, bar in enumerate(bars):
        y = top + index * (BAR_HEIGHT + BAR_GAP)
        painter.setFont(font(SMALL_INK))
        painter.setPen(INK)
        name = metrics.elidedText(bar.label, Qt.TextElideMode.ElideMiddle, label_width - 8.0)
        painter.drawText(QRectF(rect.left(), y, label_width - 8.0, BAR_HEIGHT),
                         int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), name)
        length = span * bar.value / peak if peak > 0 and bar.value > 0 else 0.0
        painter.fillRect(QRectF(left, y, max(length, 0.5), BAR_HEIGHT), BEST if bar.best else BAR)
        painter.setFont(font(VALUE))
        width = value_metrics.horizontalAdvance(bar.text) + 8.0
        if width <= length:     # inside the bar, white on the colour
            painter.setPen(QColor("white"))
            box = QRectF(left + length - width, y, width - 4.0, BAR_HEIGHT)
            painter.drawText(box, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), bar.text)
        else:
            painter.setPen(INK)
            box = QRectF(left + length + 4.0, y, width, BAR_HEIGHT)
            painter.drawText(box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), bar.text)
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


def line_chart(painter: QPainter, rect: QRectF, curves: Sequence[Curve], unit: str, x_title: str) -> None:
    """Curves over time with a legend on top, ticked axes, the unit on the y axis."""
    metrics = QFontMetricsF(font(SMALL), painter.device())
    legend = legend_height(rect.width(), curves, metrics.horizontalAdvance)
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
    t_all = [t for c in curves for t in c.t]
    v_all = [v for c in curves for v in c.values if math.isfinite(v)]
    if not t_all or not v_all:
        return
    x_ticks = nice_ticks(min(t_all), max(t_all), 8)
    low = min(0.0, min(v_all))
    high = max(v_all)
    if unit == "%":
        high = max(high, 100.0) if high > 50 else high
    y_ticks = nice_ticks(low, high if high > low else low + 1.0, 5)
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
