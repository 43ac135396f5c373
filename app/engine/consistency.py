"""How steady the server was during each test, as results stored beside the figures they qualify:

- "<metric>.cv" (%): coefficient of variation of the figure's per-interval rate (sd / mean);
- "<job>.p99_over_p50" (x): a disk job's p99 latency over its median — how long the tail is;
- "<phase>.steal" (%): the host's mean CPU %steal while the phase ran (another guest took the CPU).

A shared virtual machine shows itself in all three; bare metal keeps them low.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from storage.records import SPREAD_WITHIN_RUN, ResultSample

CV_SUFFIX = ".cv"
TAIL_SUFFIX = ".p99_over_p50"
STEAL_SUFFIX = ".steal"
# phases whose results are not named after them, and the name their steal figure takes
NAMED_PHASES = {"mailstorm": ("storm",)}
BULKY_KEYS = ("per_second", "series")   # per-second lists stay with the figure they belong to


class PhaseSample(NamedTuple):
    """One telemetry interval: its end (host wall clock), its length and the CPU %steal over it."""

    t: float
    interval: float
    steal: float


def _meta(base: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    out = {key: value for key, value in base.items() if key not in BULKY_KEYS}
    out.update(extra)
    return out


def _cv_results(results: Sequence[ResultSample]) -> list[ResultSample]:
    out = []
    for sample in results:
        spread = sample.spread
        if spread is None or spread.kind != SPREAD_WITHIN_RUN or spread.n < 2:
            continue
        cv = spread.cv_percent
        if cv is None:
            continue
        out.append(ResultSample(sample.test, sample.metric + CV_SUFFIX, round(cv, 3), "%", _meta(
            sample.metadata, of=sample.metric, rate_intervals=spread.n, rate_interval_s=spread.interval_s,
            what="coefficient of variation of the per-interval rate")))
    return out


def _tail_results(results: Sequence[ResultSample]) -> list[ResultSample]:
    by_metric = {(s.test, s.metric): s for s in results}
    out = []
    for (test, metric), p99 in by_metric.items():
        if test != "disk" or not metric.endswith(".lat_p99"):
            continue
        job = metric[: -len(".lat_p99")]
        p50 = by_metric.get((test, job + ".lat_p50"))
        if p50 is None or not p50.value > 0 or not math.isfinite(p99.value):
            continue
        out.append(ResultSample(test, job + TAIL_SUFFIX, round(p99.value / p50.value, 3), "x", _meta(
            p99.metadata, what="p99 latency over p50 latency")))
    return out


def _phases(events: Sequence[Mapping[str, Any]]) -> list[tuple[str, float, float]]:
    """(phase id, start, end) of each phase the agent opened and closed, in order."""
    opened: dict[str, float] = {}
    out = []
    for event in events:
        phase, t = event.get("phase"), event.get("t")
        if not isinstance(phase, str) or not isinstance(t, (int, float)):
            continue
        if event.get("type") == "phase_start":
            opened[phase] = float(t)
        elif event.get("type") == "phase_end" and phase in opened:
            out.append((phase, opened.pop(phase), float(t)))
    return out


def mean_over(samples: Sequence[PhaseSample], start: float, end: float) -> tuple[float, int] | None:
    """The mean %steal over [start, end], each interval weighted by how much of it lies inside;
    (mean, how many intervals touched it), or None when no telemetry covers it."""
    total = weight = 0.0
    count = 0
    for sample in samples:
        low, high = max(sample.t - sample.interval, start), min(sample.t, end)
        if high <= low or not math.isfinite(sample.steal):
            continue
        total += sample.steal * (high - low)
        weight += high - low
        count += 1
    return (total / weight, count) if weight > 0 else None


def _steal_results(results: Sequence[ResultSample], events: Sequence[Mapping[str, Any]],
                   telemetry: Sequence[PhaseSample]) -> list[ResultSample]:
    if not results or not telemetry:
        return []
    test = results[0].test
    metrics = {s.metric for s in results}
    named = NAMED_PHASES.get(test, ())
    out = []
    for phase, start, end in _phases(events):
        figured = phase in metrics or any(m.startswith(phase + ".") for m in metrics)
        if not (figured or phase in named) or phase + STEAL_SUFFIX in metrics:
            continue
        found = mean_over(telemetry, start, end)
        if found is None:
            continue
        steal, count = found
        # the labels of the figures it stands beside (synthetic, cached ...) go with it
        base = next((s.metadata for s in results if s.metric == phase or s.metric.startswith(phase + ".")),
                    results[0].metadata)
        out.append(ResultSample(test, phase + STEAL_SUFFIX, round(steal, 3), "%", _meta(
            base, phase=phase, telemetry_intervals=count, phase_s=round(end - start, 3),
            what="mean CPU %steal of the host while the phase ran")))
    return out


def consistency_results(results: Sequence[ResultSample], events: Sequence[Mapping[str, Any]],
                        telemetry: Sequence[PhaseSample] = ()) -> list[ResultSample]:
    """The consistency figures of a run's results (see the module's docstring), in that order."""
    return _cv_results(results) + _tail_results(results) + _steal_results(results, events, telemetry)
