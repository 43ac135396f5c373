"""A stored database-load run as the charts draw it (widgets.dbload_data): exactly its per-second lists."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.summary.dbload_series import DbLoad, dbload_of
from widgets.dbload_data import DbLoadCurves, DbLoadSweep


@dataclass(frozen=True)
class DbLoadRun:
    label: str          # the comparison row (or the host, in the results window)
    run_id: int
    load: DbLoad


def curves_of(run: DbLoadRun) -> DbLoadCurves:
    """What the charts draw of one run: exactly the stored per-second lists, on the run's time line."""
    load = run.load
    ops = load.ops
    best = load.best
    knee = load.knee_step
    return DbLoadCurves(
        label=run.label, run_id=run.run_id, engine=load.engine, workload=load.workload,
        throughput=load.throughput_line(), by_op={op: load.throughput_line(op) for op in ops
                                                  if any(op in s.by_op for s in load.steps)},
        p99={op: load.p99_line(op) for op in ops if any(op in s.p99_per_second for s in load.steps)},
        steps=tuple(load.step_starts()),
        sweep=DbLoadSweep(tuple(s.clients for s in load.steps), tuple(s.ops for s in load.steps),
                          knee.clients if knee is not None else None, load.knee_text()),
        best=best.label if best is not None else "")


def run_curves(label: str, run_id: int, results: Sequence[Any]) -> DbLoadCurves | None:
    """A stored run's curves (None when it holds no database load step)."""
    load = dbload_of(results)
    return curves_of(DbLoadRun(label, run_id, load)) if load is not None else None
