"""The title line of a live plot: title, legend, or the hover readout, fitted to the plot's width.

The legend and the readout live in the title line, never over the data. A narrow plot (two hosts side
by side at 1280 px) drops whole words (the long title, then the short one, then the marks) rather
than cutting a name in half.
"""
from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF

from widgets.chart_theme import ChartColours
from widgets.crosshair import CurveValue, readout_html, readout_text
from widgets.plot_items import escape

TITLE_PT = 9
SEPARATOR = "&nbsp;&nbsp;&nbsp;"


class PlotTitle:
    """Composes the title line of one PlotItem; `room` answers the pixels the line may take."""

    def __init__(self, plot_item: pg.PlotItem, room: Callable[[], float], title: str = "", short_title: str = "",
                 legend: bool = True) -> None:
        self._item = plot_item
        self._room = room
        self.title = title
        self.short_title = short_title
        self.legend = legend
        self.entries: dict[str, tuple[str, str, bool]] = {}   # curve key -> (name, colour, filled)
        self.dashed: set[str] = set()   # curve keys drawn dashed: their mark in the legend is dashed too
        self.readout: tuple[str, list[CurveValue]] | None = None   # (time, values) while hovering
        self.plain = ""
        self._font = QFont()
        self._font.setPointSizeF(TITLE_PT)

    def names(self) -> list[str]:
        return [name for name, _colour, _filled in self.entries.values()] if self.legend else []

    def mark(self, key: str) -> str:
        """The legend's mark of a curve: a block for a band, a dashed or a solid line."""
        if self.entries[key][2]:
            return "■"
        return "╍" if key in self.dashed else "━"

    def text(self) -> str:
        """The line as shown, in plain text."""
        if self.readout is not None:
            return readout_text(*self.readout)
        return self.plain

    def _variants(self, colours: ChartColours) -> list[list[tuple[str, str]]]:
        """(text, html) parts, longest first."""
        ink, muted = colours.ink, colours.muted
        legend = [(f"{self.mark(key)} {name}", f"<span style='color:{colour}'>{self.mark(key)}</span>&nbsp;"
                                f"<span style='color:{muted}'>{escape(name)}</span>")
                  for key, (name, colour, _filled) in self.entries.items()] if self.legend else []
        titles = [t for t in dict.fromkeys((self.title, self.short_title)) if t]
        variants = [[(t, f"<span style='color:{ink}'>{escape(t)}</span>")] + legend for t in titles]
        # the names alone, in their curves' colours (nothing cut, nothing dropped)
        names = [(name, f"<span style='color:{colour}'>{escape(name)}</span>")
                 for name, colour, _filled in self.entries.values()] if self.legend else []
        # what the chart is goes before the legend's marks: "CPU %" beside coloured names beats the marks alone
        if titles and names:
            variants.append([(titles[-1], f"<span style='color:{ink}'>{escape(titles[-1])}</span>")] + names)
        variants.append(legend)
        variants.append(names)   # the last resort
        return variants

    def fits(self, text: str) -> bool:
        return QFontMetricsF(self._font).horizontalAdvance(text) * 1.05 <= max(40.0, self._room())

    def show(self, colours: ChartColours) -> None:
        if self.readout is not None:
            time_text, values = self.readout
            # the names go first when the line is short of room: the colour marks still tell the curves apart
            names = self.fits(readout_text(time_text, values))
            self._item.setTitle(readout_html(time_text, values, colours.ink, colours.muted, names),
                                size=f"{TITLE_PT}pt")
            self._never_widen()
            return
        variants = self._variants(colours)
        parts = next((v for v in variants if self.fits("   ".join(text for text, _html in v))), variants[-1])
        if not parts and variants[0]:
            parts = variants[0]
        self.plain = "   ".join(text for text, _html in parts)
        # a title line even when empty: the readout needs it, and the top y label would be cut in half
        self._item.setTitle(SEPARATOR.join(h for _text, h in parts) or "&nbsp;", size=f"{TITLE_PT}pt")
        self._item.layout.setContentsMargins(1, 1, 4, 1)
        self._never_widen()

    def _never_widen(self) -> None:
        # pyqtgraph makes a label's text width its minimum: a long line would push the plot past the
        # widget's right edge (axes and newest data cut off) instead of being clipped itself
        label = self._item.titleLabel
        label.setMinimumWidth(0)
        hints = getattr(label, "_sizeHint", None)   # what LabelItem.sizeHint answers the layout with
        if isinstance(hints, dict) and Qt.SizeHint.MinimumSize in hints:
            hints[Qt.SizeHint.MinimumSize] = (0.0, hints[Qt.SizeHint.MinimumSize][1])
            label.updateGeometry()
