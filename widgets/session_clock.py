"""One time line for the hosts of a live session: x = 0 where its first host started.

A host that joins later (a test after a monitor hand-over) gets that same moment as its x = 0, read on
its own clock; each host's x is then its own time minus that start, so its curves begin where its run
did. Clocks are taken to agree (NTP) unless the arrival of the hosts' first samples says they are
further apart than CLOCK_TOLERANCE_S; then the difference seen is allowed for, delivery delay and all.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

# closer than this, the hosts' clocks are taken to agree: a guess from arrival times would be off by
# the delivery delay, and by a busy GUI thread's stall
CLOCK_TOLERANCE_S = 10.0


class Placed(Protocol):
    t0: float | None    # host seconds at x = 0 (None: not placed yet)


class SessionClock:
    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self.now = now                                   # the workbench's clock, when a sample arrives
        self._anchor: tuple[float, float] | None = None  # (x = 0 on the first host's clock, its lag)

    def reset(self) -> None:
        self._anchor = None

    def place(self, series: Placed, t: float, interval: float) -> None:
        """A live host's first sample or event (host time t) sets its x = 0; later ones change nothing."""
        if series.t0 is None:
            series.t0 = self.origin(t, interval)

    def origin(self, t: float, interval: float) -> float:
        """x = 0 on the clock of a host whose first sample (or event) reads t, `interval` s long."""
        start = t - interval
        lag = self.now() - t    # the workbench's clock minus the host's, plus the delivery delay
        if self._anchor is None:
            self._anchor = (start, lag)
            return start
        first, first_lag = self._anchor
        # the same instant on this host's clock: a clock ahead by d reads d more (its lag is d smaller)
        skew = first_lag - lag
        return first + (skew if abs(skew) > CLOCK_TOLERANCE_S else 0.0)
