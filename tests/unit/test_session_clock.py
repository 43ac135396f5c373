"""A live session's one time line: where each host's x = 0 lies on its own clock."""
from __future__ import annotations

import pytest

from widgets.session_clock import CLOCK_TOLERANCE_S, SessionClock

T0 = 1_700_000_000.0


def arriving(clock: SessionClock, workbench_time: float) -> None:
    clock.now = lambda: workbench_time


def test_a_host_joining_later_starts_where_its_run_did_on_the_session_line() -> None:
    clock = SessionClock()
    arriving(clock, T0 + 1.3)
    assert clock.origin(T0 + 1.0, 1.0) == T0                 # the first host: its first interval's start
    arriving(clock, T0 + 46.4)
    assert clock.origin(T0 + 46.0, 1.0) == T0                # 45 s later, same clock: x = 46 for its sample


def test_a_clock_hours_off_is_allowed_for_and_a_small_difference_is_not_guessed() -> None:
    clock = SessionClock()
    arriving(clock, T0 + 1.3)
    clock.origin(T0 + 1.0, 1.0)
    arriving(clock, T0 + 30.3)
    # this host's clock reads an hour more: its x = 0 is the session's start on its clock
    assert clock.origin(T0 + 3600.0 + 30.0, 1.0) == pytest.approx(T0 + 3600.0)
    arriving(clock, T0 + 31.3 + CLOCK_TOLERANCE_S / 2)
    assert clock.origin(T0 + 31.0, 1.0) == T0                # a delivery late by seconds is not a clock
    clock.reset()
    arriving(clock, T0 + 100.3)
    assert clock.origin(T0 + 100.0, 0.5) == T0 + 99.5        # a new session: a new start
