"""A database load's live seconds as ring buffers (Qt-free): what widgets.dbload_live draws.

Each "dbload_tick" event (one per second of a step) becomes points at x (the end of that second on the host's
time axis): "ops.<op>", "ops.total", "p99.<op>", "p99.max" (the slowest operation), "errors", "retries".
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from widgets.ring_buffer import RingBuffer

TICK = "dbload_tick"
TOTAL = "total"
TXN = "txn"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


class DbLoadSeries:
    """One host's load ticks as (x, value) buffers: "ops.<op>", "ops.total", "p99.<op>", "errors", "retries"."""

    def __init__(self, capacity: int | None = None) -> None:
        self._capacity = capacity
        self.buffers: dict[str, RingBuffer] = {}
        self.ops: list[str] = []            # in the order they first came
        self.step: int | None = None
        self.clients: int | None = None
        self.second = 0
        self.total_steps: int | None = None   # from the run's clients list, when the workbench knows it
        self.engine = ""
        self.errors = 0.0
        self.ticks = 0
        self.version = 0                     # grows when a new operation appears (the panel adds curves)

    def buffer(self, key: str) -> RingBuffer:
        if key not in self.buffers:
            self.buffers[key] = RingBuffer(self._capacity) if self._capacity else RingBuffer()
        return self.buffers[key]

    def add_tick(self, event: Mapping[str, Any], x: float) -> None:
        """One second of a step, drawn at x (its end on the host's time axis)."""
        ops = event.get("ops") if isinstance(event.get("ops"), Mapping) else {}
        lat = event.get("lat_ms") if isinstance(event.get("lat_ms"), Mapping) else {}
        total = 0.0
        for op, count in ops.items():
            value = _number(count)
            if value is None:
                continue
            self._know(str(op))
            self.buffer(f"ops.{op}").append(x, value)
            total += value
        # "txn" is the tool's own count of whole transactions (pgbench, sysbench): the others are the queries
        # inside them, so the total is the transactions, as the stored figure counts it
        txn = _number(ops.get(TXN))
        self.buffer(f"ops.{TOTAL}").append(x, txn if txn is not None else total)
        slowest = None
        for op, figures in lat.items():
            p99 = _number(figures.get("p99")) if isinstance(figures, Mapping) else None
            if p99 is not None:
                self._know(str(op))
                if not len(self.buffer(f"p99.{op}")):
                    self.version += 1     # its first p99: the panel adds the curve
                self.buffer(f"p99.{op}").append(x, p99)
                slowest = p99 if slowest is None else max(slowest, p99)
        if slowest is not None:
            self.buffer("p99.max").append(x, slowest)
        errors = _number(event.get("errors")) or 0.0
        self.buffer("errors").append(x, errors)
        self.buffer("retries").append(x, _number(event.get("retries")) or 0.0)
        self.errors += errors
        step, clients, second = event.get("step"), event.get("clients"), event.get("second")
        self.step = int(step) if isinstance(step, int) else self.step
        self.clients = int(clients) if isinstance(clients, int) else self.clients
        self.second = int(second) if isinstance(second, int) else self.second
        self.engine = str(event.get("engine") or self.engine)
        self.ticks += 1

    @property
    def active(self) -> bool:
        """The host runs a database load: its first second came (a plan alone may be another test's)."""
        return self.ticks > 0

    def _know(self, op: str) -> None:
        if op not in self.ops:
            self.ops.append(op)
            self.version += 1

    def step_text(self) -> str:
        """ "8 clients, step 4 of 6, second 7" (the agent numbers its steps from 1)."""
        if self.step is None:
            return "waiting for the first second"
        who = f"{self.clients} client{'s' if self.clients != 1 else ''}" if self.clients is not None else "step"
        of = f" of {self.total_steps}" if self.total_steps else ""
        return f"{who}, step {self.step}{of}, second {self.second}"

    def take_plan(self, event: Mapping[str, Any]) -> bool:
        """The run's plan names its steps ("step1" ... "stepN"): how many there are; True when it said."""
        phases = event.get("phases") if isinstance(event.get("phases"), list) else []
        steps = [p for p in phases if isinstance(p, Mapping) and str(p.get("phase") or "").startswith("step")]
        if steps:
            self.total_steps = len(steps)
        return bool(steps)

    def now_text(self) -> str:
        """The newest second: total ops/s, each operation's p99, errors so far, the tool."""
        parts = []
        total = self.buffers.get(f"ops.{TOTAL}")
        if total is not None and total.last_value is not None:
            parts.append(f"{total.last_value:,.0f} {'txn' if TXN in self.ops else 'ops'}/s")
        for op in self.ops:
            p99 = self.buffers.get(f"p99.{op}")
            if p99 is not None and p99.last_value is not None:
                parts.append(f"p99 {op} {p99.last_value:,.1f} ms")
        parts.append(f"{self.errors:,.0f} error{'s' if self.errors != 1 else ''}")
        if self.engine:
            parts.append(self.engine)
        return " · ".join(parts)
