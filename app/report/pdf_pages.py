"""Page flow for the PDF: text and tables placed top to bottom, broken across pages, never clipped.

Content is laid out first as drawing operations per page, then painted; so the footer can say
"Page n of N". Coordinates are PDF points (the writer runs at 72 dpi), text is real text.
"""
from __future__ import annotations

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

    # -- measuring ---------------------------------------------------------------------------------

    def metrics(self, style: Style) -> QFontMetricsF:
        return QFontMetricsF(font(style), self.device)

    def width_of(self, text: str, style: Style) -> float:
        return self.metrics(style).horizontalAdvance(text)

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

    def longest_word(self, text: str, style: Style) -> float:
        return max((self.width_of(word, style) for word in text.split()), default=0.0)

    def lay_lines(self, lines: Sequence[Line], width: float) -> list[Line]:
        """Rich lines at a width: a line that fits stays one line, else each segment wraps on its own."""
        out: list[Line] = []
        for line in lines:
            if sum(self.width_of(text, style) for text, style in line) <= width:
                out.append(list(line))
                continue
            for text, style in line:
                out += [[(part, style)] for part in self.wrap(text.strip(), style, width)]
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
        self.y = min(self.y + height, self.content.bottom())

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

    def rich(self, lines: Sequence[Line], indent: float = 0.0, after: float = 0.0, keep: float = 0.0) -> None:
        """Rich lines, wrapped to the width and broken across pages line by line.

        keep: room wanted below the first line (a heading stays with what follows it)."""
        laid = self.lay_lines(lines, self.content.width() - indent)
        for index, line in enumerate(laid):
            height = self.lines_height([line])
            self.ensure(height + (keep if index == 0 else 0.0))
            x, y = self.content.left() + indent, self.y
            self.draw(_line_painter(self, line, x, y, height))
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
                self.draw(_line_painter(self, [(prefix, style)], x + 2.0, y, height))
                self.draw(_line_painter(self, [(part, style)], x + 12.0, y, height))
                self.y += height
            self.gap(1.5)
        self.gap(after)


def _line_painter(flow: Flow, line: Line, x: float, y: float, height: float) -> Draw:
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


# -- tables ----------------------------------------------------------------------------------------

@dataclass
class TableCell:
    lines: list[Line]
    shade: QColor | None = None
    right: bool = False          # numbers align right


def cell(text: str, style: Style = CELL, shade: QColor | None = None, right: bool = False) -> TableCell:
    return TableCell([[(text, style)]], shade, right)


PAD = 4.0
COLUMN_CAP = 190.0   # a column wider than this wraps


def _widths(flow: Flow, headers: Sequence[str], rows: Sequence[Sequence[TableCell]], columns: Sequence[int]
            ) -> tuple[list[float], list[float]]:
    """(natural, smallest) width per column: one line each, or the longest word."""
    natural, smallest = [], []
    for col in columns:
        lines = [[(headers[col], H_CELL)]] + [line for row in rows for line in row[col].lines]
        full = max(sum(flow.width_of(t, s) for t, s in line) for line in lines) + 2 * PAD
        word = max(flow.longest_word(t, s) for line in lines for t, s in line) + 2 * PAD
        natural.append(max(min(full, COLUMN_CAP), word))
        smallest.append(word)
    return natural, smallest


H_CELL = Style(8.0, bold=True)


def table(flow: Flow, headers: Sequence[str], rows: Sequence[Sequence[TableCell]], fixed: int = 1,
          stretch: bool = True) -> None:
    """A table across the content width; columns that do not fit go to a further table that repeats
    the first `fixed` columns (the server names)."""
    avail = flow.content.width()
    others = list(range(fixed, len(headers)))
    chunks: list[list[int]] = []
    current: list[int] = []
    for col in others:
        trial = list(range(fixed)) + current + [col]
        _natural, smallest = _widths(flow, headers, rows, trial)
        if current and sum(smallest) > avail:
            chunks.append(current)
            current = [col]
        else:
            current.append(col)
    chunks.append(current)
    for number, chunk in enumerate(chunks):
        if number:
            flow.gap(8.0)
        _one_table(flow, headers, rows, list(range(fixed)) + chunk, stretch)


def _one_table(flow: Flow, headers: Sequence[str], rows: Sequence[Sequence[TableCell]], columns: list[int],
               stretch: bool) -> None:
    avail = flow.content.width()
    natural, smallest = _widths(flow, headers, rows, columns)
    if sum(natural) <= avail:
        widths = natural
        if stretch and sum(natural) > 0:
            widths = [w * avail / sum(natural) for w in natural]
    elif sum(smallest) < sum(natural) and sum(smallest) <= avail:
        k = (avail - sum(smallest)) / (sum(natural) - sum(smallest))
        widths = [s + (n - s) * k for n, s in zip(natural, smallest, strict=True)]
    else:   # even one word per line is too wide: give each column its share and wrap inside words
        widths = [avail * s / sum(smallest) for s in smallest]
    head = [flow.lay_lines([[(headers[c], H_CELL)]], w - 2 * PAD) for c, w in zip(columns, widths, strict=True)]
    head_height = max(flow.lines_height(lines) for lines in head) + 2 * PAD

    def paint_header() -> None:
        top = flow.y
        rect = QRectF(flow.content.left(), top, sum(widths), head_height)
        flow.draw(lambda p: p.fillRect(rect, HEADER_SHADE))
        _paint_cells(flow, head, widths, top, head_height, [None] * len(columns), [False] * len(columns))
        flow.y += head_height

    row_left, row_right = flow.content.left(), flow.content.left() + sum(widths)
    flow.ensure(head_height + 24.0)
    paint_header()
    for row in rows:
        laid = [flow.lay_lines(row[c].lines, w - 2 * PAD) for c, w in zip(columns, widths, strict=True)]
        height = max(flow.lines_height(lines) for lines in laid) + 2 * PAD
        if flow.ensure(height):
            paint_header()
        top = flow.y
        _paint_cells(flow, laid, widths, top, height, [row[c].shade for c in columns], [row[c].right for c in columns])
        bottom = top + height
        flow.draw(lambda p, y=bottom: _hline(p, row_left, row_right, y))
        flow.y += height
    flow.gap(2.0)


def _hline(painter: QPainter, left: float, right: float, y: float) -> None:
    painter.setPen(GRID)
    painter.drawLine(QPointF(left, y), QPointF(right, y))


def _paint_cells(flow: Flow, cells: Sequence[list[Line]], widths: Sequence[float], top: float, height: float,
                 shades: Sequence[QColor | None], rights: Sequence[bool]) -> None:
    x = flow.content.left()
    for lines, width, shade, right in zip(cells, widths, shades, rights, strict=True):
        if shade is not None:
            rect = QRectF(x, top, width, height)
            flow.draw(lambda p, r=rect, s=shade: p.fillRect(r, s))
        y = top + PAD
        for line in lines:
            line_height = flow.lines_height([line])
            used = sum(flow.width_of(t, s) for t, s in line)
            left = x + width - PAD - used if right else x + PAD
            flow.draw(_line_painter(flow, line, left, y, line_height))
            y += line_height
        x += width


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
