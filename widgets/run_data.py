"""What the run views read of a run: the states they show, and read-only views of stored runs.

The store owns the records; these Protocols name only the attributes the widgets read, so the
store's dataclasses fit them as they are and nothing is copied on the way.
"""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import Enum
from typing import Protocol


class RunState(str, Enum):
    """A run as a view shows it; equal to the plain text the engine and the store use, and printed as it."""

    CONNECTING = "connecting"
    RUNNING = "running"
    RECONNECTING = "reconnecting"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"   # its workbench died and the host had removed the run
    LOST_LINK = "lost link"       # the link was given up while the run went on: collected later
    ERROR = "error"
    STOPPED = "stopped"

    # enum.StrEnum does this from Python 3.11 on; Benchbay also runs on 3.10
    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class RunRow(Protocol):
    """One stored run, as the runs table, the picker and the note editor read it."""

    @property
    def id(self) -> int: ...
    @property
    def host_name(self) -> str: ...
    @property
    def test(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def finished_at(self) -> datetime | None: ...
    @property
    def error(self) -> str: ...
    @property
    def tags(self) -> Sequence[str]: ...
    @property
    def notes(self) -> str: ...


class RunEnd(Protocol):
    """How a run ended, as the progress rows read it."""

    @property
    def status(self) -> str: ...
    @property
    def error(self) -> str: ...
    @property
    def run_id(self) -> int | None: ...


class SavedComparisonRow(Protocol):
    """One saved comparison, as the dialog that reopens it lists it."""

    @property
    def id(self) -> int: ...
    @property
    def title(self) -> str: ...
    @property
    def customer(self) -> str: ...
    @property
    def author(self) -> str: ...
    @property
    def notes(self) -> str: ...
    @property
    def run_uids(self) -> Sequence[str]: ...
    @property
    def updated_at(self) -> datetime: ...
