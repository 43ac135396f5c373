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

The same crowd factor stretches the connection set-up (scaled_connect_timeout: the user's connect
timeout, up to CONNECT_CEILING) and spaces out the reads of each run (poll_period: four per telemetry
tick alone, one per tick with a hundred runs), so that the workbench's own CPU, not the hosts, stays
out of the way. BUSY counts the runs this process drives, including those still taking their turn
to start (app.engine.pool).
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
CONNECT_CEILING = 60.0    # seconds: the most a crowded workbench stretches a connection set-up to
POLL_CEILING = 2.0        # seconds: the longest a crowded workbench waits between two reads of a run

T = TypeVar("T")


def crowd(busy_runs: int, cpus: int | None = None) -> float:
    """How much our own load slows each run down: 1 up to RUNS_PER_CPU runs per CPU, then linear."""
    cpus = max(1, cpus if cpus is not None else (os.cpu_count() or 1))
    return max(1.0, busy_runs / (RUNS_PER_CPU * cpus))


def scaled_timeout(slowest: float | None, busy_runs: int = 1, cpus: int | None = None) -> float:
    """The rule above, as a pure function (seconds)."""
    base = FLOOR if slowest is None else max(FLOOR, MULTIPLE * max(0.0, slowest))
    return min(CEILING, base * crowd(busy_runs, cpus))


def scaled_connect_timeout(base: float, busy_runs: int | None = None, cpus: int | None = None) -> float:
    """The user's connect timeout, stretched while this workbench drives many runs (its own load slows
    each handshake); never below `base`, never above CONNECT_CEILING unless `base` already is."""
    busy = len(BUSY) if busy_runs is None else busy_runs
    return max(base, min(CONNECT_CEILING, base * crowd(busy, cpus)))


def poll_period(interval: float, busy_runs: int | None = None, cpus: int | None = None) -> float:
    """Seconds between two reads of a run's files: a quarter tick (0.1-0.5 s) alone; with many runs
    up to one tick (at most POLL_CEILING), so a hundred runs read once a tick instead of four times."""
    alone = min(0.5, max(0.1, interval / 4))
    busy = len(BUSY) if busy_runs is None else busy_runs
    return max(alone, min(alone * crowd(busy, cpus), interval, POLL_CEILING))


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


BUSY = BusyRuns()   # the runs this process drives or is starting: our own load slows every command
