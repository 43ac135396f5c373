"""The sweep curve of shared-storage totals in the PDF: total op/s by step (clients × threads), the knee marked.

Steps are evenly spaced in the order of the curve (by streams, then clients); each storage system is a line
in its colour. The knee is a ring around its point and "knee" under the axis in the curve's colour: nothing is
drawn over a curve.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPainterPath, QPen

from app.report.content import ReportData
from app.report.pdf_charts import Curve, draw_legend, legend_height, nice_ticks, tick_text, titled
from app.report.pdf_pages import GRID, MUTED, SMALL, SMALL_INK, Flow, Line, Style, font
from app.report.sweep import Sweep, step_axis

SWEEP_CHART_HEIGHT = 190.0
TITLE = Style(9.0, bold=True)
KNEE = Style(7.0, bold=True)
KNEE_RING = 4.5
KNEE_ROW = 9.0


def sweep_block(flow: Flow, data: ReportData) -> None:
    """The chart of every shared-storage total of the comparison, full width, kept on one page."""
    found = list(data.sweeps)
    if not found:
        return
    colours = {sweep.label: QColor(data.colour(sweep.label)) for sweep in found}
    title: list[Line] = [[("Sweep: total op/s by step", TITLE)],
                         [("clients × threads each; the knee is where adding clients or threads stopped raising "
                           "the total", SMALL)]]

    def paint(painter: QPainter, rect: QRectF) -> None:
        sweep_chart(painter, titled(painter, rect, title), found, colours)
    flow.gap(4.0)
    flow.place(SWEEP_CHART_HEIGHT, paint)


def sweep_chart(painter: QPainter, rect: QRectF, found: Sequence[Sweep], colours: dict[str, QColor],
                x_title: str = "step: clients × threads", y_title: str = "op/s (all clients)",
                tick: Callable[[int, int], str] = lambda clients, threads: f"{clients}×{threads}") -> None:
    metrics = QFontMetricsF(font(SMALL_INK), painter.device())
    keys = [Curve(s.label, (), (), colours[s.label]) for s in found]
    legend = legend_height(rect.width(), keys, metrics.horizontalAdvance) if len(found) > 1 else 0.0
    if legend:
        draw_legend(painter, rect, keys)
    axis = step_axis(found)
    values = [p.ops for s in found for p in s.points if math.isfinite(p.ops)]
    if not axis or not values:
        return
    index_of = {shape: i for i, shape in enumerate(axis)}
    knees: dict[int, list[Sweep]] = {}
    for sweep in found:
        for point in sweep.points:
            if point.step == sweep.knee:
                knees.setdefault(index_of[(point.clients, point.threads)], []).append(sweep)
    stacked = max((len(v) for v in knees.values()), default=0)
    y_ticks = nice_ticks(0.0, max(values) if max(values) > 0 else 1.0, 5)
    y_labels = [tick_text(v) for v in y_ticks]
    left = rect.left() + max(metrics.horizontalAdvance(s) for s in y_labels) + 8.0
    below = 30.0 + stacked * KNEE_ROW     # tick labels, the knee words, the axis title
    plot = QRectF(left, rect.top() + legend + 14.0, rect.right() - left - 6.0, rect.height() - legend - 14.0 - below)
    step_width = plot.width() / len(axis)

    def px(index: int) -> float:
        return plot.left() + (index + 0.5) * step_width

    def py(value: float) -> float:
        return plot.bottom() - value / y_ticks[-1] * plot.height()

    painter.setFont(font(SMALL))
    for value, label in zip(y_ticks, y_labels, strict=True):
        painter.setPen(QPen(GRID, 0.5))
        painter.drawLine(QPointF(plot.left(), py(value)), QPointF(plot.right(), py(value)))
        painter.setPen(MUTED)
        painter.drawText(QRectF(rect.left(), py(value) - 7.0, left - rect.left() - 4.0, 14.0),
                         int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), label)
    painter.setPen(QPen(MUTED, 0.8))
    painter.drawLine(plot.bottomLeft(), plot.bottomRight())
    painter.drawLine(plot.bottomLeft(), plot.topLeft())
    painter.drawText(QRectF(rect.left(), plot.top() - 14.0, plot.width(), 12.0),
                     int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop), y_title)
    for i, (clients, threads) in enumerate(axis):
        painter.setPen(QPen(MUTED, 0.8))
        painter.drawLine(QPointF(px(i), plot.bottom()), QPointF(px(i), plot.bottom() + 3.0))
        painter.setFont(font(SMALL))
        painter.drawText(QRectF(px(i) - step_width / 2, plot.bottom() + 4.0, step_width, 12.0),
                         int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), tick(clients, threads))
        for row, sweep in enumerate(knees.get(i, ())):   # under the axis, in the curve's colour: never over it
            painter.setFont(font(KNEE))
            painter.setPen(colours[sweep.label])
            painter.drawText(QRectF(px(i) - step_width / 2, plot.bottom() + 15.0 + row * KNEE_ROW, step_width,
                                    KNEE_ROW), int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), "knee")
    painter.setPen(MUTED)
    painter.setFont(font(SMALL))
    painter.drawText(QRectF(plot.left(), rect.bottom() - 12.0, plot.width(), 12.0),
                     int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop), x_title)
    for sweep in found:
        colour = colours[sweep.label]
        path = QPainterPath()
        for n, point in enumerate(sweep.points):
            at = QPointF(px(index_of[(point.clients, point.threads)]), py(point.ops))
            path.lineTo(at) if n else path.moveTo(at)
        painter.setPen(QPen(colour, 1.4))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
        painter.setBrush(colour)
        for point in sweep.points:
            at = QPointF(px(index_of[(point.clients, point.threads)]), py(point.ops))
            painter.drawEllipse(at, 1.8, 1.8)
            if point.step == sweep.knee:
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(QPen(colour, 1.1))
                painter.drawEllipse(at, KNEE_RING, KNEE_RING)
                painter.setBrush(colour)
                painter.setPen(QPen(colour, 1.4))
