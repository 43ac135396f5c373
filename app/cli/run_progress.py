"""`benchbay run`'s progress lines on stderr: the run's overall progress and time left, as the window shows them.

Each host's events feed a RunEstimate (the agent's plan weighted by each phase's seconds): the percentage
never goes back and reads 100 % only once the run is done. Plain lines, never redrawn in place: a phase's
label when it starts, then at most one line per host per PROGRESS_EVERY seconds, so a log or a pipe gets
a few lines, not a stream.
"""
from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from widgets.run_estimate import RunEstimate

PROGRESS_EVERY = 1.0   # seconds between progress lines per host


def duration(seconds: float) -> str:
    """m:ss (h:mm:ss past an hour)."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def percent(fraction: float) -> str:
    """Rounded down: 99.6 % of the way is not "100 %"."""
    return f"{math.floor(100 * fraction + 1e-9):d} %"


def dns_tick_line(event: dict) -> str:
    """ "10.0.0.2:53 cold, second 3: 1,234 answered, p50 1.2 ms, p90 3.4 ms, p99 40 ms, 2 timeouts"."""
    lat = event.get("lat_ms") or {}
    parts = [f"{int(event.get('answered') or 0):,} answered"]
    parts += [f"{key} {lat[key]:.3g} ms" for key in ("p50", "p90", "p99") if isinstance(lat.get(key), (int, float))]
    if event.get("timeouts"):
        parts.append(f"{int(event['timeouts']):,} timeouts")
    return (f"{event.get('resolver', '?')} {event.get('pass', '')}, second {int(event.get('second') or 0) + 1}: "
            + ", ".join(parts))


class RunProgress:
    """Per-host progress lines, written whole from the worker threads.

    expected: the test's upper bound in seconds (what the estimate uses when the agent sends no plan);
    clock: the estimates' and the throttle's clock (a replay of recorded events sets its own)."""

    def __init__(self, expected: float | None = None, out: TextIO | None = None,
                 clock: Callable[[], float] | None = None, every: float = PROGRESS_EVERY) -> None:
        self._lock = threading.Lock()
        self._out = out
        self._clock = clock or time.monotonic
        self._every = every
        self._expected = expected
        self._last: dict[str, float] = {}
        self._estimates: dict[str, RunEstimate] = {}
        self._phase: dict[str, str] = {}

    def say(self, host: str, text: str) -> None:
        out = self._out or sys.stderr   # looked up per line: tests swap sys.stderr
        with self._lock:
            out.write(f"{host}: {text}\n")
            out.flush()

    def estimate(self, host: str) -> RunEstimate:
        found = self._estimates.get(host)
        if found is None:
            found = self._estimates[host] = RunEstimate(self._expected, self._clock)
        return found

    def track(self, host: str, event: dict) -> tuple[RunEstimate, bool]:
        """Feed the event to the host's estimate; also whether it began a new run (a repeat's next run
        starts from nothing)."""
        kind = event.get("type")
        fresh = kind == "start" or (kind in ("plan", "phase_start") and self.estimate(host).final)
        if fresh:
            self._estimates.pop(host, None)
        estimate = self.estimate(host)
        estimate.add_event(event)
        return estimate, fresh

    def event(self, host: str, event: dict) -> None:
        kind = event.get("type")
        estimate, fresh = self.track(host, event)
        if fresh:
            self._last.pop(host, None)
        if kind == "phase_start":
            label = str(event.get("label") or event.get("phase"))
            self._phase[host] = label
            self.say(host, f"{label} ...")
        elif kind == "progress":
            now = self._clock()
            if now - self._last.get(host, -math.inf) >= self._every:
                self._last[host] = now
                self.say(host, "  " + self.line(host))
        elif kind == "done":
            status = str(event.get("status") or "done")
            fraction = estimate.fraction()
            if status == "done":
                self.say(host, f"  100 %, done in {duration(estimate.elapsed)}")
            else:
                reached = f" at {percent(fraction)}" if fraction is not None else ""
                self.say(host, f"  {status}{reached} after {duration(estimate.elapsed)}")
        elif kind in ("warning", "error", "disconnected"):
            self.say(host, f"  {kind}: {event.get('message', '')}")
        elif kind == "reconnected":
            self.say(host, f"  reconnected after {event.get('outage_s', 0):.1f} s")
        elif kind == "dns_tick":
            self.say(host, "  " + dns_tick_line(event))
        elif kind == "test_dir":
            self.say(host, f"  test directory {event.get('directory', '')} ({event.get('source', '')})")

    def host_ended(self, host: str, status: str, error: str = "") -> None:
        """A host's run ended; per-host lines already said so from its events (the summary says the rest)."""

    def line(self, host: str) -> str:
        """ "Random read 4 KiB: 42 % in all, ~1:05 left" — the run's progress, not the phase's."""
        estimate = self.estimate(host)
        fraction = estimate.fraction()
        parts = [f"{percent(fraction)} in all" if fraction is not None else "running"]
        left = estimate.seconds_left()
        if left is not None:
            seconds, guess = left
            parts.append("finishing" if seconds < 1.0 else f"{'~' if guess else ''}{duration(seconds)} left")
        phase = self._phase.get(host, "")
        return (f"{phase}: " if phase else "") + ", ".join(parts)
