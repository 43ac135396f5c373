"""A finished run's results as the store keeps them: each figure with its spread within the run, its
per-interval rates as a series ("rate.<metric>"), a mail storm's queue depth as a series ("mail.queue"),
and the consistency figures (app/engine/consistency.py).

The agent sends a result's rates with the result event: {"interval_s", "t0" (host wall clock at the
start of the first interval), "values"}. Series times are seconds since the run's telemetry began (t0
of the telemetry event), as the telemetry series count them, so a rate curve overlays them.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.engine.consistency import PhaseSample, consistency_results
from storage.records import ResultSample, SeriesData
from storage.run_rules import is_finite_number, result_value_problem
from storage.spread import spread_of

log = logging.getLogger(__name__)

RATE_SERIES_PREFIX = "rate."
QUEUE_SERIES = "mail.queue"
MAX_SERIES_NAME = 100    # series.name's length in the store


@dataclass(frozen=True)
class StoredResults:
    results: list[ResultSample]
    series: list[SeriesData]


def rate_series_name(metric: str) -> str:
    return RATE_SERIES_PREFIX + metric


_finite = is_finite_number   # the store's rule for every figure, whichever door a run comes in by


def _rates(event: Mapping[str, Any]) -> tuple[float, float, list[float]] | None:
    """(interval, wall clock of its start, values) of a result event's rates; None when it has none usable."""
    rates = event.get("rates")
    if not isinstance(rates, Mapping):
        return None
    interval, t0, values = rates.get("interval_s"), rates.get("t0"), rates.get("values")
    if not _finite(interval) or interval <= 0 or not _finite(t0) or not isinstance(values, list):
        return None
    kept = [float(v) for v in values if _finite(v)]
    if len(kept) != len(values) or not kept:
        return None
    return float(interval), float(t0), kept


def _queue_series(sample: ResultSample, origin: float) -> SeriesData | None:
    """The mail storm's queue polls, (seconds, depth) pairs from series_t0, on the run's time axis."""
    meta = sample.metadata
    points, start = meta.get("series"), meta.get("series_t0")
    if sample.metric != "queue_max" or not isinstance(points, list) or not _finite(start):
        return None
    pairs = [(float(p[0]), float(p[1])) for p in points
             if isinstance(p, (list, tuple)) and len(p) == 2 and all(_finite(v) for v in p)]
    if not pairs:
        return None
    return SeriesData(QUEUE_SERIES, "", "messages", [float(start) + s - origin for s, _ in pairs],
                      [d for _, d in pairs])


def _result(event: Mapping[str, Any], test: str) -> ResultSample:
    value = event.get("value")
    return ResultSample(str(event.get("test") or test), str(event.get("metric") or ""),
                        float(value) if isinstance(value, (int, float)) else 0.0, str(event.get("unit") or ""),
                        dict(event.get("metadata") or {}))


def stored_results(events: Sequence[Mapping[str, Any]], test: str, origin: float | None,
                   telemetry: Sequence[PhaseSample] = ()) -> StoredResults:
    """The run's results (with spreads and consistency figures) and the series made from them.

    origin: host wall clock of the series' t = 0 (None: the run's first event).
    telemetry: (end time, length, %steal) of each telemetry interval, for the steal during each phase.
    """
    if origin is None:
        origin = next((float(e["t"]) for e in events if _finite(e.get("t"))), 0.0)
    results: list[ResultSample] = []
    series: list[SeriesData] = []
    for event in events:
        if event.get("type") != "result" or event.get("seq") is None:
            continue
        value = event.get("value")
        if isinstance(value, float) and result_value_problem(value):
            log.warning("result %s: %s; not stored", event.get("metric"), result_value_problem(value))
            continue
        sample = _result(event, test)
        rates = _rates(event)
        if rates is not None:
            interval, start, values = rates
            sample = ResultSample(sample.test, sample.metric, sample.value, sample.unit, sample.metadata,
                                  spread_of(values, interval))
            name = rate_series_name(sample.metric)
            if len(name) <= MAX_SERIES_NAME:
                # each point at the end of its interval, as telemetry samples are
                series.append(SeriesData(name, "", sample.unit,
                                         [start + (i + 1) * interval - origin for i in range(len(values))], values))
        queue = _queue_series(sample, origin)
        if queue is not None:
            series.append(queue)
        results.append(sample)
    results += consistency_results(results, events, telemetry)
    return StoredResults(results, series)


def without_rates(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The events as stored: a result's rates live in its series, not twice."""
    out: list[Mapping[str, Any]] = []
    for event in events:
        if event.get("type") == "result" and isinstance(event.get("rates"), Mapping):
            count = len(event["rates"].get("values") or ())
            event = {**event, "rates": f"{count} values stored as series {rate_series_name(str(event.get('metric')))}"}
        out.append(event)
    return out
