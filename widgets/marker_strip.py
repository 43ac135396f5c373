"""Phase and event markers in a thin strip along a chart's time axis: never over the curves.

Each marker is a tick with a short label; the full text (and the time, and the hosts in an overlay)
is its tooltip. Markers whose ticks are too close for a label of their own collapse into one tag
that names how many they are. What a tag says depends on the zoom only, never on where the window
is: a label does not change while the live window slides.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsObject

START, END, POINT = "start", "end", "point"
MIN_LABEL_PX = 44        # a tick closer than this to the previous one joins its tag
GAP_PX = 6               # room between a label and the next tick
TICK_PX = 2
FONT_PT = 8


@dataclass(frozen=True)
class StripMarker:
    """One moment to show: where (x, seconds since the start), what, and of which hosts."""

    x: float
    label: str
    kind: str = START                  # start or end of a phase, or a named point in time
    colour: str | None = None          # None: the chart's ink colour
    hosts: tuple[str, ...] = ()


_ABBREVIATIONS = ((re.compile(r",? (\d+) workers?\b"), r" ×\1"), (re.compile(r"\bRandom read\b"), "Rand read"),
                  (re.compile(r"\bSync write\b"), "Sync wr"), (re.compile(r" ([KMG])iB\b"), r" \1"),
                  (re.compile(r"\bWriting the test file\b"), "Write file"), (re.compile(r" · .*"), ""))
_NUMBERS = re.compile(r"\d+(–\d+)?")


def label_forms(label: str) -> list[str]:
    """The label and shorter forms of it, longest first: "Random read 4 KiB, 16 workers",
    "Rand read 4 K ×16", "×16". A narrow strip shows the longest that fits: the part that tells
    one phase from its neighbours (the worker count of a sweep) survives longest."""
    forms = [label]
    short = label
    for pattern, replacement in _ABBREVIATIONS:
        short = pattern.sub(replacement, short)
    if short != label:
        forms.append(short)
    count = re.search(r"×\d+", short)
    if count:
        forms.append(count.group(0))
    return forms


class MarkerTag(QGraphicsObject):
    """One tick (or a few collapsed into one) and its label; hover shows every marker's full text."""

    def __init__(self, strip: MarkerStrip) -> None:
        super().__init__(strip)
        self._strip = strip
        self.markers: list[StripMarker] = []
        self.text = ""
        self._width = 0.0
        self._right_aligned = False
        self.setAcceptHoverEvents(True)

    def set_content(self, markers: list[StripMarker], text: str, width: float, right_aligned: bool) -> None:
        if (markers, text, width, right_aligned) == (self.markers, self.text, self._width, self._right_aligned):
            return   # the window moved, the tag did not change: no repaint
        self.prepareGeometryChange()
        self.markers, self.text, self._width, self._right_aligned = markers, text, width, right_aligned
        self.setToolTip(self._strip.tooltip(markers, self.numbered()))
        self.update()

    def numbered(self) -> bool:
        """The tag shows the phases' numbers, not a name."""
        return _NUMBERS.fullmatch(self.text) is not None

    def boundingRect(self) -> QRectF:
        height = self._strip.strip_height()
        left = -self._width - TICK_PX - 2 if self._right_aligned else -TICK_PX
        return QRectF(left, 0.0, self._width + 2 * TICK_PX + 2, height)

    def label_rect(self) -> QRectF:
        """Where the label is drawn, in the tag's coordinates (empty without a label)."""
        if not self.text:
            return QRectF()
        height = self._strip.strip_height()
        return (QRectF(-self._width - TICK_PX - 1, 0.0, self._width, height) if self._right_aligned
                else QRectF(TICK_PX + 1, 0.0, self._width, height))

    def paint(self, painter: QPainter, _option: Any, _widget: Any = None) -> None:
        height = self._strip.strip_height()
        first = self.markers[0] if self.markers else None
        colour = QColor(first.colour) if first is not None and first.colour else QColor(self._strip.ink)
        pen = QPen(colour, TICK_PX)
        pen.setCosmetic(True)
        if first is not None and first.kind == END and len(self.markers) == 1:
            pen.setStyle(Qt.PenStyle.DotLine)     # a phase's end: lighter than its start
        painter.setPen(pen)
        painter.drawLine(QPointF(0.0, 0.0), QPointF(0.0, height))
        if not self.text:
            return
        painter.setFont(self._strip.label_font)
        painter.setPen(QColor(self._strip.ink))
        box = self.label_rect()
        if self._right_aligned:   # it may lie over the previous label: on the strip's background, readable
            painter.fillRect(box.adjusted(-2, 1, 0, 0), QColor(self._strip.background))
            painter.setPen(QColor(self._strip.ink))
        align = Qt.AlignmentFlag.AlignVCenter | (Qt.AlignmentFlag.AlignRight if self._right_aligned
                                                 else Qt.AlignmentFlag.AlignLeft)
        painter.drawText(box, int(align), self.text)


class MarkerStrip(pg.GraphicsWidget):
    """The strip under a chart's data area (same width as its ViewBox), laid out for the shown x range."""

    def __init__(self, format_x: Callable[[float], str], parent: QGraphicsItem | None = None) -> None:
        super().__init__(parent)
        self.format_x = format_x
        self.ink = "#1f2933"
        self.line = "#d0d4d9"
        self.background = "#ffffff"
        self.label_font = QFont()
        self.label_font.setPointSizeF(FONT_PT)
        self._metrics = QFontMetricsF(self.label_font)
        self._markers: list[StripMarker] = []
        self._tags: list[MarkerTag] = []
        self._range = (0.0, 1.0)
        self._span: float | None = None
        self._laid_out: tuple | None = None
        height = self.strip_height()
        self.setMinimumHeight(height)
        self.setMaximumHeight(height)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemClipsChildrenToShape, True)

    def strip_height(self) -> float:
        return float(int(self._metrics.height()) + 4)

    def set_colours(self, ink: str, line: str, background: str | None = None) -> None:
        self.ink, self.line = ink, line
        if background is not None:
            self.background = background
        self.update()
        for tag in self._tags:
            tag.update()

    def set_markers(self, markers: Sequence[StripMarker]) -> None:
        self._markers = sorted(markers, key=lambda m: m.x)
        self._laid_out = None
        self.relayout()

    def markers(self) -> list[StripMarker]:
        return list(self._markers)

    def set_range(self, x0: float, x1: float, span: float | None = None) -> None:
        """The x range shown; span: the window's full width while it is still filling (a live view's first
        minutes), so the labels are chosen at the zoom they keep once it slides."""
        self._range = (x0, x1)
        self._span = span
        self.relayout()

    def refresh_tooltips(self) -> None:
        """The time format changed (clock or elapsed)."""
        for tag in self._tags:
            tag.setToolTip(self.tooltip(tag.markers, tag.numbered()))

    def tags(self) -> list[MarkerTag]:
        """The tags on screen (tests check where they are)."""
        return [tag for tag in self._tags if tag.isVisible()]

    def tooltip(self, markers: list[StripMarker], numbered: bool = False) -> str:
        """Each marker's time and full text; numbered when its tag shows the numbers."""
        lines = []
        for marker in markers:
            hosts = f" — {', '.join(marker.hosts)}" if marker.hosts else ""
            number = self.number(marker) if numbered else 0
            lines.append(f"{self.format_x(marker.x)}  {f'{number}. ' if number else ''}{marker.label}{hosts}")
        return "\n".join(lines)

    def number(self, marker: StripMarker) -> int:
        """The marker's number in the run, as a tag too narrow for a name shows it (0 for a lone marker)."""
        if len(self._markers) < 2:
            return 0
        return next((i + 1 for i, m in enumerate(self._markers) if m is marker), 0)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self.relayout()

    def paint(self, painter: QPainter, _option: Any, _widget: Any = None) -> None:
        # a hairline at the top: the strip reads as part of the time axis, apart from the data
        pen = QPen(QColor(self.line), 1)
        pen.setCosmetic(True)
        painter.setPen(pen)
        rect = self.rect()
        painter.drawLine(rect.topLeft(), rect.topRight())

    def relayout(self) -> None:
        x0, x1 = self._range
        width = self.rect().width()
        key = (x0, x1, self._span, width, len(self._markers), id(self._markers))
        if key == self._laid_out:
            return
        self._laid_out = key
        if x1 <= x0 or width <= 0:
            self._place([], 0.0, 0.0)
            return
        scale = width / max(x1 - x0, self._span or 0.0)
        # markers join a tag by their distance from each other, over ALL markers, not only the visible
        # ones: a tag's text then depends on the zoom alone and stays the same while the window slides
        groups: list[tuple[float, list[StripMarker]]] = []
        for marker in self._markers:
            px = marker.x * scale
            if groups and px - groups[-1][0] < MIN_LABEL_PX:
                groups[-1][1].append(marker)
            else:
                groups.append((px, [marker]))
        self._place(groups, x0, x1)

    def _texts(self, groups: list[tuple[float, list[StripMarker]]], width: float) -> list[str]:
        """Each tag's text: the longest form of its first marker's label that fits before the next tag,
        else none (the tooltip has it) — never a cut name. The gaps depend on the zoom alone."""
        texts: list[str] = []
        first = 1
        for index, (px, members) in enumerate(groups):
            suffix = f" +{len(members) - 1}" if len(members) > 1 else ""
            forms = [form + suffix for form in label_forms(members[0].label)]
            # the last resort: the phases' numbers in the run ("3", "4–6"), which the tooltip spells out
            last = first + len(members) - 1
            forms.append(f"{first}–{last}" if last > first else str(first))
            first = last + 1
            if index + 1 < len(groups):
                room = groups[index + 1][0] - px - TICK_PX - GAP_PX
            else:
                # the newest: its room to the right grows as the window slides; half the strip (or the
                # room after the previous label) does not, and near the edge it is drawn leftwards
                before = (groups[index - 1][0] + TICK_PX + 1 + self._metrics.horizontalAdvance(texts[-1])
                          if index > 0 else 0.0)
                room = max(px - before - GAP_PX, width / 2)
            texts.append(next((f for f in forms if self._metrics.horizontalAdvance(f) <= room), ""))
        return texts

    def _place(self, groups: list[tuple[float, list[StripMarker]]], x0: float, x1: float) -> None:
        width = self.rect().width()
        texts = self._texts(groups, width)
        shown = [(index, px, members) for index, (px, members) in enumerate(groups)
                 if any(x0 <= m.x <= x1 for m in members)]
        while len(self._tags) < len(shown):
            self._tags.append(MarkerTag(self))
        for index, tag in enumerate(self._tags):
            if index >= len(shown):
                tag.setVisible(False)
                continue
            at, _px, members = shown[index]
            px = (members[0].x - x0) * width / (x1 - x0)
            text = texts[at]
            label_width = self._metrics.horizontalAdvance(text) if text else 0.0
            tick_px = max(px, 0.0)   # a tag whose first marker scrolled off keeps its place at the edge
            right_aligned = tick_px + TICK_PX + 1 + label_width > width and tick_px >= label_width
            tag.set_content(members, text, label_width, right_aligned)
            tag.setZValue(1.0 if right_aligned else 0.0)   # over an older label it may cover at the edge
            tag.setPos(tick_px, 0.0)
            tag.setVisible(True)


def install_marker_strip(plot_item: pg.PlotItem, format_x: Callable[[float], str]) -> MarkerStrip:
    """A strip between a PlotItem's data (row 2 of its layout) and its time axis, which moves a row down."""
    layout = plot_item.layout
    bottom = plot_item.getAxis("bottom")
    layout.removeItem(bottom)
    strip = MarkerStrip(format_x, plot_item)
    layout.addItem(strip, 3, 1)
    layout.addItem(bottom, 4, 1)
    plot_item.axes["bottom"]["pos"] = (4, 1)
    for row in (3, 4):
        layout.setRowSpacing(row, 0)
        layout.setRowStretchFactor(row, 0)
    return strip
