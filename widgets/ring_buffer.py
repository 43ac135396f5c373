"""(t, value) pairs for a live curve: O(1) append, the newest `capacity` kept, views without copies.

The pairs live in one linear numpy array per column with headroom after the newest pair. Appends
write into the headroom; when it is used up the newest pairs move to the front of a NEW array, so a
view handed out earlier is never overwritten (pyqtgraph keeps the arrays given to setData). Moving
`capacity` pairs once every `headroom` appends keeps append amortised O(1). Before the cap is
reached the storage grows geometrically, so a short run holds little memory.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

DEFAULT_CAPACITY = 28_800   # 4 h at 0.5 s
_MIN_STORAGE = 64


class RingBuffer:
    """The newest `capacity` (t, value) pairs in append order; `t` is expected to grow."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, initial: int = 256) -> None:
        if capacity < 1:
            raise ValueError("a ring buffer holds at least one pair")
        self.capacity = capacity
        self._headroom = max(capacity // 4, _MIN_STORAGE)
        size = min(max(initial, _MIN_STORAGE), capacity + self._headroom)
        self._t = np.empty(size, dtype=np.float64)
        self._v = np.empty(size, dtype=np.float64)
        self._start = 0
        self._end = 0
        self.version = 0      # grows on every change: a plot redraws when it differs from what it drew
        self.dropped = 0      # pairs pushed out by newer ones

    def __len__(self) -> int:
        return self._end - self._start

    @property
    def last_t(self) -> float | None:
        return float(self._t[self._end - 1]) if self._end > self._start else None

    @property
    def first_t(self) -> float | None:
        return float(self._t[self._start]) if self._end > self._start else None

    @property
    def last_value(self) -> float | None:
        return float(self._v[self._end - 1]) if self._end > self._start else None

    def clear(self) -> None:
        self._t = np.empty(_MIN_STORAGE, dtype=np.float64)
        self._v = np.empty(_MIN_STORAGE, dtype=np.float64)
        self._start = self._end = 0
        self.version += 1

    def append(self, t: float, value: float) -> None:
        if self._end == len(self._t):
            self._make_room(1)
        self._t[self._end] = t
        self._v[self._end] = value
        self._end += 1
        if self._end - self._start > self.capacity:
            self._start += 1
            self.dropped += 1
        self.version += 1

    def extend(self, t: npt.ArrayLike, values: npt.ArrayLike) -> None:
        """Append many pairs at once (loading a stored run): one copy, not one call per pair."""
        ts = np.asarray(t, dtype=np.float64).ravel()
        vs = np.asarray(values, dtype=np.float64).ravel()
        if len(ts) != len(vs):
            raise ValueError(f"{len(ts)} times for {len(vs)} values")
        if len(ts) > self.capacity:
            self.dropped += len(ts) - self.capacity
            ts, vs = ts[-self.capacity:], vs[-self.capacity:]
        n = len(ts)
        if n == 0:
            return
        if self._end + n > len(self._t):
            self._make_room(n)
        self._t[self._end:self._end + n] = ts
        self._v[self._end:self._end + n] = vs
        self._end += n
        excess = self._end - self._start - self.capacity
        if excess > 0:
            self._start += excess
            self.dropped += excess
        self.version += 1

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        """The pairs as two contiguous read-only arrays (views: no copy)."""
        t = self._t[self._start:self._end]
        v = self._v[self._start:self._end]
        t.flags.writeable = False
        v.flags.writeable = False
        return t, v

    def window(self, t_from: float, t_to: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The pairs with t_from <= t (<= t_to), as views."""
        t, v = self.view()
        lo = int(np.searchsorted(t, t_from, side="left"))
        hi = len(t) if t_to is None else int(np.searchsorted(t, t_to, side="right"))
        return t[lo:hi], v[lo:hi]

    def _make_room(self, wanted: int) -> None:
        """A new array with the kept pairs at its front and room for `wanted` more."""
        kept = self._end - self._start
        full = self.capacity + self._headroom
        size = len(self._t)
        if size < full:
            size = min(max(size * 2, kept + wanted, _MIN_STORAGE), full)
        if kept + wanted > size:
            # only extend() gets here, and it never adds more than `capacity`: drop the oldest now
            drop = kept + wanted - size
            self._start += drop
            self.dropped += drop
            kept -= drop
        new_t = np.empty(size, dtype=np.float64)
        new_v = np.empty(size, dtype=np.float64)
        new_t[:kept] = self._t[self._start:self._end]
        new_v[:kept] = self._v[self._start:self._end]
        self._t, self._v = new_t, new_v
        self._start, self._end = 0, kept
