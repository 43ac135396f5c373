"""When a difference is a win and when it is a tie: the rule, as code and as a sentence a report prints.

Every compared figure gets a range it could have taken by chance: value ± margin. A server wins a figure
only when its range does not overlap any other server's; otherwise the servers whose ranges overlap the
leader's tie, "within ±X %" where X is the largest difference the ranges allow, in % of the leader.

The margin:
- repeats (spread across runs, n >= 2): the half-width of the 95 % confidence interval of the mean,
  Student's t with n - 1 degrees of freedom times sd / sqrt(n);
- one run with per-interval rates (spread within the run, n >= 2): half the 5th-95th percentile range of
  those rates. A run says how much its rate wandered, not how the next run would differ, so the range of
  the rates is used, not the (much narrower) confidence interval of their mean;
- never less than MIN_MARGIN_PERCENT of the value (what a benchmark run can claim at best), and
  ASSUMED_MARGIN_PERCENT for a figure without a measured spread (stored before Benchbay measured it,
  or too short for two intervals).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from storage.records import SPREAD_ACROSS_RUNS, Spread

MIN_MARGIN_PERCENT = 1.0
ASSUMED_MARGIN_PERCENT = 5.0

# Student's t, two-sided 95 %, by degrees of freedom; 1.96 (the normal distribution) beyond
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
        20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}

TIE_RULE = (
    "A server is named ahead on a figure only when its range does not overlap any other server's range; "
    "otherwise the figure is a tie, within the largest difference the ranges allow. The range is the figure "
    "± the 95 % confidence half-width of the mean of its repeats (Student's t) when the test was repeated, "
    "± half the 5th-95th percentile range of its per-interval rates for a single run, never narrower than "
    f"±{MIN_MARGIN_PERCENT:g} %, and ±{ASSUMED_MARGIN_PERCENT:g} % for a figure whose spread was not measured."
)


def tie_rule() -> str:
    """The rule in one paragraph, for a report's methodology."""
    return TIE_RULE


def t95(degrees: int) -> float:
    """Student's t for a two-sided 95 % interval (a conservative step for degrees between table rows)."""
    if degrees < 1:
        raise ValueError("a confidence interval needs at least two samples")
    known = [d for d in _T95 if d <= degrees]
    return _T95[max(known)] if degrees <= 120 else 1.96


@dataclass(frozen=True)
class Margin:
    """How far a figure could be off by chance, and what says so."""

    value: float      # absolute, in the figure's unit (>= 0)
    basis: str        # "repeats", "intervals" or "assumed"

    def percent_of(self, reference: float) -> float | None:
        return 100.0 * self.value / abs(reference) if reference else None


def margin(value: float, spread: Spread | None) -> Margin:
    """The figure's margin under the rule above."""
    floor = abs(value) * MIN_MARGIN_PERCENT / 100.0
    if spread is None or spread.n < 2 or not all(math.isfinite(x) for x in (spread.sd, spread.p5, spread.p95)):
        return Margin(abs(value) * ASSUMED_MARGIN_PERCENT / 100.0, "assumed")
    if spread.kind == SPREAD_ACROSS_RUNS:
        return Margin(max(floor, t95(spread.n - 1) * spread.sd / math.sqrt(spread.n)), "repeats")
    return Margin(max(floor, (spread.p95 - spread.p5) / 2.0), "intervals")


def overlap(a: float, margin_a: float, b: float, margin_b: float) -> bool:
    """The ranges a ± margin_a and b ± margin_b overlap (touching counts as overlapping)."""
    return abs(a - b) <= margin_a + margin_b


@dataclass(frozen=True)
class Standing:
    """A column's result: the sole winner's index, or the indices tied with the leader and within what."""

    leader: int                 # index of the best value
    winner: int | None          # the leader when its range overlaps no one else's
    tied: tuple[int, ...]       # the leader and those whose ranges overlap its range (() when it wins)
    within_percent: float       # the largest difference the tied ranges allow, % of the leader's value


def standing(values: Sequence[float], margins: Sequence[float], higher_is_better: bool) -> Standing | None:
    """Who wins a column of at least two values; None for fewer."""
    if len(values) < 2:
        return None
    order = sorted(range(len(values)), key=lambda i: values[i], reverse=higher_is_better)
    leader = order[0]
    tied = [i for i in order if i != leader and overlap(values[leader], margins[leader], values[i], margins[i])]
    if not tied:
        return Standing(leader, leader, (), 0.0)
    allowed = max(margins[leader] + margins[i] for i in tied)
    within = 100.0 * allowed / abs(values[leader]) if values[leader] else math.inf
    return Standing(leader, None, (leader, *tied), within)


def within_text(percent: float) -> str:
    """ "±4.1 %", "±12 %": two significant figures, enough to read a tie by."""
    if not math.isfinite(percent):
        return "±∞ %"
    return f"±{percent:.1f} %" if percent < 10 else f"±{percent:.0f} %"


def tie_text(percent: float) -> str:
    """What a tied figure reads: "tie (within ±4.1 %)"."""
    return f"tie (within {within_text(percent)})"
