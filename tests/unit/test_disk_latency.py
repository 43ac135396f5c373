"""The latency histogram: percentiles within 1 % of the exact ones, merging across workers."""
from __future__ import annotations

import math
import random

import pytest

from remote.agent.disk_latency import Histogram


def _exact(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


@pytest.mark.parametrize("spread", ["lognormal", "bimodal", "uniform"])
def test_percentiles_are_within_one_percent_of_the_sorted_values(spread: str) -> None:
    rng = random.Random(4)
    if spread == "lognormal":   # an SSD: ~100 µs with a long tail
        values = [rng.lognormvariate(math.log(1e-4), 0.8) for _ in range(50_000)]
    elif spread == "bimodal":   # cache hits and disk seeks
        values = [rng.choice([rng.uniform(2e-6, 5e-6), rng.uniform(4e-3, 12e-3)]) for _ in range(50_000)]
    else:
        values = [rng.uniform(1e-3, 2.0) for _ in range(20_000)]
    hist = Histogram()
    for v in values:
        hist.record(v)
    for p in (50, 95, 99, 99.9):
        assert hist.percentile(p) == pytest.approx(_exact(values, p), rel=0.01)
    assert hist.mean() == pytest.approx(sum(values) / len(values), rel=1e-9)
    summary = hist.summary_ms()
    assert summary["p50"] <= summary["p95"] <= summary["p99"] <= summary["p99.9"]
    assert summary["p99"] == pytest.approx(_exact(values, 99) * 1e3, rel=0.01)


def test_merged_workers_equal_one_histogram_of_everything() -> None:
    rng = random.Random(7)
    parts = [[rng.expovariate(1 / (k * 1e-4)) + 1e-6 for _ in range(5000)] for k in (1, 3, 10)]
    merged = Histogram()
    for part in parts:
        worker = Histogram()
        for v in part:
            worker.record(v)
        merged.merge(Histogram.from_state(worker.to_state()))   # as it comes over a worker's pipe
    everything = [v for part in parts for v in part]
    assert merged.count == len(everything)
    for p in (50, 99, 99.9):
        assert merged.percentile(p) == pytest.approx(_exact(everything, p), rel=0.01)


def test_extremes_are_clamped_to_what_was_seen() -> None:
    hist = Histogram()
    assert hist.percentile(99) == 0.0 and hist.summary_ms()["mean"] == 0.0
    for v in (1e-9, 5e-7, 500.0):   # below 1 µs and above 100 s still count
        hist.record(v)
    assert hist.count == 3
    assert hist.percentile(1) <= 1.02e-6 and hist.percentile(100) == pytest.approx(500.0)   # sub-µs: first bucket


def test_a_bisect_into_the_upper_edges_finds_the_bucket_record_uses() -> None:
    """The built-in disk engine's loop buckets a latency with one bisect; it must land where record() would."""
    import bisect

    from remote.agent.disk_latency import BUCKETS, MAX_S, MIN_S, UPPER

    rng = random.Random(7)
    values = [math.exp(rng.uniform(math.log(1e-8), math.log(1e3))) for _ in range(100_000)]
    values += [0.0, MIN_S, MIN_S * 1.0001, MAX_S, MAX_S * 10, 1e9]
    for value in values:
        by_record = Histogram()
        by_record.record(value)
        assert by_record.counts[bisect.bisect_right(UPPER, value)] == 1, value
    assert len(UPPER) == BUCKETS - 1


def test_the_workers_cell_lookup_files_every_latency_in_the_bucket_bisect_gives_it() -> None:
    """The worker loop's shortcut (a list indexed by ~30 ns cell, -1 where bisect decides) must put each
    latency where bisect over the bucket edges does: at the edges themselves, a hair either side and between."""
    import bisect

    from remote.agent.disk_latency import CELLS_PER_S, UPPER, cell_buckets

    cells = cell_buckets()
    rng = random.Random(11)
    near_edges = [edge * (1 + d) for edge in UPPER if edge < 1.1e-3 for d in (-1e-9, -1e-15, 0.0, 1e-15, 1e-9)]
    values = near_edges + [rng.uniform(0.0, 1.1e-3) for _ in range(100_000)] + [0.0, 1e-3, 2e-3]
    looked_up = 0
    for took in values:
        cell = math.floor(took * CELLS_PER_S)
        index = cells[cell] if cell < len(cells) else -1
        if index >= 0:
            looked_up += 1
            assert index == bisect.bisect_right(UPPER, took), took
    assert looked_up > 0.85 * len(values) - len(near_edges)   # the shortcut is taken for most disk latencies
