"""Plain, immutable data that crosses threads; ORM objects never leave a session."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

RUN_RUNNING = "running"
RUN_DONE = "done"
RUN_FAILED = "failed"
RUN_CANCELLED = "cancelled"
RUN_INTERRUPTED = "interrupted"   # its workbench went away and the host no longer had the run to collect
RUN_STATUSES = (RUN_RUNNING, RUN_DONE, RUN_FAILED, RUN_CANCELLED, RUN_INTERRUPTED)
FINAL_STATUSES = (RUN_DONE, RUN_FAILED, RUN_CANCELLED, RUN_INTERRUPTED)


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
class RunOwner:
    """Which workbench process drives a running run: it holds an flock on `lock` while it does."""

    machine: str   # socket.gethostname() of the workbench
    pid: int
    lock: str      # the lock file's path on that machine


@dataclass(frozen=True)
class RemoteRunState:
    """What a workbench needs to find a run again on its host after the workbench itself went away."""

    run_dir: str
    agent_pid: int | None = None
    deadline: float = 0.0          # host uptime (s) at which the host side removes the run by itself
    expected_end: float = 0.0      # host uptime (s) at which the test should be over
    interval: float = 1.0
    # No read offsets: nothing read from the run's files is stored before the run ends, so a re-attach
    # reads events.jsonl and samples.raw again from offset 0, and no sample is stored twice or missed.


@dataclass(frozen=True)
class AttachableRun:
    """A run stored as running, with what is known of where it runs and who drives it."""

    id: int
    uid: str
    host_name: str
    test: str
    parameters: dict[str, Any]
    started_at: datetime
    remote: RemoteRunState | None
    owner: RunOwner | None


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
