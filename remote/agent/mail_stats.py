"""Percentiles and per-second series for the mail storm (nearest rank: always a value that was measured)."""
import math
from typing import Any, Dict, List, Sequence  # noqa: F401 - some only in type comments

from .common import bucket_counts, interval_count, rate_interval, rates

PERCENTILES = (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("max", 100.0))


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    if not sorted_values:
        return 0.0
    rank = max(int(math.ceil(pct / 100.0 * len(sorted_values))), 1)
    return sorted_values[min(rank, len(sorted_values)) - 1]


def summary_ms(values: Sequence[float]) -> Dict[str, float]:
    """p50/p95/p99/max of seconds, in milliseconds."""
    ordered = sorted(values)
    return {name: round(percentile(ordered, pct) * 1000.0, 3) for name, pct in PERCENTILES}


def per_second(times: Sequence[float], start: float, end: float) -> List[int]:
    """How many of `times` fell in each whole second from start; the last bucket ends at `end`."""
    if end < start:
        return []
    buckets = [0] * (int(end - start) + 1)
    for t in times:
        index = int(t - start)
        if 0 <= index < len(buckets):
            buckets[index] += 1
    return buckets


def accept_rates(times: Sequence[float], start: float, end: float, wall_start: float) -> Dict[str, Any]:
    """Accepted messages per second in each whole interval from start to end (one clock for all three);
    wall_start is time.time() at start. {} when the window holds no whole interval."""
    interval = rate_interval(end - start)
    slots = interval_count(end - start, interval)
    return rates(bucket_counts(times, start, slots, interval), interval, wall_start) if slots else {}
