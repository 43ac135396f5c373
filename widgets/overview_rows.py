"""The rows of the many-hosts overview: geometry, the column titles, and the painting of each row.

A row is drawn once into a picture (state mark, name, three sparklines with their newest value,
status line) and drawn again only when its data changed; when the order changes, rows move as
pictures. The widget that orders the rows and feeds them is widgets.host_overview.HostOverview.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QToolTip, QWidget

from widgets.host_ranking import Buffer, HostSource, state_rank


class RowsOwner(Protocol):
    """What the rows read of the overview that orders them."""

    order: list[str]
    sources: Mapping[str, HostSource]
    chosen: str | None

    def row_state(self, source: HostSource) -> tuple: ...


SPARK_SECONDS = 60.0     # the span of every sparkline
ROW_HEIGHT = 26
NAME_WIDTH = 150
SPARK_WIDTH = 130
VALUE_WIDTH = 58
MIN_STATUS_WIDTH = 120
HOT = 90.0               # %util or CPU at or above this shows the value in red

ALARM = "#d0453a"
WARN = "#b7791f"
QUIET = "#a3abb5"
LINE = "#2f6db5"        # a sparkline of a source without a colour of its own
GRID = "#e3e7ec"


_STATE_COLOURS = {0: ALARM, 1: WARN, 2: "#2e9d5b", 3: "#3b78c4", 4: QUIET, 5: QUIET}   # by state_rank


@dataclass(frozen=True)
class Column:
    key: str               # the buffer key (disk.* of the host's chosen disk)
    title: str
    fixed_top: float | None  # 100 for percentages; None: the row's own peak (at least min_top)
    min_top: float = 1.0
    unit: str = ""


COLUMNS = (
    Column("disk.util", "Disk %util", 100.0, unit="%"),
    Column("disk.iops", "IOPS", None, min_top=10.0),
    Column("cpu.busy", "CPU busy", 100.0, unit="%"),
)

def _format(value: float | None, unit: str) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    if abs(value) >= 10_000:
        return f"{value / 1000:.0f}k{unit}"
    if abs(value) >= 100 or unit == "%":
        return f"{value:.0f}{unit}"
    return f"{value:.1f}{unit}"


@dataclass
class _Geometry:
    name: QRect
    sparks: list[tuple[QRect, QRect]]    # (sparkline, value) per column
    status: QRect


def _geometry(width: int, top: int = 0, height: int = ROW_HEIGHT) -> _Geometry:
    x = 8
    name = QRect(x + 14, top, NAME_WIDTH - 14, height)
    x += NAME_WIDTH + 6
    sparks = []
    for _column in COLUMNS:
        spark = QRect(x, top + 4, SPARK_WIDTH, height - 8)
        value = QRect(x + SPARK_WIDTH + 4, top, VALUE_WIDTH - 4, height)
        sparks.append((spark, value))
        x += SPARK_WIDTH + VALUE_WIDTH + 6
    status = QRect(x, top, max(MIN_STATUS_WIDTH, width - x - 6), height)
    return _Geometry(name, sparks, status)


def content_width() -> int:
    """The width at which every column shows whole."""
    return 8 + NAME_WIDTH + 6 + len(COLUMNS) * (SPARK_WIDTH + VALUE_WIDTH + 6) + MIN_STATUS_WIDTH + 6


class ColumnTitles(QWidget):
    """Column titles, aligned with the rows' columns."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedHeight(20)

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        font = QFont(self.font())
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
        geometry = _geometry(self.width(), 0, self.height())
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(geometry.name, left, "Host")
        for column, (spark, _value) in zip(COLUMNS, geometry.sparks, strict=True):
            title = f"{column.title} · last {SPARK_SECONDS:.0f} s"
            painter.drawText(QRect(spark.left(), 0, spark.width() + VALUE_WIDTH, self.height()), left, title)
        painter.drawText(geometry.status, left, "Status")
        painter.end()


class OverviewRows(QWidget):
    """The rows themselves: fixed height, painted in one pass over what is visible."""

    row_clicked = Signal(str)

    def __init__(self, overview: RowsOwner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._overview = overview
        self.setObjectName("overviewRows")
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.painted_rows = 0        # rows drawn by the last paint (tests and the benchmark read it)
        self._pictures: dict[str, tuple[tuple, QPixmap]] = {}

    def sizeHint(self) -> QSize:
        return QSize(content_width(), max(1, len(self._overview.order)) * ROW_HEIGHT)

    def row_at(self, y: int) -> str | None:
        order = self._overview.order
        index = y // ROW_HEIGHT
        return order[index] if 0 <= index < len(order) and y >= 0 else None

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            name = self.row_at(int(event.position().y()))
            if name is not None:
                self.row_clicked.emit(name)
        super().mouseReleaseEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        name = self.row_at(int(event.position().y()))
        source = self._overview.sources.get(name) if name else None
        if source is not None:
            text = source.status_text() or source.state or "waiting for the first sample"
            QToolTip.showText(event.globalPosition().toPoint(), f"{name}: {text}\nClick for its graphs", self)
        super().mouseMoveEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        exposed = event.rect()
        wanted = event.region()   # the changed rows only, not everything between them
        palette = self.palette()
        painter.fillRect(exposed, palette.color(QPalette.ColorRole.Base))
        alternate = palette.color(QPalette.ColorRole.AlternateBase)
        order = self._overview.order
        first = max(0, exposed.top() // ROW_HEIGHT)
        last = min(len(order) - 1, exposed.bottom() // ROW_HEIGHT)
        chosen = self._overview.chosen
        drawn = 0
        for index in range(first, last + 1):
            top = index * ROW_HEIGHT
            row = QRect(0, top, self.width(), ROW_HEIGHT)
            if not wanted.intersects(row):
                continue
            name = order[index]
            if name == chosen:
                painter.fillRect(row, palette.color(QPalette.ColorRole.Highlight).lighter(170))
            elif index % 2:
                painter.fillRect(row, alternate)
            painter.drawPixmap(0, top, self._row_picture(name))
            drawn += 1
        painter.end()
        self.painted_rows = drawn

    def _row_picture(self, name: str) -> QPixmap:
        """The row's content on a transparent pixmap, drawn again only when its data changed: when the
        order changes, rows move as pictures."""
        source = self._overview.sources[name]
        key = (self._overview.row_state(source), self.width(), self.devicePixelRatioF())
        cached = self._pictures.get(name)
        if cached is not None and cached[0] == key:
            return cached[1]
        ratio = self.devicePixelRatioF()
        picture = QPixmap(int(self.width() * ratio), int(ROW_HEIGHT * ratio))
        picture.setDevicePixelRatio(ratio)
        picture.fill(Qt.GlobalColor.transparent)
        painter = QPainter(picture)
        self._draw_row(painter, name, source)
        painter.end()
        self._pictures[name] = (key, picture)
        return picture

    def forget_pictures(self, keep: Iterable[str] = ()) -> None:
        kept = set(keep)
        self._pictures = {name: value for name, value in self._pictures.items() if name in kept}

    def _draw_row(self, painter: QPainter, name: str, source: HostSource) -> None:
        palette = self.palette()
        text_colour = palette.color(QPalette.ColorRole.Text)
        bold = QFont(self.font())
        bold.setBold(True)
        geometry = _geometry(self.width(), 0)
        rank = state_rank(source.state)
        # the host's colour, as in Grid and Overlay (its state: the status text's colour and the order)
        colour = QColor(getattr(source, "colour", None) or LINE)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)    # a round mark, not a polygon
        painter.drawEllipse(QRectF(8, ROW_HEIGHT / 2 - 5, 10, 10))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)   # lines: 1 px, several times cheaper
        painter.setFont(bold)
        painter.setPen(text_colour)
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(geometry.name, left, QFontMetrics(bold).elidedText(name, Qt.TextElideMode.ElideRight,
                                                                            geometry.name.width()))
        painter.setFont(self.font())
        for column, (spark, value_rect) in zip(COLUMNS, geometry.sparks, strict=True):
            value = self._sparkline(painter, source.buffer(column.key), column, spark, colour)
            hot = value is not None and column.fixed_top == 100.0 and value >= HOT
            painter.setPen(QColor(ALARM) if hot else text_colour)
            painter.drawText(value_rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             _format(value, column.unit))
        status = source.status_text() or ("waiting for the first sample…" if not source.samples else "")
        muted = palette.color(QPalette.ColorRole.PlaceholderText)
        painter.setPen(QColor(_STATE_COLOURS[rank]) if rank in (0, 1) else muted)
        painter.drawText(geometry.status, left, QFontMetrics(self.font()).elidedText(
            status, Qt.TextElideMode.ElideRight, geometry.status.width()))

    @staticmethod
    def _sparkline(painter: QPainter, buffer: Buffer, column: Column, rect: QRect,
                   colour: QColor | None = None) -> float | None:
        """Draw the newest SPARK_SECONDS of `buffer` into rect; the newest value."""
        painter.setPen(QPen(QColor(GRID), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())
        last = buffer.last_t
        if last is None:
            return None
        t, v = buffer.window(last - SPARK_SECONDS)
        if len(t) == 0:
            return None
        top = column.fixed_top or max(column.min_top, float(np.fmax.reduce(v)))
        x = rect.left() + (t - (last - SPARK_SECONDS)) * (rect.width() / SPARK_SECONDS)
        y = rect.bottom() - np.minimum(np.fmax(v, 0.0), top) * (rect.height() / top)   # fmax: NaN -> 0
        line_colour = colour if colour is not None else QColor(LINE)
        fill = QColor(line_colour)
        fill.setAlpha(0x33)
        if len(t) == 1:
            painter.setPen(QPen(line_colour, 2))
            painter.drawPoint(QPoint(int(x[0]), int(y[0])))
        else:
            line = pg.arrayToQPath(x, y)
            area = QPainterPath(line)   # a light fill down to the baseline: the level reads at a glance
            area.lineTo(float(x[-1]), rect.bottom())
            area.lineTo(float(x[0]), rect.bottom())
            area.closeSubpath()
            painter.fillPath(area, fill)
            painter.setPen(QPen(line_colour, 1))
            painter.drawPath(line)
        return float(v[-1])
