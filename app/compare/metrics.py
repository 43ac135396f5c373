"""The figures a comparison puts side by side: which result each column reads and which way is better.

A column is one stored result ("disk" / "randread_4k.iops") or one derived figure (the best point of the
disk concurrency sweep). Columns of a test none of the compared runs has are left out of the table.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.catalogue import CATALOGUE, HIGHER, LOWER, SWEEP_JOB, MetricSpec
from app.catalogue.presentation import STEAL_PHASE, SWEEP_BEST
from app.summary.base import result_field
from storage.records import SPREAD_ACROSS_RUNS, Spread
from storage.spread import spread_of

Metric = MetricSpec     # a column: the catalogue's description of a compared figure
METRICS: tuple[Metric, ...] = CATALOGUE.compared_metrics()
TEST_LABELS = dict(CATALOGUE.labels)
__all__ = ["HIGHER", "LOWER", "METRICS", "SWEEP_BEST", "TEST_LABELS", "Figure", "Metric", "figures", "median_figure",
           "metric"]


def metric(key: str) -> Metric:
    return CATALOGUE.metric(key)


@dataclass(frozen=True)
class Figure:
    """One value of one run, with the metadata of the result it came from (caveats read it)."""

    value: float
    metadata: dict[str, Any]
    note: str = ""      # e.g. "16 workers" for the best sweep point
    spread: Spread | None = None   # how much it varied: within its run, or across the repeats it is the median of
    repeats: int = 1    # how many runs it stands for (the median of their figures when more than one)
    values: tuple[float, ...] = ()   # each run's figure (the verdict reads them); () = (value,)
    steal: float = 0.0  # the most CPU steal (%) the runs saw while measuring it
    workers: int | None = None   # the best sweep point's worker count (compared only at the same count)

    @property
    def runs(self) -> tuple[float, ...]:
        return self.values or (self.value,)


def _steal(stored: dict[str, float], test: str, job: str) -> float:
    """The CPU steal (%) stored for the phase that measured a figure; 0 when none was stored."""
    value = stored.get(f"{test}:{STEAL_PHASE.get(test, job)}.steal", 0.0)
    return value if math.isfinite(value) and value > 0 else 0.0


def figures(results: Iterable[Any]) -> dict[str, Figure]:
    """metric key -> Figure for every comparison metric the results hold."""
    stored: dict[str, Figure] = {}
    numbers: dict[str, float] = {}
    sweep: list[tuple[float, int, dict[str, Any], Spread | None, str]] = []
    chosen = _dns_choice(results)
    for result in results:
        test, name = str(result_field(result, "test") or ""), str(result_field(result, "metric") or "")
        value, meta = result_field(result, "value"), dict(result_field(result, "metadata") or {})
        if value is None:
            continue
        if test == "dns" and (meta.get("resolver"), meta.get("pass")) != chosen:
            continue
        spread = result_field(result, "spread")
        spread = spread if isinstance(spread, Spread) else None
        note = f"{meta.get('resolver')}, {meta.get('pass')} pass" if test == "dns" else ""
        stored[f"{test}:{name}"] = Figure(float(value), meta, note, spread=spread)
        numbers[f"{test}:{name}"] = float(value)
        job, _, quantity = name.partition(".")
        match = SWEEP_JOB.match(job)
        if test == "disk" and match and quantity == "iops":
            sweep.append((float(value), int(match["workers"]), meta, spread, job))
    out = {m.key: replace(stored[m.key], steal=_steal(numbers, m.test, m.metric.partition(".")[0]))
           for m in METRICS if m.key in stored}
    if sweep:
        value, workers, meta, spread, job = max(sweep, key=lambda point: point[0])
        out["disk:" + SWEEP_BEST] = Figure(value, meta, f"{workers} worker{'s' if workers != 1 else ''}", spread,
                                           steal=_steal(numbers, "disk", job), workers=workers)
    return out


def _dns_choice(results: Iterable[Any]) -> tuple[Any, Any] | None:
    """The resolver and pass a dns run is compared by: its first resolver's first pass (cold: what a client
    meets first; the run's other resolvers and passes are in its own summary and in the comparison's JSON)."""
    for result in results:
        if str(result_field(result, "test") or "") == "dns":
            meta = dict(result_field(result, "metadata") or {})
            return meta.get("resolver"), meta.get("pass")
    return None


def median_figure(runs: Sequence[Figure]) -> Figure:
    """The figure of repeated runs: the median of theirs, with their spread across runs.

    An even count takes the mean of the middle two; the note and metadata are those of the run
    nearest the median (the sweep's best point may be at other workers in each run)."""
    values = sorted(f.value for f in runs)
    middle = len(values) // 2
    value = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2.0
    nearest = min(runs, key=lambda f: abs(f.value - value))
    spread = spread_of([f.value for f in runs], kind=SPREAD_ACROSS_RUNS) if len(runs) > 1 else nearest.spread
    counts = {f.workers for f in runs}
    return Figure(value, nearest.metadata, nearest.note, spread, len(runs), tuple(f.value for f in runs),
                  max(f.steal for f in runs), counts.pop() if len(counts) == 1 else None)
