"""What the report prints beside a compared figure: its spread and whether it ties (Qt-free).

The comparison owns the numbers (app.compare.ties decides what is a tie); this only words them for a
page: "±2.1 %", a whisker over the range the figure could take by chance, "tie (within ±3 %)".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from app.catalogue import CATALOGUE, MetricSpec
from app.compare.model import Cell


@dataclass(frozen=True)
class Whisker:
    low: float
    high: float


def spread_text(cell: Cell) -> str:
    """ "±2.1 %": how far the figure could be off by chance, when its spread was measured; "" otherwise."""
    return cell.spread_text


def whisker(cell: Cell) -> Whisker | None:
    """The range the figure could take by chance (value ± margin): where two ranges overlap, the servers tie.
    None when no spread was measured (an assumed margin is not drawn)."""
    if not cell.measured or cell.margin is None or cell.value is None or cell.margin <= 0:
        return None
    if not (math.isfinite(cell.value) and math.isfinite(cell.margin)):
        return None
    return Whisker(cell.value - cell.margin, cell.value + cell.margin)


def tie_text(cell: Cell) -> str:
    """ "tie (within ±3 %)" when the comparison found no winner for this figure; "" otherwise."""
    return cell.verdict if cell.tie else ""


def short_label(item: MetricSpec) -> str:
    """A figure's label under its test's heading: "Single core", not "CPU single core"."""
    test = CATALOGUE.label(item.test)
    rest = item.label[len(test):].strip() if item.label.lower().startswith(test.lower()) else ""
    if not rest or not rest[0].isalpha():
        return item.label
    return rest[:1].upper() + rest[1:]


def short_header(item: MetricSpec) -> str:
    label = short_label(item)
    return f"{label} ({item.unit})" if item.unit else label
