"""How steady a server was, beside its headline figures: "variation 2.0 % · p99/p50 3.1x · steal 0.4 %".

The figures are the results Benchbay stores next to the rates they qualify (the catalogue's consistency
metrics); for a server whose test was repeated, the median over its runs. The table, the CSV and the PDF
show the same text.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from app.catalogue import CATALOGUE, MetricSpec
from app.catalogue.presentation import DBLOAD_BEST
from app.summary.dbload_series import DBLOAD, cv_percent, dbload_of

DBLOAD_KEY = f"{DBLOAD}:{DBLOAD_BEST}"

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


def steadiness(key: str, results: Sequence[Any]) -> str:
    """What a row's results say of the steadiness behind the figure `key` ("" when nothing was stored)."""
    if key == DBLOAD_KEY:
        return dbload_steadiness(results)
    found = [(spec, value) for spec in CATALOGUE.consistency_for(key)
             if (value := _median(results, spec)) is not None]
    return consistency_text(found)


def _median(results: Sequence[Any], spec: MetricSpec) -> float | None:
    values = [float(r.value) for r in results if r.test == spec.test and r.metric == spec.metric
              and isinstance(r.value, (int, float)) and math.isfinite(r.value)]
    return statistics.median(values) if values else None


def dbload_steadiness(results: Sequence[Any]) -> str:
    """ "variation 3.1 % · 0 errors · knee at 8 clients · pgbench 15.19": the best step's per-second
    variation, the errors of the whole sweep, its knee and the tool that measured it."""
    load = dbload_of(results)
    best = load.best if load is not None else None
    if load is None or best is None:
        return ""
    cv = cv_percent(best.per_second)
    parts = [f"variation {cv:.1f} %" if cv is not None else "",
             f"{round(load.errors):,} error{'s' if round(load.errors) != 1 else ''}",
             load.knee_text().partition(" (")[0], load.engine]
    return " · ".join(p for p in parts if p)
