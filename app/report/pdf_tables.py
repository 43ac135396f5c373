"""Tables for the PDF: columns sized to their content across the page, rows broken across pages with the
header repeated, and columns that do not fit carried to a further table that repeats the server names."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QPainter

from app.report.pdf_pages import CELL, GRID, HEADER_SHADE, Flow, Line, Style, line_painter


@dataclass
class TableCell:
    lines: list[Line]
    shade: QColor | None = None
    right: bool = False          # numbers align right


def cell(text: str, style: Style = CELL, shade: QColor | None = None, right: bool = False) -> TableCell:
    return TableCell([[(text, style)]], shade, right)


PAD = 4.0
COLUMN_CAP = 190.0   # a column wider than this wraps


def _widths(flow: Flow, headers: Sequence[Header], rows: Sequence[Sequence[TableCell]], columns: Sequence[int]
            ) -> tuple[list[float], list[float]]:
    """(natural, smallest) width per column: one line each, or the longest word."""
    natural, smallest = [], []
    for col in columns:
        lines = [header_line(headers[col])] + [line for row in rows for line in row[col].lines]
        full = max(sum(flow.width_of(t, s) for t, s in line) for line in lines) + 2 * PAD
        word = max(flow.longest_word(line) for line in lines) + 2 * PAD
        natural.append(max(min(full, COLUMN_CAP), word))
        smallest.append(word)
    return natural, smallest


H_CELL = Style(8.0, bold=True)
Header = str | Line     # a column's title: plain text in the header style, or segments of their own


def header_line(header: Header) -> Line:
    return [(header, H_CELL)] if isinstance(header, str) else list(header)


def table(flow: Flow, headers: Sequence[Header], rows: Sequence[Sequence[TableCell]], fixed: int = 1,
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


def _one_table(flow: Flow, headers: Sequence[Header], rows: Sequence[Sequence[TableCell]], columns: list[int],
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
    head = [flow.lay_lines([header_line(headers[c])], w - 2 * PAD) for c, w in zip(columns, widths, strict=True)]
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
            flow.draw(line_painter(flow, line, left, y, line_height))
            y += line_height
        x += width
