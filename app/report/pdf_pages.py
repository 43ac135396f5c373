"""Page flow for the PDF: text and blocks placed top to bottom, broken across pages, never clipped.

Content is laid out first as drawing operations per page, then painted; so the footer can say
"Page n of N". Coordinates are PDF points (the writer runs at 72 dpi), text is real text.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPagedPaintDevice, QPainter, QTextLayout, QTextOption

INK = QColor("#1d2733")
MUTED = QColor("#5b6675")
ACCENT = QColor("#2f6db5")
BEST = QColor("#1f7a45")
BEST_SHADE = QColor("#dcf1e2")
CAVEAT = QColor("#a8540a")
GRID = QColor("#d3d9e0")
HEADER_SHADE = QColor("#eef1f5")
FAMILIES = ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"]

Draw = Callable[[QPainter], None]


@dataclass(frozen=True)
class Style:
    size: float = 9.5
    bold: bool = False
    color: QColor = field(default_factory=lambda: QColor(INK))
    italic: bool = False


BODY = Style()
SMALL = Style(8.0, color=QColor(MUTED))
SMALL_INK = Style(8.0)
CELL = Style(8.5)
CELL_BOLD = Style(8.5, bold=True)
TAG = Style(7.5, color=QColor(CAVEAT))
H1 = Style(17.0, bold=True)
H2 = Style(12.5, bold=True)
H3 = Style(10.0, bold=True)

_fonts: dict[tuple[float, bool, bool], QFont] = {}


def font(style: Style) -> QFont:
    key = (style.size, style.bold, style.italic)
    if key not in _fonts:
        made = QFont()
        made.setFamilies(FAMILIES)
        made.setStyleHint(QFont.StyleHint.SansSerif)
        made.setPointSizeF(style.size)
        made.setBold(style.bold)
        made.setItalic(style.italic)
        made.setKerning(True)
        # no "fi"/"fl" ligatures: text copied from the PDF (and searched in it) reads "file", not "ﬁle"
        for tag in ("liga", "clig"):
            made.setFeature(QFont.Tag(tag), 0)
        _fonts[key] = made
    return _fonts[key]


Segment = tuple[str, Style]
Line = list[Segment]


class Flow:
    """Places blocks top to bottom in the content area of the pages; starts a page when one is full."""

    def __init__(self, device: QPagedPaintDevice, content: QRectF):
        self.device = device
        self.content = content
        self.pages: list[list[Draw]] = [[]]
        self.y = content.top()
        self.spacing = 1.0   # the gaps between blocks, scaled down to keep a last line off a page of its own

    # -- measuring ---------------------------------------------------------------------------------

    def metrics(self, style: Style) -> QFontMetricsF:
        return QFontMetricsF(font(style), self.device)

    def width_of(self, text: str | Line, style: Style | None = None) -> float:
        """The width of a text in a style, or of a rich line."""
        if isinstance(text, str):
            return self.metrics(style or BODY).horizontalAdvance(text)
        return sum(self.metrics(st).horizontalAdvance(t) for t, st in text)

    def line_height(self, style: Style) -> float:
        return self.metrics(style).lineSpacing()

    def wrap(self, text: str, style: Style, width: float) -> list[str]:
        """The lines text breaks into at this width: at spaces, or anywhere in a word longer than the width."""
        out: list[str] = []
        for paragraph in text.split("\n"):
            if not paragraph:
                out.append("")
                continue
            layout = QTextLayout(paragraph, font(style), self.device)
            option = QTextOption()
            option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
            layout.setTextOption(option)
            layout.beginLayout()
            while True:
                line = layout.createLine()
                if not line.isValid():
                    break
                line.setLineWidth(max(width, 1.0))
                out.append(paragraph[line.textStart():line.textStart() + line.textLength()].rstrip())
            layout.endLayout()
        return out

    def longest_word(self, line: Line) -> float:
        """The widest word of a rich line; a word may run across segments ("■" and "db-01" with no space)."""
        return max((self.width_of(_trimmed(word)) for word in _words(line)), default=0.0)

    def lay_lines(self, lines: Sequence[Line], width: float) -> list[Line]:
        """Rich lines at a width: words flow from segment to segment and keep their style; a word wider
        than the width breaks inside."""
        out: list[Line] = []
        for line in lines:
            if self.width_of(line) <= width:
                out.append(list(line))
                continue
            current: Line = []
            for word in _words(line):
                if current and self.width_of(current + _trimmed(word)) > width:
                    out.append(_trimmed(current))
                    current = []
                if not current and self.width_of(_trimmed(word)) > width:   # wider than a line: break inside
                    text = "".join(t for t, _s in word).strip()
                    style = word[0][1]
                    parts = self.wrap(text, style, width)
                    out += [[(part, style)] for part in parts[:-1]]
                    word = [(parts[-1] + " ", style)]
                current += word
            if current:
                out.append(_trimmed(current))
        return out

    def lines_height(self, lines: Sequence[Line]) -> float:
        return sum(max(self.line_height(style) for _t, style in line) if line else self.line_height(BODY)
                   for line in lines)

    # -- placing -----------------------------------------------------------------------------------

    @property
    def room(self) -> float:
        return self.content.bottom() - self.y

    def new_page(self) -> None:
        if self.pages[-1] or self.y > self.content.top():
            self.pages.append([])
        self.y = self.content.top()

    def ensure(self, height: float) -> bool:
        """Start a new page when the block does not fit here; True when it did."""
        if height > self.room and self.y > self.content.top():
            self.new_page()
            return True
        return False

    def gap(self, height: float) -> None:
        self.y = min(self.y + height * self.spacing, self.content.bottom())

    def last_page_filled(self) -> float:
        """How much of the last page's height is used (0..1); 1 when the last page is a full one."""
        if not self.pages[-1]:
            return 1.0
        return (self.y - self.content.top()) / self.content.height()

    def together(self, block: Callable[[], None]) -> None:
        """Lay out block (a heading and its table, say); when it breaks onto another page but would
        fit on one page, lay it out again from the top of a new page instead of leaving a stub."""
        pages, ops, y = len(self.pages), len(self.pages[-1]), self.y
        block()
        if len(self.pages) == pages or y == self.content.top():
            return
        height = (self.content.bottom() - y) + (self.y - self.content.top()) \
            + (len(self.pages) - pages - 1) * self.content.height()
        if height > self.content.height():
            return      # longer than a page: breaking it is the only way
        del self.pages[pages:]
        del self.pages[-1][ops:]
        self.y = y
        self.new_page()
        block()

    def draw(self, op: Draw) -> None:
        self.pages[-1].append(op)

    def place(self, height: float, paint: Callable[[QPainter, QRectF], None]) -> QRectF:
        """A block of a known height, on this page if it fits."""
        self.ensure(height)
        rect = QRectF(self.content.left(), self.y, self.content.width(), height)
        self.draw(lambda painter: paint(painter, rect))
        self.y += height
        return rect

    def place_row(self, height: float, paints: Sequence[Callable[[QPainter, QRectF], None]], columns: int = 2,
                  spacing: float = 18.0) -> None:
        """Blocks of one height side by side, `columns` to a row (a last row of one keeps its column width)."""
        width = (self.content.width() - spacing * (columns - 1)) / columns
        for start in range(0, len(paints), columns):
            self.ensure(height)
            for index, paint in enumerate(paints[start:start + columns]):
                rect = QRectF(self.content.left() + index * (width + spacing), self.y, width, height)
                self.draw(lambda painter, r=rect, p=paint: p(painter, r))
            self.y += height

    def rich(self, lines: Sequence[Line], indent: float = 0.0, after: float = 0.0, keep: float = 0.0) -> None:
        """Rich lines, wrapped to the width and broken across pages line by line.

        keep: room wanted below the first line (a heading stays with what follows it)."""
        laid = self.lay_lines(lines, self.content.width() - indent)
        for index, line in enumerate(laid):
            height = self.lines_height([line])
            self.ensure(height + (keep if index == 0 else 0.0))
            x, y = self.content.left() + indent, self.y
            self.draw(line_painter(self, line, x, y, height))
            self.y += height
        self.gap(after)

    def text(self, text: str, style: Style = BODY, indent: float = 0.0, after: float = 4.0, keep: float = 0.0
             ) -> None:
        self.rich([[(text, style)]], indent, after, keep)

    def heading(self, text: str, style: Style = H2, before: float = 10.0, after: float = 5.0) -> None:
        if self.y > self.content.top():
            self.gap(before)
        self.text(text, style, after=after, keep=60.0)

    def bullets(self, items: Sequence[str], style: Style = BODY, after: float = 6.0) -> None:
        for item in items:
            laid = self.wrap(item, style, self.content.width() - 12.0)
            for index, part in enumerate(laid):
                height = self.line_height(style)
                self.ensure(height)
                x, y = self.content.left(), self.y
                prefix = "•" if index == 0 else ""
                self.draw(line_painter(self, [(prefix, style)], x + 2.0, y, height))
                self.draw(line_painter(self, [(part, style)], x + 12.0, y, height))
                self.y += height
            self.gap(1.5)
        self.gap(after)


def _trimmed(line: Line) -> Line:
    """The line without the spaces after its last word."""
    if line:
        text, style = line[-1]
        line = line[:-1] + [(text.rstrip(), style)]
    return line


def _words(line: Line) -> list[Line]:
    """The words of a rich line, each with the spaces after it; a segment that does not end in a space
    runs on into the next one (a coloured "■" stays with the name after it)."""
    words: list[Line] = []
    glued = False
    for text, style in line:
        for piece in re.findall(r"[^ ]+ *| +", text):
            if glued and words:
                words[-1].append((piece, style))
            else:
                words.append([(piece, style)])
            glued = not piece.endswith(" ")
    return words


def line_painter(flow: Flow, line: Line, x: float, y: float, height: float) -> Draw:
    """Segments side by side on one baseline."""
    ascent = max(flow.metrics(style).ascent() for _t, style in line) if line else 0.0
    parts = []
    for text, style in line:
        parts.append((x, text, style))
        x += flow.width_of(text, style)

    def paint(painter: QPainter) -> None:
        for left, text, style in parts:
            painter.setFont(font(style))
            painter.setPen(style.color)
            painter.drawText(QPointF(left, y + ascent + (height - flow.lines_height([line])) / 2), text)
    return paint


def footer(painter: QPainter, page: QRectF, content: QRectF, left_text: str, number: int, total: int) -> None:
    """The title and date on the left, "Page n of N" on the right, under a thin rule."""
    y = content.bottom() + 14.0
    painter.setPen(GRID)
    painter.drawLine(QPointF(content.left(), y), QPointF(content.right(), y))
    painter.setFont(font(SMALL))
    painter.setPen(MUTED)
    box = QRectF(content.left(), y + 3.0, content.width(), 14.0)
    right = f"Page {number} of {total}"
    painter.drawText(box, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop), right)
    room = content.width() - QFontMetricsF(font(SMALL), painter.device()).horizontalAdvance(right) - 20.0
    shown = QFontMetricsF(font(SMALL), painter.device()).elidedText(left_text, Qt.TextElideMode.ElideMiddle, room)
    painter.drawText(box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop), shown)
