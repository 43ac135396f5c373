"""What the comparison views read of a comparison, and the telemetry choices app hands them.

app.compare owns the comparison; these Protocols name exactly what the table, the bar charts and
the overlay read (read-only properties, so app's frozen dataclasses fit them as they are).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from widgets.host_colours import colours_by_host


class CaveatView(Protocol):
    @property
    def tag(self) -> str: ...      # short, beside the number
    @property
    def text(self) -> str: ...     # the whole sentence


class MetricView(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def test(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def higher_is_better(self) -> bool: ...
    def header(self) -> str: ...   # "Random read 4 KiB (IOPS)"


class CellView(Protocol):
    @property
    def value(self) -> float | None: ...
    @property
    def text(self) -> str: ...
    @property
    def note(self) -> str: ...
    @property
    def best(self) -> bool: ...
    @property
    def caveats(self) -> Sequence[CaveatView]: ...
    @property
    def tags(self) -> str: ...
    @property
    def ratio_text(self) -> str: ...


class RowView(Protocol):
    @property
    def label(self) -> str: ...
    @property
    def spec(self) -> str: ...
    @property
    def baseline(self) -> bool: ...
    @property
    def cells(self) -> Mapping[str, CellView]: ...
    @property
    def tests(self) -> tuple[str, ...]: ...
    @property
    def run_ids(self) -> tuple[int, ...]: ...


class ComparisonData(Protocol):
    """A whole comparison (the widget that shows it is widgets.compare_view.ComparisonView)."""

    @property
    def rows(self) -> Sequence[RowView]: ...
    @property
    def metrics(self) -> Sequence[MetricView]: ...
    @property
    def baseline(self) -> RowView | None: ...
    @property
    def tests(self) -> tuple[str, ...]: ...
    def column(self, key: str) -> Sequence[tuple[RowView, CellView]]: ...
    def test_label(self, test: str) -> str: ...    # "disk" -> "Disk"
    def winners(self) -> list[str]: ...
    def summary(self) -> str: ...
    def caveat_lines(self) -> list[str]: ...
    def settle_lines(self) -> list[str]: ...   # each can't tell yet with what would settle it
    def price_lines(self) -> list[str]: ...    # "db-1: 120 €/month (as of 2026-11-01; source: …)"


class SeriesView(Protocol):
    """One run's telemetry curve, aligned on its test's start (t = 0)."""

    @property
    def label(self) -> str: ...
    @property
    def run_id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def t(self) -> Sequence[float]: ...
    @property
    def values(self) -> Sequence[float]: ...


def row_colours(rows: Sequence[RowView]) -> dict[str, str]:
    """Each row's colour: its host's (widgets.host_colours), so a server looks the same in every view."""
    return colours_by_host({row.label: str(getattr(row, "host", "") or row.label) for row in rows})


@dataclass(frozen=True)
class OverlayChoice:
    """A telemetry the overlay can draw: its series name ("disk.util"), the picker's text and its unit."""

    name: str
    title: str
    unit: str
