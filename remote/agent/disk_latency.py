"""Per-I/O latency as a log-bucket histogram: 1 µs .. 100 s, each bucket 1.9 % wide (about ±1 %).

Cheap enough to call once per I/O (one log, one list increment), small enough to send from a worker
process as a sparse dict, and mergeable across workers.
"""
import math
from typing import Any, Dict, List, Optional  # noqa: F401 - List in a type comment

MIN_S = 1e-6
MAX_S = 100.0
RATIO = 1.019  # the geometric middle of a bucket is within sqrt(1.019)-1 = 0.95 % of anything in it
_K = 1.0 / math.log(RATIO)
K = _K   # a latency's bucket: int(log(seconds / MIN_S) * K), for loops that inline record()
BUCKETS = int(math.log(MAX_S / MIN_S) * _K) + 1
# each bucket's upper edge but the last's: a latency's bucket is bisect.bisect_right(UPPER, seconds), one C call
# where record() takes a log, a multiplication, a conversion and two comparisons (for per-I/O loops)
UPPER = [MIN_S * math.exp(i / _K) for i in range(1, BUCKETS)]
# Cheaper still for the common case: latencies below CELLS_UPTO_S cut into cells of 1/CELLS_PER_S s (about
# 30 ns), each cell's bucket looked up in a list (cell_buckets()): a multiplication, a floor and two list
# indexings where bisect makes about ten float comparisons through the generic object protocol. A cell
# that a bucket edge falls in (or half a cell beside, for the float rounding of the multiplication) is -1:
# its latencies go through bisect, so each lands in the bucket bisect gives it.
CELLS_PER_S = float(1 << 25)
CELLS_UPTO_S = 1e-3
_CELLS = []  # type: List[int]
PERCENTILES = (50.0, 95.0, 99.0, 99.9)


def cell_buckets() -> List[int]:
    """The bucket of every cell below CELLS_UPTO_S, -1 where bisect must decide (built once, ~1 ms)."""
    if not _CELLS:
        cells = [-1] * int(CELLS_UPTO_S * CELLS_PER_S)
        low = 0.0
        for index, high in enumerate(UPPER + [math.inf]):
            # cells c whose values, widened by half a cell, are all in [low, high): (c-0.5)/S >= low and
            # (c+1.5)/S < high
            first = max(0, int(math.ceil(low * CELLS_PER_S + 0.5)))
            last = min(len(cells) - 1, int(math.ceil(high * CELLS_PER_S - 1.5)) - 1)
            if last >= first:
                cells[first:last + 1] = [index] * (last + 1 - first)
            if first >= len(cells):
                break
            low = high
        _CELLS[:] = cells
    return _CELLS


class Histogram:
    """Counts of latencies in seconds; percentiles come back as the bucket's middle, clamped to min/max."""

    __slots__ = ("counts", "count", "total", "min", "max")

    def __init__(self) -> None:
        self.counts = [0] * BUCKETS
        self.count = 0
        self.total = 0.0
        self.min = math.inf
        self.max = 0.0

    def record(self, seconds: float) -> None:
        if seconds > MIN_S:
            index = int(math.log(seconds / MIN_S) * _K)
            if index >= BUCKETS:
                index = BUCKETS - 1
        else:
            index = 0
        self.counts[index] += 1
        self.count += 1
        self.total += seconds
        if seconds < self.min:
            self.min = seconds
        if seconds > self.max:
            self.max = seconds

    def merge(self, other: "Histogram") -> "Histogram":
        for index, n in enumerate(other.counts):
            if n:
                self.counts[index] += n
        self.count += other.count
        self.total += other.total
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)
        return self

    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0

    def percentile(self, p: float) -> float:
        """Nearest-rank percentile in seconds (0 when empty)."""
        if not self.count:
            return 0.0
        rank = max(1, int(math.ceil(p / 100.0 * self.count)))
        seen = 0
        for index, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                if index == BUCKETS - 1:  # the overflow bucket: beyond 100 s only the maximum is known
                    return self.max
                middle = MIN_S * RATIO ** (index + 0.5)
                return min(max(middle, self.min), self.max)
        return self.max

    def summary_ms(self) -> Dict[str, float]:
        """{"mean", "p50", "p95", "p99", "p99.9"} in milliseconds, as results report them."""
        out = {"mean": round(self.mean() * 1e3, 6)}
        for p in PERCENTILES:
            out["p{:g}".format(p)] = round(self.percentile(p) * 1e3, 6)
        return out

    def to_state(self) -> Dict[str, Any]:
        """Plain data for a pipe: only the buckets that were hit."""
        return {"counts": {str(i): n for i, n in enumerate(self.counts) if n}, "count": self.count,
                "total": self.total, "min": self.min if self.count else None, "max": self.max}

    @classmethod
    def from_state(cls, state: Dict[str, Any]) -> "Histogram":
        hist = cls()
        for index, n in state["counts"].items():
            hist.counts[int(index)] = int(n)
        hist.count = int(state["count"])
        hist.total = float(state["total"])
        low = state.get("min")  # type: Optional[float]
        hist.min = math.inf if low is None else float(low)
        hist.max = float(state["max"])
        return hist
