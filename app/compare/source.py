"""What loading a comparison reads of the stored runs: the Workbench provides it (tests may pass their own)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from storage.records import RunDetail, SeriesData


class RunSource(Protocol):
    def run_detail(self, run_id: int) -> RunDetail:
        """The run with its facts and results; NotFound when there is none."""
        ...

    def run_events(self, run_id: int) -> list[dict[str, Any]]: ...

    def run_series(self, run_id: int, names: Iterable[tuple[str, str]] | None = None) -> list[SeriesData]: ...

    def latest_facts(self, name: str) -> dict | None:
        """The host's latest stored facts (a run without facts of its own is shown with them)."""
        ...
