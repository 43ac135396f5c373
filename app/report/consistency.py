"""How steady each server was, beside its headline figures: "variation 2.0 % · p99/p50 3.1x · steal 0.4 %"
(Qt-free).

The figures are the results Benchbay stores next to the rates they qualify (catalogue consistency
metrics); for a server whose test was repeated, the median over its runs.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from app.catalogue import CATALOGUE, MetricSpec
from app.compare.model import Comparison, RunInput

# a consistency figure's metric suffix -> the word before its value and how the value is written
WORDS = ((".cv", "variation", "{:.1f} %"), (".p99_over_p50", "p99/p50", "{:.1f}x"), (".steal", "steal", "{:.1f} %"))
CONSISTENCY_MEANS = ("Under a headline figure, how steady the server was: variation is the coefficient of "
                     "variation of its per-second rate, p99/p50 how much slower the slowest 1 % of requests were "
                     "than the median one, steal the CPU time the hypervisor gave to other guests. Low is steady.")


def consistency_text(values: Sequence[tuple[MetricSpec, float]]) -> str:
    """ "variation 2.0 % · p99/p50 3.1x · steal 0.4 %"."""
    parts = []
    for spec, value in values:
        for suffix, word, form in WORDS:
            if spec.metric.endswith(suffix):
                parts.append(f"{word} {form.format(value)}")
                break
    return " · ".join(parts)


def consistency(comparison: Comparison, inputs: Mapping[int, RunInput]) -> dict[tuple[str, str], str]:
    """(row label, figure key) -> what the row's runs say of that figure's steadiness; headline figures only."""
    out: dict[tuple[str, str], str] = {}
    for item in comparison.metrics:
        specs = CATALOGUE.consistency_for(item.key) if item.headline else ()
        if not specs:
            continue
        for row in comparison.rows:
            results = [r for run in row.runs if run.test == item.test and run.id in inputs
                       for r in inputs[run.id].results]
            found = [(spec, value) for spec in specs if (value := _median(results, spec)) is not None]
            if found:
                out[(row.label, item.key)] = consistency_text(found)
    return out


def _median(results: Sequence[Any], spec: MetricSpec) -> float | None:
    values = [float(r.value) for r in results if r.test == spec.test and r.metric == spec.metric
              and isinstance(r.value, (int, float)) and math.isfinite(r.value)]
    return statistics.median(values) if values else None
