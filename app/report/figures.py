"""What the report prints beside a compared figure: its verdict, and the range of its repeats (Qt-free).

The comparison owns the numbers (app.compare.ties decides every verdict); this only words them for a
page: "0.46x of honA (0.42–0.50)", "tie with honA (within ±3 %)", a whisker from the lowest to the highest
of a figure's repeats. "±" on the page means one thing: a verdict's range.
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


def whisker(cell: Cell) -> Whisker | None:
    """From the lowest to the highest of the figure's repeats; None for a single run (its run-to-run range is
    not measured: the verdict's noise floor stands in, and is said there)."""
    spread = cell.spread
    if cell.repeats < 2 or spread is None or cell.value is None:
        return None
    if not (math.isfinite(spread.min) and math.isfinite(spread.max)) or spread.max <= spread.min:
        return None
    return Whisker(spread.min, spread.max)


def tie_text(cell: Cell) -> str:
    """The figure's verdict against the reference ("" for the reference itself: its cell says leader/baseline
    by its shade and the table's legend)."""
    return cell.verdict if cell.kind not in ("", "reference") or cell.partial else ""


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
