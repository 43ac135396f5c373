"""`benchbay run`'s progress on many hosts: one overall line every few seconds instead of a line per host.

Above FLEET_THRESHOLD hosts, a line per host per second is a hundred lines a second on stderr. Here each
host keeps its own estimate (as RunProgress does), and the lines are: the overall state every
FLEET_EVERY seconds ("100 hosts: 62 % in all, 97 running · 2 done · 1 failed, ~0:41 left"), one line
when a host finishes or fails, and the host's warnings and errors as they come.
"""
from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from app.cli.run_progress import RunProgress, duration, percent

FLEET_THRESHOLD = 8    # more hosts than this: overall lines instead of per-host ones
FLEET_EVERY = 5.0      # seconds between overall lines


def run_progress_for(hosts: int, expected: float | None = None, out: TextIO | None = None,
                     clock: Callable[[], float] | None = None) -> RunProgress:
    """Per-host lines for a few hosts, overall lines for many."""
    if hosts > FLEET_THRESHOLD:
        return FleetProgress(hosts, expected, out=out, clock=clock)
    return RunProgress(expected, out=out, clock=clock)


class FleetProgress(RunProgress):
    """Overall progress of a run on `hosts` hosts; hosts not heard from yet count as starting."""

    def __init__(self, hosts: int, expected: float | None = None, out: TextIO | None = None,
                 clock: Callable[[], float] | None = None, every: float = FLEET_EVERY) -> None:
        super().__init__(expected, out=out, clock=clock, every=every)
        self._hosts = hosts
        self._ended: dict[str, str] = {}     # host -> its final status
        self._last_overall = -math.inf
        self._state = threading.RLock()   # a hundred worker threads report at once; overall() reads them all

    def write_line(self, text: str) -> None:
        out = self._out or sys.stderr   # looked up per line: tests swap sys.stderr
        with self._lock:
            out.write(text + "\n")
            out.flush()

    def event(self, host: str, event: dict) -> None:
        with self._state:
            self._event(host, event)

    def _event(self, host: str, event: dict) -> None:
        kind = event.get("type")
        if self.track(host, event)[1]:
            self._ended.pop(host, None)
        if kind == "done":
            status = str(event.get("status") or "done")
            self.host_ended(host, status, str(event.get("error") or ""))   # (an RLock: taken again)
        elif kind in ("warning", "error", "disconnected"):
            self.say(host, f"{kind}: {event.get('message', '')}")
        elif kind == "reconnected":
            self.say(host, f"reconnected after {event.get('outage_s', 0):.1f} s")
        now = self._clock()
        if now - self._last_overall >= self._every:
            self._last_overall = now
            self.write_line(self.overall())

    def host_ended(self, host: str, status: str, error: str = "") -> None:
        """A host's run ended (also when it failed before its agent sent anything); said once per run."""
        with self._state:
            # the last host to end: the final overall line
            if self._host_ended(host, status, error) and len(self._ended) >= self._hosts:
                self._last_overall = self._clock()
                self.write_line(self.overall())

    def _host_ended(self, host: str, status: str, error: str) -> bool:
        """False when the host's end was already said."""
        if host in self._ended:
            return False
        status = str(getattr(status, "value", status))
        self._ended[host] = status
        estimate = self.estimate(host)
        count = f" ({len(self._ended)} of {self._hosts} ended)"
        if status == "done":
            self.say(host, f"done in {duration(estimate.elapsed)}{count}")
            return True
        fraction = estimate.fraction()
        shown = percent(fraction) if fraction is not None else ""
        reached = f" at {shown}" if shown and shown != percent(0.0) else ""   # "at 0 %" says nothing
        why = f": {error}" if error else ""
        self.say(host, f"{status}{reached} after {duration(estimate.elapsed)}{why}{count}")
        return True

    def overall(self) -> str:
        """ "100 hosts: 62 % in all, 97 running · 2 done · 1 failed, ~0:41 left" """
        done = sum(1 for status in self._ended.values() if status == "done")
        failed = len(self._ended) - done
        running = [host for host in self._estimates if host not in self._ended]
        starting = max(0, self._hosts - len(running) - len(self._ended))
        # a host that failed has no work left either: counted as through, the percentage never goes back
        fractions = [1.0] * len(self._ended) + [self.estimate(h).fraction() or 0.0 for h in running] \
            + [0.0] * starting
        parts = [f"{percent(sum(fractions) / len(fractions))} in all" if fractions else "all ended"]
        counts = [f"{len(running)} running", f"{done} done", f"{failed} failed"]
        if starting:
            counts.insert(0, f"{starting} starting")
        parts.append(" · ".join(counts))
        lefts = [left for left in (self.estimate(h).seconds_left() for h in running) if left is not None]
        if lefts and not starting:
            seconds = max(s for s, _ in lefts)
            guess = any(g for _, g in lefts)
            parts.append("finishing" if seconds < 1.0 else f"{'~' if guess else ''}{duration(seconds)} left")
        return f"{self._hosts} hosts: " + ", ".join(parts)
