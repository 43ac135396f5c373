"""What the database-load charts draw, as plain data handed to them by app (they read nothing else)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

Line = tuple[list[float], list[float]]   # (x: seconds since the first step began, y)


@dataclass(frozen=True)
class DbLoadSweep:
    """Throughput by clients, one point per step, and where the knee is (None: no knee)."""

    clients: tuple[int, ...] = ()
    ops: tuple[float, ...] = ()
    knee_clients: int | None = None
    knee_text: str = ""          # "knee at 8 clients (throughput under 1.1x the previous best)"


@dataclass(frozen=True)
class DbLoadCurves:
    """One run: its per-second totals, per operation, each operation's p99 per second, its steps."""

    label: str
    run_id: int = 0
    engine: str = ""
    workload: str = ""
    throughput: Line = ([], [])
    by_op: Mapping[str, Line] = field(default_factory=dict)
    p99: Mapping[str, Line] = field(default_factory=dict)
    steps: tuple[tuple[float, str], ...] = ()      # (x where the step began, "8 clients")
    sweep: DbLoadSweep = field(default_factory=DbLoadSweep)
    best: str = ""                                 # "8 clients": the step with the highest throughput
