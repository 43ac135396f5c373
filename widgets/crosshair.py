"""Hover on a live chart: a vertical line at the pointer and, in the chart's title line, the time and the
value of every curve there (the title line, so the readout never hides the data it reads)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from widgets.plot_items import escape

Z_VALUE = 30


@dataclass(frozen=True)
class CurveValue:
    name: str
    colour: str
    value: float | None        # None: no sample of this curve near that time
    filled: bool = False


def nearest_index(t: np.ndarray, x: float) -> int | None:
    """The index of the sample time nearest to x (t sorted); None without samples."""
    if len(t) == 0:
        return None
    index = int(np.searchsorted(t, x))
    candidates = [i for i in (index - 1, index) if 0 <= i < len(t)]
    return min(candidates, key=lambda i: abs(float(t[i]) - x))


def nearest_value(t: np.ndarray, v: np.ndarray, x: float, tolerance: float) -> float | None:
    """The value of the sample nearest to x, if one lies within tolerance seconds."""
    best = nearest_index(t, x)
    if best is None or abs(float(t[best]) - x) > tolerance:
        return None
    value = float(v[best])
    return value if math.isfinite(value) else None


def format_value(value: float | None) -> str:
    """1,234 · 56.7 · 0.42: as many digits as a reader needs; "–" where there is no sample."""
    if value is None:
        return "–"
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def readout_html(time_text: str, values: list[CurveValue], ink: str, muted: str, names: bool = True) -> str:
    parts = [f"<span style='color:{ink}'><b>{escape(time_text)}</b></span>"]
    for item in values:
        mark = "■" if item.filled else "━"
        name = f"<span style='color:{muted}'>{escape(item.name)}</span>&nbsp;" if names else ""
        parts.append(f"<span style='color:{item.colour}'>{mark}</span>&nbsp;{name}"
                     f"<span style='color:{ink}'>{format_value(item.value)}</span>")
    return "&nbsp;&nbsp;&nbsp;".join(parts)


def readout_text(time_text: str, values: list[CurveValue]) -> str:
    """The readout as plain text (what a user reads; tests compare it)."""
    return "   ".join([time_text] + [f"{item.name} {format_value(item.value)}" for item in values])


class CrosshairLine(pg.InfiniteLine):
    """The vertical line at the hovered time; hidden while the pointer is elsewhere."""

    def __init__(self, colour: str) -> None:
        super().__init__(angle=90, movable=False, pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine))
        self.setZValue(Z_VALUE)
        self.setVisible(False)

    def set_colour(self, colour: str) -> None:
        self.setPen(pg.mkPen(colour, width=1, style=Qt.PenStyle.DashLine))
