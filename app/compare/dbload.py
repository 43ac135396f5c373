"""Database load runs side by side: one line per server over a shared time axis (throughput, each operation's
p99) and each server's sweep curve (ops/s by clients, the knee marked). Qt-free; the Compare tab, the PDF and
the results window read the same curves.

The time axis is seconds since the run's first step began, its steps laid one after the other as the agent
ran them (app.summary.dbload_series), so two servers that ran the same sweep line up step by step.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.compare.overlay import AlignedSeries
from app.summary.dbload_series import DBLOAD, dbload_of
from app.summary.load_curves import DbLoadRun, curves_of

__all__ = ["OPS_OVERLAY", "P99_OVERLAY", "DbLoadRun", "curves_of", "dbload_runs", "overlays_of"]

OPS_OVERLAY = "dbload.ops"
P99_OVERLAY = "dbload.p99."     # + the operation


def dbload_runs(comparison: Any, results: Mapping[int, Sequence[Any]]) -> list[DbLoadRun]:
    """The dbload run of each row of a comparison that has one, with its stored steps."""
    out = []
    for row in comparison.rows:
        for run in row.runs:
            if run.test != DBLOAD or run.id not in results:
                continue
            load = dbload_of(results[run.id])
            if load is not None:
                label = row.label if len(row.runs) == 1 else f"{row.label} ({run.test})"
                out.append(DbLoadRun(label, run.id, load))
    return out


def overlays_of(runs: Sequence[DbLoadRun]) -> list[tuple[str, str, str, list[AlignedSeries]]]:
    """(name, title, unit, one series per server) for the throughput and for each operation's p99."""
    out: list[tuple[str, str, str, list[AlignedSeries]]] = []
    totals = []
    for run in runs:
        xs, ys = run.load.throughput_line()
        if xs:
            totals.append(AlignedSeries(run.label, run.run_id, OPS_OVERLAY, "", "ops/s", xs, ys))
    if totals:
        out.append((OPS_OVERLAY, "Operations per second (all operations)", "ops/s", totals))
    ops = sorted({op for run in runs for op in run.load.ops},
                 key=lambda op: [o for run in runs for o in run.load.ops].index(op))
    for op in ops:
        found = []
        for run in runs:
            xs, ys = run.load.p99_line(op)
            if xs:
                found.append(AlignedSeries(run.label, run.run_id, P99_OVERLAY + op, "", "ms", xs, ys))
        if found:
            out.append((P99_OVERLAY + op, f"p99 latency per second, {op}", "ms", found))
    return out
