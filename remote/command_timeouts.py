"""How long a run's small commands may take: scaled with how fast the host answers, and how busy we are.

A fixed limit fails the slow case (one host of 50 started together missed 20 s: the workbench itself
was the bottleneck, one Python process doing the SSH of all of them) and waits for nothing in the fast
case. The rule, per run:

    timeout = min(CEILING, max(FLOOR, MULTIPLE x slowest recent round trip) x crowd)
    crowd   = max(1, runs this workbench drives at once / (RUNS_PER_CPU x its CPUs))

- a round trip is one small command or one small read on the run's connection, timed by the session
  (a probe before the start, then every poll); the slowest of the last WINDOW counts, so one slow
  answer raises the limit at once and it comes down again after WINDOW quick ones;
- MULTIPLE is generous on purpose: a command that takes 20 round trips is one that hangs;
- FLOOR is the old fixed limit: a fast host never gets less than before;
- CEILING: beyond it the host or the network is broken, not slow; the run's reconnect logic takes over.
"""
from __future__ import annotations

import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import TypeVar

FLOOR = 20.0          # seconds: never less than the fixed limit used before
CEILING = 180.0       # seconds: never more; a command this slow means a broken host or network
MULTIPLE = 20.0       # times the slowest recent round trip
RUNS_PER_CPU = 4      # runs per workbench CPU before our own load slows every command down
WINDOW = 16           # round trips remembered per run

T = TypeVar("T")


def scaled_timeout(slowest: float | None, busy_runs: int = 1, cpus: int | None = None) -> float:
    """The rule above, as a pure function (seconds)."""
    base = FLOOR if slowest is None else max(FLOOR, MULTIPLE * max(0.0, slowest))
    cpus = max(1, cpus if cpus is not None else (os.cpu_count() or 1))
    crowd = max(1.0, busy_runs / (RUNS_PER_CPU * cpus))
    return min(CEILING, base * crowd)


class ResponseTimes:
    """The last WINDOW round trips of one connection."""

    def __init__(self, window: int = WINDOW) -> None:
        self._times: deque[float] = deque(maxlen=window)

    def record(self, seconds: float) -> None:
        self._times.append(max(0.0, float(seconds)))

    def timed(self, call: Callable[[], T]) -> T:
        """Run call() and record how long it took (also when it failed: a slow failure is slow too)."""
        started = time.monotonic()
        try:
            return call()
        finally:
            self.record(time.monotonic() - started)

    @property
    def slowest(self) -> float | None:
        return max(self._times) if self._times else None

    def __len__(self) -> int:
        return len(self._times)


class BusyRuns:
    """The runs this process drives at once (weak: a session that is dropped stops counting)."""

    def __init__(self) -> None:
        self._runs: weakref.WeakSet[object] = weakref.WeakSet()
        self._lock = threading.Lock()

    def add(self, run: object) -> None:
        with self._lock:
            self._runs.add(run)

    def discard(self, run: object) -> None:
        with self._lock:
            self._runs.discard(run)

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)
