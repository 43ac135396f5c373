"""The figures a comparison puts side by side: which result each column reads and which way is better.

A column is one stored result ("disk" / "randread_4k.iops") or one derived figure (the best point of the
disk concurrency sweep). Columns of a test none of the compared runs has are left out of the table.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.catalogue import CATALOGUE, HIGHER, LOWER, SWEEP_JOB, MetricSpec
from app.catalogue.presentation import SWEEP_BEST
from app.summary.base import result_field

Metric = MetricSpec     # a column: the catalogue's description of a compared figure
METRICS: tuple[Metric, ...] = CATALOGUE.compared_metrics()
TEST_LABELS = dict(CATALOGUE.labels)
__all__ = ["HIGHER", "LOWER", "METRICS", "SWEEP_BEST", "TEST_LABELS", "Figure", "Metric", "figures", "metric"]


def metric(key: str) -> Metric:
    return CATALOGUE.metric(key)


@dataclass(frozen=True)
class Figure:
    """One value of one run, with the metadata of the result it came from (caveats read it)."""

    value: float
    metadata: dict[str, Any]
    note: str = ""      # e.g. "16 workers" for the best sweep point


def figures(results: Iterable[Any]) -> dict[str, Figure]:
    """metric key -> Figure for every comparison metric the results hold."""
    stored: dict[str, Figure] = {}
    sweep: list[tuple[float, int, dict[str, Any]]] = []
    for result in results:
        test, name = str(result_field(result, "test") or ""), str(result_field(result, "metric") or "")
        value, meta = result_field(result, "value"), dict(result_field(result, "metadata") or {})
        if value is None:
            continue
        stored[f"{test}:{name}"] = Figure(float(value), meta)
        job, _, quantity = name.partition(".")
        match = SWEEP_JOB.match(job)
        if test == "disk" and match and quantity == "iops":
            sweep.append((float(value), int(match["workers"]), meta))
    out = {m.key: stored[m.key] for m in METRICS if m.key in stored}
    if sweep:
        value, workers, meta = max(sweep, key=lambda point: point[0])
        out["disk:" + SWEEP_BEST] = Figure(value, meta, f"{workers} worker{'s' if workers != 1 else ''}")
    return out
