"""Plain, immutable data that crosses threads; ORM objects never leave a session."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

RUN_RUNNING = "running"
RUN_DONE = "done"
RUN_FAILED = "failed"
RUN_CANCELLED = "cancelled"
RUN_STATUSES = (RUN_RUNNING, RUN_DONE, RUN_FAILED, RUN_CANCELLED)
FINAL_STATUSES = (RUN_DONE, RUN_FAILED, RUN_CANCELLED)


@dataclass(frozen=True)
class RunRecord:
    id: int
    host_name: str
    test: str
    status: str
    parameters: dict[str, Any]
    started_at: datetime
    finished_at: datetime | None
    agent_version: str
    engine: str
    engine_version: str
    error: str
    tags: tuple[str, ...]
    notes: str
    uid: str = ""   # 32 hex digits, the same in every store the run is exported to; last so old call sites work


@dataclass(frozen=True)
class ResultSample:
    """One measured figure, PerfKit style: (test, metric, value, unit, metadata)."""

    test: str
    metric: str
    value: float
    unit: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SeriesData:
    """A telemetry curve: sysstat-style name, device ("" = host-wide), t in seconds since run start."""

    name: str
    device: str
    unit: str
    t: list[float]
    values: list[float]


@dataclass(frozen=True)
class RunDetail:
    run: RunRecord
    facts: dict[str, Any] | None
    results: list[ResultSample]
    series_names: list[tuple[str, str]]   # (name, device), in the order they were stored


@dataclass(frozen=True)
class SavedComparison:
    """A comparison someone saved to reopen it: runs by uid, in display order."""

    id: int
    title: str
    customer: str
    author: str
    notes: str
    run_uids: tuple[str, ...]
    baseline_uid: str | None
    options: dict[str, Any]
    created_at: datetime
    updated_at: datetime
