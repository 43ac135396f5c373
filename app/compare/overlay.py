"""Telemetry of compared runs on one time axis: t = 0 is where each run's test started.

A run's series count from the start of its telemetry, which begins a moment before the test; the
first phase the agent announced marks the test start. For a disk series the busiest disk of the
run is taken (the one the test used); "cpu.busy" (100 - idle) and "disk.iops" (r/s + w/s) are
derived the way a reader asks for them. A mail storm's accepted messages per second and queue depth
are series of their own (stored from the agent's per-interval accepts and queue polls), so two storms
overlay on one axis too.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.compare.source import RunSource
from storage.records import SeriesData

OVERLAYS: tuple[tuple[str, str, str], ...] = (
    ("disk.util", "%util of the busiest disk", "%"),
    ("disk.iops", "IOPS (r/s + w/s) of the busiest disk", "1/s"),
    ("cpu.busy", "CPU busy (100 - idle)", "%"),
    ("load.1", "Load average, 1 min", ""),
    ("cpu.steal", "CPU steal", "%"),
    ("mail.accepted", "Mail storm: accepted messages per second", "msg/s"),
    ("mail.queue", "Mail storm: queue depth", "messages"),
    # a database load's client: the other curves of a dbload run are its database server's (app.compare.dbload_server)
    ("client.cpu.busy", "Database load: CPU busy of the load client", "%"),
    ("client.load.1", "Database load: load average of the load client", ""),
)
# overlay name -> the stored series it shows, where the two differ (rates: app/engine/result_rates.py)
STORED_AS = {"mail.accepted": "rate.accepted_per_s"}


@dataclass(frozen=True)
class AlignedSeries:
    label: str          # the row label (host, or host and date)
    run_id: int
    name: str
    device: str
    unit: str
    t: list[float]      # seconds since the test started (negative: before it)
    values: list[float]


def _host_time(event: dict[str, Any]) -> float | None:
    """An event's moment on the host's clock, the clock the series count on: its own `host_t` where the
    event keeps the host's time beside a time on another clock, else its `t` (the agent's, the host's)."""
    for key in ("host_t", "t"):
        value = event.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    return None


def start_offset(events: Sequence[dict[str, Any]], span: float | None = None) -> float:
    """Seconds from the series' t = 0 to the first phase start (0 when the run says nothing of either).

    span: the seconds the run's series cover. A test start outside them cannot be on the series' clock
    (an event time on the workbench's clock, a host clock set hours apart): the run is then placed from
    the start of its telemetry rather than hours away from the others."""
    # the series count from the host's t0 (host_t0 where the run also stored t0 on the workbench's clock)
    t0 = next((e.get("host_t0", e.get("t0")) for e in reversed(events) if e.get("type") == "telemetry"
               and isinstance(e.get("host_t0", e.get("t0")), (int, float))), None)
    start = next((t for t in (_host_time(e) for e in events if e.get("type") == "phase_start") if t is not None),
                 None)
    if t0 is None or start is None:
        return 0.0
    shift = start - float(t0)
    if shift < 0.0 or (span is not None and shift > span):
        return 0.0
    return shift


def _busiest(series: Sequence[SeriesData], name: str) -> SeriesData | None:
    candidates = [s for s in series if s.name == name and s.values]
    return max(candidates, key=lambda s: sum(s.values) / len(s.values), default=None)


def pick(series: Sequence[SeriesData], name: str) -> SeriesData | None:
    """One curve of a run by overlay name (see OVERLAYS), derived where needed."""
    if name == "cpu.busy":
        idle = next((s for s in series if s.name == "cpu.idle"), None)
        if idle is None:
            return None
        return SeriesData(name, "", "%", list(idle.t), [max(0.0, 100.0 - v) for v in idle.values])
    if name == "disk.iops":
        util = _busiest(series, "disk.util")
        if util is None:
            return None
        reads = next((s for s in series if s.name == "disk.r/s" and s.device == util.device), None)
        writes = next((s for s in series if s.name == "disk.w/s" and s.device == util.device), None)
        if reads is None or writes is None or len(reads.values) != len(writes.values):
            return None
        return SeriesData(name, util.device, "1/s", list(reads.t),
                          [r + w for r, w in zip(reads.values, writes.values, strict=True)])
    if name.startswith("disk."):
        return _busiest(series, name)
    stored = STORED_AS.get(name, name)
    return next((s for s in series if s.name == stored and not s.device), None)


def aligned(source: RunSource, labelled_runs: Sequence[tuple[str, int]], name: str) -> list[AlignedSeries]:
    """The named curve of each (label, run id) that has it, shifted so each test starts at t = 0."""
    out = []
    for label, run_id in labelled_runs:
        series = source.run_series(run_id)
        curve = pick(series, name)
        if curve is None:
            continue
        shift = start_offset(source.run_events(run_id), max(curve.t, default=0.0))
        out.append(AlignedSeries(label, run_id, name, curve.device, curve.unit,
                                 [t - shift for t in curve.t], list(curve.values)))
    return out


def overlay_runs(comparison: Any, test: str | None = None) -> list[tuple[str, int]]:
    """(row label, run id) per row: its run of the given test, or its first run."""
    out = []
    for row in comparison.rows:
        run = next((r for r in row.runs if test is None or r.test == test), None)
        if run is not None:
            out.append((row.label if test is not None or len(row.runs) == 1 else f"{row.label} ({run.test})",
                        run.id))
    return out
