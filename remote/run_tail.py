"""Tailing the files a detached run writes: byte offsets, partial lines and ticks, duplicates.

The offset only ever moves by the bytes actually received, and what is incomplete stays buffered
here, so after a dropped connection reading again from `offset` neither loses nor repeats anything.
Sequence numbers (events) and the host's uptime (ticks) catch what slips through anyway.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Protocol

from remote.errors import RemoteCommandError
from remote.telemetry.sample import TelemetrySample
from remote.transport import Transport

READ_LIMIT = 4 * 1024 * 1024  # bytes per read: a long outage is caught up over a few polls


class SnapshotParser(Protocol):
    bad_ticks: int

    def feed(self, data: bytes) -> list: ...


class SampleComputer(Protocol):
    def add(self, snapshot: Any) -> TelemetrySample | None: ...


def is_missing_file(exc: BaseException) -> bool:
    """A file that is not there (yet): SSH raises FileNotFoundError, the local transport says so."""
    if isinstance(exc, FileNotFoundError):
        return True
    return isinstance(exc, RemoteCommandError) and "no such file" in str(exc).lower()


def workbench_event(event_type: str, **data: Any) -> dict[str, Any]:
    """An event the workbench adds to the run's record (seq None: not the agent's)."""
    return {"seq": None, "t": time.time(), "type": event_type, **data}


class Tail:
    """One growing remote file read from `offset` on."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0

    def read(self, transport: Transport, limit: int = READ_LIMIT) -> bytes:
        """New bytes since the last read (b"" while the file does not exist yet)."""
        try:
            data = transport.get_bytes(self.path, self.offset, limit)
        except RemoteCommandError as exc:
            if is_missing_file(exc):
                return b""
            raise
        except FileNotFoundError:
            return b""
        self.offset += len(data)
        return data


class EventTail(Tail):
    """events.jsonl: whole lines only, each event once, in seq order."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._partial = b""
        self.last_seq = 0
        self.duplicates = 0
        self.problems: list[dict[str, Any]] = []   # workbench events about what went wrong

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()  # no trailing newline yet: wait for the rest
        events = []
        for raw in lines:
            if not raw.strip():
                continue
            try:
                event = json.loads(raw.decode("utf-8"))
            except ValueError:
                self.problems.append(workbench_event("warning", message=f"unreadable event line: {raw[:80]!r}"))
                continue
            if not isinstance(event, dict) or not isinstance(event.get("seq"), int):
                self.problems.append(workbench_event("warning", message=f"event without seq: {raw[:80]!r}"))
                continue
            seq = event["seq"]
            if seq <= self.last_seq:
                self.duplicates += 1
                continue
            if seq != self.last_seq + 1:
                self.problems.append(workbench_event(
                    "warning", message=f"events {self.last_seq + 1}..{seq - 1} are missing"))
            self.last_seq = seq
            events.append(event)
        return events


def tick_key(snapshot: Any) -> float | None:
    """What orders ticks: the sampler's tick number when it has one, else the host's uptime."""
    for name in ("seq", "uptime"):
        value = getattr(snapshot, name, None)
        if isinstance(value, (int, float)):
            return float(value)
    return None


class SampleTail(Tail):
    """samples.raw: complete ticks to snapshots (the parser keeps partial ones) to samples."""

    def __init__(self, path: str, parser: SnapshotParser, computer: SampleComputer) -> None:
        super().__init__(path)
        self.parser = parser
        self.computer = computer
        self.ticks = 0            # complete ticks taken (duplicates excluded)
        self.duplicates = 0
        self.last_key: float | None = None
        self.first_snapshot: Any = None

    @property
    def bad_ticks(self) -> int:
        return int(getattr(self.parser, "bad_ticks", 0))

    def feed(self, data: bytes) -> list[TelemetrySample]:
        samples = []
        for snapshot in self.parser.feed(data):
            key = tick_key(snapshot)
            if key is not None and self.last_key is not None and key <= self.last_key:
                self.duplicates += 1
                continue
            self.last_key = key if key is not None else self.last_key
            self.ticks += 1
            if self.first_snapshot is None:
                self.first_snapshot = snapshot
            sample = self.computer.add(snapshot)
            if sample is not None:
                samples.append(sample)
        return samples


def backoff_delays(first: float = 0.5, factor: float = 2.0, cap: float = 10.0) -> Callable[[], float]:
    """0.5, 1, 2, 4, 8, 10, 10 ... seconds: one call per failed attempt."""
    state = {"next": first}

    def delay() -> float:
        current = state["next"]
        state["next"] = min(current * factor, cap)
        return current

    return delay
