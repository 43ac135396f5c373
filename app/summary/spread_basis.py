"""Figures whose spread can come from repeats only, and how the views say so.

A restore is one timed operation: its figures are the seconds from the first pg_restore call to the last
index built (or from the first file extracted to the end of sync). The rate inside it is not steady (tables,
then the data load, then index builds; extraction, then one sync), so per-interval rates would describe the
phases, not how much the figure varies by chance. Such a figure has no spread within its run; repeating
the test gives it one. Until then the views say so beside the figure, rather than show it bare as if exact.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.summary.base import result_field
from app.summary.spread_text import spread_of_result
from storage.records import Spread

FROM_REPEATS_ONLY = "spread: from repeats only"
ONE_OPERATION_TESTS = frozenset({"restore"})


def from_repeats_only(test: str, spread: Spread | None) -> bool:
    """A figure of a one-operation test that has no measured spread (a single run)."""
    return test in ONE_OPERATION_TESTS and (spread is None or spread.n < 2)


def repeats_only_line(results: Iterable[Any], test: str) -> str:
    """The results view's line for such a test: what the figures lack and how to get it; "" otherwise."""
    mine = [r for r in results if result_field(r, "test") == test]
    if not mine or test not in ONE_OPERATION_TESTS:
        return ""
    if not all(from_repeats_only(test, spread_of_result(r)) for r in mine):
        return ""
    return (f"{FROM_REPEATS_ONLY[0].upper()}{FROM_REPEATS_ONLY[1:]}: a {test} is one timed operation with no "
            "steady per-interval rate; repeat the test (Repeat in the run dialog, --repeat 3) to see how much "
            "its times vary")
