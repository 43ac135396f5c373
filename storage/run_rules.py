"""What a stored run may hold, whichever door it comes in by: written by the run engine from what the
agent sent, or imported from a run document. One set of rules, so an import cannot store what a run
never could (and `runs show` never prints `nan ops/s` or a run that ends before it begins)."""
from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

# No run was measured before the Unix epoch; none ends past this (a clock or a file gone wrong).
EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2200, 1, 1, tzinfo=timezone.utc)


def is_finite_number(value: Any) -> bool:
    """A result, a point of a series, an event's time: a real number, not NaN or infinity."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def result_value_problem(value: float) -> str:
    """Why a result's value cannot be stored ("" when it can): NaN is a figure that could not be computed
    (kept, and shown as such); an infinity is no measurement."""
    if math.isinf(value):
        return f"the value {value} is not a measurement"
    return ""


def text_problem(value: str) -> str:
    """Why text cannot be stored ("" when it can): PostgreSQL keeps no NUL, and none belongs in a run."""
    if "\x00" in value:
        return "holds a NUL character"
    return ""


def run_host_problem(name: str) -> str:
    """Why a run cannot name this host ("" when it can): the names the inventory ever took (older ones
    too), so no control characters, no padding and not empty."""
    if not name.strip():
        return "a run's host name is empty"
    if name != name.strip():
        return f"host name {name!r} has leading or trailing spaces"
    if any(not ch.isprintable() for ch in name):
        return f"host name {name!r} holds a control character"
    return ""


def run_times_problem(started_at: datetime, finished_at: datetime | None) -> str:
    """Why a run's start and end cannot be stored ("" when they can)."""
    for what, stamp in (("started_at", started_at), ("finished_at", finished_at)):
        if stamp is not None and not EARLIEST <= stamp < LATEST:
            return f"{what} {stamp.isoformat()} is not between {EARLIEST.year} and {LATEST.year}"
    if finished_at is not None and finished_at < started_at:
        return f"finished_at {finished_at.isoformat()} is before started_at {started_at.isoformat()}"
    return ""


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Tags as the user means them: trimmed, no empty ones, each once, in the order given."""
    cleaned: dict[str, None] = {}   # a dict keeps the order and finds a repeat at once (100 k tags)
    for tag in tags:
        if not isinstance(tag, str):
            raise ValueError(f"a tag is text, not {type(tag).__name__}")
        tag = tag.strip()
        if tag:
            cleaned.setdefault(tag)
    return list(cleaned)
