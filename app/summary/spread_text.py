"""A figure's spread and the run's consistency figures as a person reads them, without Qt: "±2.1 %" beside
a figure, "980–1,020 IOPS over 5 × 1 s" for its range, one table or line of how steady each test was.

"±x %" is the figure's spread as one standard deviation in percent of its mean: of its per-interval rates
within a run, or of the repeats across runs. The consistency figures are the results
app/engine/consistency.py stores: "<metric>.cv", "<job>.p99_over_p50", "<phase>.steal".
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from app.summary.base import MISSING, Table, number, result_field
from storage.records import SPREAD_WITHIN_RUN, Spread
from storage.spread import spread_from_json

CV_SUFFIX, TAIL_SUFFIX, STEAL_SUFFIX = ".cv", ".p99_over_p50", ".steal"
STEAL_PHASE = {"mailstorm": "storm"}   # tests whose figures are not named after their phase


def spread_of_result(result: Any) -> Spread | None:
    """The result's spread, whether a Spread or a dict as `benchbay run --json` prints it; None if none."""
    spread = result_field(result, "spread")
    if isinstance(spread, Spread) or spread is None:
        return spread
    try:
        return spread_from_json(spread)
    except ValueError:
        return None


def plus_minus(spread: Spread | None) -> str:
    """ "±2.1 %" (one sd in % of the mean); "" without a spread, a mean of 0 or a single sample."""
    if spread is None or spread.n < 2:
        return ""
    cv = spread.cv_percent
    if cv is None:
        return ""
    return f"±{cv:.1f} %" if cv < 10 else f"±{cv:.0f} %"


def with_spread(text: str, spread: Spread | None) -> str:
    """A figure's text with its "±x %" after it, when it has one."""
    suffix = plus_minus(spread)
    return f"{text} {suffix}" if suffix else text


def samples_text(spread: Spread) -> str:
    """ "5 × 1 s" within a run, "3 runs" across runs."""
    if spread.kind == SPREAD_WITHIN_RUN and spread.interval_s > 0:
        return f"{spread.n} × {spread.interval_s:.3g} s"
    return f"{spread.n} run{'s' if spread.n != 1 else ''}"


def range_text(spread: Spread | None, unit: str = "") -> str:
    """ "980–1,020 IOPS over 5 × 1 s"; MISSING without a spread."""
    if spread is None:
        return MISSING
    decimals = None if abs(spread.max) >= 10 else 2
    unit = f" {unit}" if unit else ""
    return f"{number(spread.min, decimals)}–{number(spread.max, decimals)}{unit} over {samples_text(spread)}"


def _values(results: Iterable[Any], test: str) -> dict[str, Any]:
    return {str(result_field(r, "metric")): r for r in results if result_field(r, "test") == test}


def _value(by_metric: dict[str, Any], metric: str, decimals: int | None = 1, suffix: str = "") -> str:
    result = by_metric.get(metric)
    if result is None:
        return MISSING
    return number(float(result_field(result, "value")), decimals) + suffix


def disk_consistency_table(results: Sequence[Any], jobs: Sequence[str]) -> Table:
    """One row per disk job that has any: IOPS range and variation, p99/p50 latency, CPU steal."""
    by_metric = _values(results, "disk")
    table = Table(("job", "IOPS min–max", "variation %", "p99/p50", "steal %"))
    for job in jobs:
        if not any(f"{job}{suffix}" in by_metric for suffix in (".iops.cv", TAIL_SUFFIX, STEAL_SUFFIX)):
            continue
        iops = by_metric.get(f"{job}.iops")
        spread = spread_of_result(iops) if iops is not None else None
        table.rows.append((job, range_text(spread) if spread else MISSING, _value(by_metric, f"{job}.iops.cv"),
                           _value(by_metric, f"{job}{TAIL_SUFFIX}", 2, "x"), _value(by_metric, f"{job}{STEAL_SUFFIX}")))
    return table


def consistency_line(results: Sequence[Any], test: str, metric: str, label: str = "") -> str:
    """ "single: 118–125 ops/s over 5 × 1 s, variation 1.2 %, CPU steal 0.0 %"; "" when there is nothing."""
    by_metric = _values(results, test)
    figure = by_metric.get(metric)
    if figure is None:
        return ""
    parts = []
    spread = spread_of_result(figure)
    if spread is not None:
        parts.append(range_text(spread, str(result_field(figure, "unit") or "")))
    if metric + CV_SUFFIX in by_metric:
        parts.append(f"variation {_value(by_metric, metric + CV_SUFFIX)} %")
    phase = STEAL_PHASE.get(test, metric.partition(".")[0])
    if phase + STEAL_SUFFIX in by_metric:
        parts.append(f"CPU steal {_value(by_metric, phase + STEAL_SUFFIX)} %")
    return f"{label or metric}: " + ", ".join(parts) if parts else ""


def result_line(result: Any) -> str:
    """One stored result as `benchbay runs show` lists it, with its spread when it has one:
    "disk  randread_4k.iops  1000.5 IOPS  ±2.1 % (980–1,020 over 5 × 1 s)"."""
    test, metric = str(result_field(result, "test") or ""), str(result_field(result, "metric") or "")
    value, unit = float(result_field(result, "value") or 0.0), str(result_field(result, "unit") or "")
    line = f"  {test:<12} {metric:<24} {value:>14.6g} {unit}"
    spread = spread_of_result(result)
    if spread is not None:
        pm = plus_minus(spread)
        line += f"  {pm + ' ' if pm else ''}({range_text(spread)}, {spread.kind})"
    return line


# `runs show` and the run summary: what their "±" is (compare's ranges are the verdicts' run-to-run ranges)
SD_LEGEND = ("±: one standard deviation of the figure's per-interval rate (of its repeats, across runs), in % of its "
             "mean: how steady it was, not how far the next run may land (compare judges that)")
