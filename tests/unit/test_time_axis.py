"""How the live charts' time axis reads a moment: the host's clock, or the time since the start."""
from __future__ import annotations

import math
from datetime import datetime

import pytest

pytest.importorskip("pyqtgraph")

from widgets.time_axis import format_clock, format_elapsed, usable_origin  # noqa: E402


def test_elapsed_time_reads_minutes_then_hours() -> None:
    assert format_elapsed(65) == "1:05"
    assert format_elapsed(20 * 60) == "20:00"
    assert format_elapsed(3723) == "1:02:03"
    assert format_elapsed(-5) == "-0:05"


def test_clock_reads_the_local_time_of_day() -> None:
    moment = 1_700_000_000.0
    assert format_clock(moment) == datetime.fromtimestamp(moment).strftime("%H:%M:%S")


@pytest.mark.parametrize("origin", [None, 0.0, 12.5, math.nan, math.inf, 1e15, -1e9])
def test_a_start_that_is_no_clock_reading_falls_back_to_elapsed_time(origin: float | None) -> None:
    assert usable_origin(origin) is None
    assert format_clock(1e20) == ""    # never an exception while painting an axis


def test_a_real_start_is_kept() -> None:
    assert usable_origin(1_700_000_000.0) == 1_700_000_000.0
