"""The time axis of the live charts: the host's wall clock (HH:MM:SS) or the time since the run started.

x is seconds since the run start on that host; `origin` is that start in epoch seconds of the host's
clock. Without an origin (a stored run without one) the axis shows elapsed time.
"""
from __future__ import annotations

import math
from datetime import datetime

import pyqtgraph as pg

CLOCK = "clock"
ELAPSED = "elapsed"
_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
_MIN_EPOCH = 1e9          # before 2001: not a clock reading, only seconds since the start
_MAX_EPOCH = 32503680000.0  # the year 3000: past it, a clock gone wrong
TICK_PX = 62              # about one labelled tick per 62 px (HH:MM:SS is ~50 px wide)


def format_elapsed(seconds: float, with_hours: bool = False) -> str:
    """1:05 for 65 s, 1:02:03 past an hour; negative times (before the start) get a minus."""
    sign = "-" if seconds < 0 else ""
    total = int(round(abs(seconds)))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours or with_hours:
        return f"{sign}{hours}:{minutes:02d}:{secs:02d}"
    return f"{sign}{minutes}:{secs:02d}"


def format_clock(epoch: float) -> str:
    """HH:MM:SS in the local time zone ("" for a moment no clock can show)."""
    try:
        return datetime.fromtimestamp(epoch).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def usable_origin(origin: float | None) -> float | None:
    """The run start as a clock reading, or None when it is not one (a host clock gone wild, no start)."""
    if origin is None or not math.isfinite(origin) or not _MIN_EPOCH <= origin < _MAX_EPOCH:
        return None
    return origin


def _utc_offset(epoch: float) -> float:
    try:
        offset = datetime.fromtimestamp(epoch).astimezone().utcoffset()
    except (OverflowError, OSError, ValueError):
        return 0.0
    return offset.total_seconds() if offset is not None else 0.0


class TimeAxis(pg.AxisItem):
    """Ticks at round times: whole clock minutes in clock mode, whole minutes since the start in elapsed."""

    def __init__(self, orientation: str = "bottom", **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        # seconds are never "ks": no SI prefix (it also re-rendered the axis label at every scroll step)
        self.enableAutoSIPrefix(False)
        self.mode = CLOCK
        self.origin: float | None = None

    def set_time(self, mode: str, origin: float | None) -> None:
        origin = usable_origin(origin)
        if (mode, origin) != (self.mode, self.origin):
            self.mode, self.origin = mode, origin
            self.picture = None
            self.update()

    @property
    def shows_clock(self) -> bool:
        return self.mode == CLOCK and self.origin is not None

    def format_x(self, x: float) -> str:
        """How a moment reads on this axis, with the other reading in brackets (for tooltips)."""
        elapsed = format_elapsed(x)
        if self.origin is None:
            return elapsed
        clock = format_clock(self.origin + x)
        return f"{clock} (+{elapsed})" if self.mode == CLOCK else f"+{elapsed} ({clock})"

    def format_tick(self, x: float) -> str:
        """How a moment reads on this axis: 14:03:11, or 2:15 since the start."""
        if self.shows_clock and self.origin is not None:
            return format_clock(self.origin + x)
        return format_elapsed(x)

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = abs(maxVal - minVal)
        if span == 0 or size <= 0:
            return []
        most = max(2.0, size / TICK_PX)
        major = next((s for s in _TIME_STEPS if span / s <= most), _TIME_STEPS[-1] * math.ceil(span / most / 86400))
        minors = [s for s in _TIME_STEPS if s < major and major % s == 0 and major / s <= 6]
        return [(float(major), 0.0)] + ([(float(minors[-1]), 0.0)] if minors else [])

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        low, high = sorted((minVal, maxVal))
        # clock ticks fall on round local times (14:05:00), not on round seconds since the start
        shift = 0.0
        if self.shows_clock and self.origin is not None:
            shift = self.origin + _utc_offset(self.origin)
        ticks: list[tuple[float, list[float]]] = []
        taken: set[float] = set()
        for spacing, _offset in self.tickSpacing(low, high, size):
            first = math.ceil((low + shift) / spacing) * spacing - shift
            values = []
            value = first
            while value <= high + 1e-9 and len(values) < 1000:
                key = round(value, 6)
                if key not in taken:
                    values.append(value)
                    taken.add(key)
                value += spacing
            ticks.append((spacing, values))
        return ticks

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if self.shows_clock and self.origin is not None:
            return [format_clock(self.origin + v * scale) for v in values]
        hours = any(abs(v) >= 3600 for v in values)
        return [format_elapsed(v * scale, hours) for v in values]
