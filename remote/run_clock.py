"""A run's host clock: measured at the start (and at a re-attach), said when it is far off.

Every time a run stores is on the workbench's clock. What the host gave (the agent's event times, the
telemetry's epoch) is converted with the offset measured here and kept beside, as `host_t`:

    t (stored) = host time - offset        offset = host clock - workbench clock (remote.clock_offset)

so a run on a host whose clock is hours off lines up with the workbench's own events, with a `local`
run, and with runs of other hosts. The stored "telemetry" event says which: `t0` (where the run's series
start) is on the workbench's clock, `host_t0` the host's, `clock_offset_s` the offset used (None when
none was measured: `local`, or a host whose clock could not be read, where t0 == host_t0). A run stored
before this rule has no `host_t0`: its t0 and agent event times are the host's own clock.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from remote.clock_offset import WARN_BEYOND, ClockOffset, clock_warning, measure_offset
from remote.errors import RemoteError
from remote.local_transport import LocalTransport
from remote.run_tail import workbench_event
from remote.transport import Transport

CLOCK_ROUNDS = 4   # clock exchanges at the start of a run (the one with the quickest round trip counts)


def measure_run_clock(transport: Transport, host: str,
                      add_event: Callable[[dict[str, Any]], None]) -> ClockOffset | None:
    """The host's clock offset, as a "clock" event (and a warning beyond WARN_BEYOND); None for this
    computer itself, or when the host's clock cannot be read (said in a warning)."""
    if isinstance(transport, LocalTransport):
        return None   # this computer's own clock
    try:
        clock = measure_offset(transport, rounds=CLOCK_ROUNDS)
    except (RemoteError, ValueError) as exc:
        add_event(workbench_event("warning", message=f"the host's clock could not be read ({exc}): its times "
                                                     "are stored as it gave them"))
        return None
    add_event(workbench_event("clock", offset_s=round(clock.offset, 6), uncertainty_s=round(clock.uncertainty, 6),
                              rtt_s=round(clock.rtt, 6)))
    if abs(clock.offset) > WARN_BEYOND + clock.uncertainty:
        add_event(workbench_event("warning", message=clock_warning(host, clock.offset)))
    return clock


def on_our_clock(event: dict[str, Any], offset: float) -> dict[str, Any]:
    """An event the host timed (the agent's: seq set), on the workbench's clock with the host's beside it."""
    t = event.get("t")
    if event.get("seq") is None or isinstance(t, bool) or not isinstance(t, (int, float)) or "host_t" in event:
        return event
    return {**event, "t": t - offset, "host_t": t}


LAG_SAY = 10.0    # seconds: telemetry arriving later than this (and 3 ticks), for as long, is said once


class LagWatch:
    """Whether the link is the bottleneck: ticks arrive ever later than the host took them, with no outage
    to explain it (a reconnect's catching up is not a slow link). Needs the host's clock offset."""

    def __init__(self, interval: float) -> None:
        self.limit = max(LAG_SAY, 3 * interval)
        self.said = False
        self._since: float | None = None
        self._reconnects = 0

    def check(self, last_tick: float, clock: ClockOffset | None, reconnects: int, now: float,
              monotonic: float) -> str:
        """A message the first time the lag has stayed past the limit for LAG_SAY seconds, else ""."""
        if self.said or clock is None:
            return ""
        lag = now + clock.offset - last_tick
        if lag <= self.limit or reconnects != self._reconnects:
            self._since, self._reconnects = None, reconnects
            return ""
        if self._since is None:
            self._since = monotonic
            return ""
        if monotonic - self._since < LAG_SAY:
            return ""
        self.said = True
        return (f"the link is the bottleneck: telemetry arrives {lag:.0f} s after the host took it (the link "
                "carries less than the host writes); the measurement is not affected, the host keeps every tick "
                "and ends a timed monitor itself; only the live view lags")
