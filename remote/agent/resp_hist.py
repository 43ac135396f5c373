"""Latencies of the built-in Redis load generator, counted and reported as redis-benchmark does.

redis-benchmark records each reply's latency in whole microseconds into an HdrHistogram (lowest discernible
value 10 µs, 3 significant figures: 8 µs wide buckets up to 16.4 ms, twice as wide with each doubling above)
and prints a percentile as hdr_value_at_percentile does: the bucket holding the reply of rank
int(p / 100 x count + 0.5) (at least 1), reported as that bucket's highest value. A latency in the middle of a
bucket is so reported up to 8 µs higher than it was: about 4 % at a 100 µs median, which is why the built-in
generator keeps the same buckets and the same rule instead of finer ones (a difference of definition would
show as a difference of latency between the two tools). Unlike redis-benchmark, nothing is clamped at 3 s.

A bucket is known by its lowest value in µs (an int): what the loops put into their per-second dicts.
"""
from typing import Dict, Iterable, Optional  # noqa: F401 - Iterable in a type comment

SUB_BUCKET_MASK = 2047 << 3   # HdrHistogram's sub_bucket_mask: 2048 sub-buckets, unit 8 µs (2^3 <= 10 µs)
_SHIFT_BASE = 11              # a value's bucket width is 2^(bit_length(value | mask) - 11) µs


def bucket_of(took: float) -> int:
    """The lowest value (µs) of the bucket of a latency given in seconds (rounded to whole µs, as the
    difference of two ustime() stamps is on average)."""
    micros = int(took * 1e6 + 0.5)
    if micros < 0:
        return 0
    shift = (micros | SUB_BUCKET_MASK).bit_length() - _SHIFT_BASE
    return micros >> shift << shift


def highest_of(low: int) -> int:
    """A bucket's highest value in µs (HdrHistogram's highest_equivalent_value) from its lowest."""
    shift = (low | SUB_BUCKET_MASK).bit_length() - _SHIFT_BASE
    return low + (1 << shift) - 1


class LatencyHistogram:
    """Counts per bucket (lowest value in µs), mergeable from the workers' sparse per-second dicts."""

    def __init__(self) -> None:
        self.counts = {}  # type: Dict[int, int]
        self.count = 0

    def add(self, sparse: Dict[int, int]) -> "LatencyHistogram":
        counts = self.counts
        for low, n in sparse.items():
            low = int(low)   # the keys come back from JSON as strings
            counts[low] = counts.get(low, 0) + n
            self.count += n
        return self

    def merge(self, other: "LatencyHistogram") -> "LatencyHistogram":
        return self.add(other.counts)

    def percentile_us(self, p: float) -> Optional[int]:
        """redis-benchmark's hdr_value_at_percentile, in µs; None when empty."""
        if not self.count:
            return None
        rank = max(1, int(min(p, 100.0) / 100.0 * self.count + 0.5))
        seen = 0
        for low in sorted(self.counts):
            seen += self.counts[low]
            if seen >= rank:
                return low if p == 0.0 else highest_of(low)
        return None   # not reached: the counts add up to count

    def percentile_ms(self, p: float) -> Optional[float]:
        us = self.percentile_us(p)
        return None if us is None else us / 1000.0
