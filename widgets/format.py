"""Human-readable numbers for the UI: sizes, durations, frequencies, timestamps. Pure functions.

Qt-free on purpose: app's command line, report and facts lines format with the same functions
(passing their own `missing=` text), so a figure reads the same everywhere.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_DECIMAL_UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "EB")

NOT_AVAILABLE = "—"


def number(value: float | None, decimals: int | None = None, missing: str = NOT_AVAILABLE) -> str:
    """Thousands separated; by default three significant figures or so: 12,345 / 512 / 48.2 / 1.27 / 0.083.

    decimals: a fixed number of decimals instead; missing: the text for None (and NaN).
    """
    if value is None or math.isnan(value):
        return missing
    if decimals is None:
        size = abs(value)
        decimals = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else 3
    return f"{value:,.{decimals}f}"


def human_bytes(value: int | float | None, *, binary: bool = True, precision: int = 1,
                missing: str = NOT_AVAILABLE) -> str:
    """24_000_000_000 -> "22.4 GiB" (binary, like free -h) or "24.0 GB" (decimal, like disk labels)."""
    if value is None:
        return missing
    step = 1024.0 if binary else 1000.0
    units = _BINARY_UNITS if binary else _DECIMAL_UNITS
    size = float(value)
    sign = "-" if size < 0 else ""
    size = abs(size)
    unit = 0
    while size >= step and unit < len(units) - 1:
        size /= step
        unit += 1
    if unit == 0:
        return f"{sign}{int(size)} B"
    text = f"{size:.{precision}f}"
    # 1023.96 KiB rounds to "1024.0 KiB": move to the next unit instead
    if float(text) >= step and unit < len(units) - 1:
        size /= step
        unit += 1
        text = f"{size:.{precision}f}"
    return f"{sign}{text} {units[unit]}"


def disk_size(value: int | None) -> str:
    """A disk's size as vendors print it on the box (decimal) with the binary size next to it."""
    if value is None:
        return NOT_AVAILABLE
    if value < 1000:
        return human_bytes(value)
    return f"{human_bytes(value, binary=False)} ({human_bytes(value)})"


def human_duration(seconds: float | timedelta | None) -> str:
    """0.42 -> "420 ms", 75 -> "1 min 15 s", 5349 -> "1 h 29 min", 190000 -> "2 d 4 h"."""
    if seconds is None:
        return NOT_AVAILABLE
    if isinstance(seconds, timedelta):
        seconds = seconds.total_seconds()
    if seconds < 0:
        return "-" + human_duration(-seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    total = int(round(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def human_mhz(mhz: float | None) -> str:
    """2394.5 -> "2.39 GHz", 800 -> "800 MHz"."""
    if mhz is None:
        return NOT_AVAILABLE
    if mhz >= 1000:
        return f"{mhz / 1000:.2f} GHz"
    return f"{mhz:.0f} MHz"


def parse_timestamp(value: str | datetime | None) -> datetime | None:
    """An ISO-8601 string (the agent's "collected_at", with or without "Z") as an aware datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if moment.tzinfo is None:
        # the store keeps naive UTC timestamps
        moment = moment.replace(tzinfo=timezone.utc)
    return moment


def local_time(value: str | datetime | None) -> str:
    """A timestamp in the user's local time zone, to the second: "2024-05-02 14:03:11"."""
    moment = parse_timestamp(value)
    if moment is None:
        return NOT_AVAILABLE
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def time_ago(value: str | datetime | None, now: datetime | None = None) -> str:
    """How long ago, roughly: "just now", "5 min ago", "3 h ago", "2 d ago"."""
    moment = parse_timestamp(value)
    if moment is None:
        return NOT_AVAILABLE
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    seconds = (now - moment).total_seconds()
    if seconds < 0:
        return "in the future"
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"


def plural(count: int, word: str, words: str | None = None) -> str:
    """plural(1, "socket") -> "1 socket"; plural(2, "core") -> "2 cores"."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def workers_text(workers: object) -> str:
    """ "1 worker", "16 workers"; a count that is not a number (absent, from an odd document) reads "? workers"."""
    try:
        count = int(workers)   # type: ignore[call-overload]
    except (TypeError, ValueError):
        return "? workers"
    return plural(count, "worker")


def one_line(text: str, limit: int = 200) -> str:
    """The first non-empty line of a message, shortened for a status bar."""
    for line in str(text).splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""
