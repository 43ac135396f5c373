"""The sweep curve of each shared-storage total in a comparison: total op/s by step, and its knee (Qt-free)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.report.methodology_shared import SHARED_TEST


@dataclass(frozen=True)
class SweepPoint:
    step: str           # "c2t8"
    clients: int
    threads: int
    ops: float          # total op/s over the step

    @property
    def shape(self) -> str:
        """ "2×8": clients × threads, as the axis reads."""
        return f"{self.clients}×{self.threads}"


@dataclass(frozen=True)
class Sweep:
    label: str                       # the comparison row: the storage system
    run_id: int
    points: tuple[SweepPoint, ...]   # by streams (clients × threads), then clients
    knee: str | None                 # the step where adding clients or threads stopped raising the total


def sweep_of(label: str, run_id: int, results: Sequence[Any]) -> Sweep | None:
    """The sweep of one stored total; None when it has no complete step."""
    points = []
    for result in results:
        meta = result.metadata
        if result.metric.endswith(".ops") and meta.get("total") and meta.get("clients") and meta.get("threads"):
            points.append(SweepPoint(str(meta.get("step") or result.metric.removesuffix(".ops")),
                                     int(meta["clients"]), int(meta["threads"]), float(result.value)))
    if not points:
        return None
    points.sort(key=lambda p: (p.clients * p.threads, p.clients))
    best = next((r.metadata for r in results if r.metric == "sweep.best_ops"), {})
    knee = best.get("knee")
    return Sweep(label, run_id, tuple(points), str(knee) if knee else None)


def sweeps(rows: Sequence[tuple[str, Any]], results: Mapping[int, Sequence[Any]]) -> list[Sweep]:
    """(row label, run) pairs of a comparison -> the sweeps of its shared-storage totals."""
    out = []
    for label, run in rows:
        if run.test == SHARED_TEST and run.id in results:
            found = sweep_of(label, run.id, results[run.id])
            if found is not None:
                out.append(found)
    return out


def step_axis(found: Sequence[Sweep]) -> list[tuple[int, int]]:
    """Every (clients, threads) of the sweeps, in the order of the curve: by streams, then clients."""
    shapes = {(p.clients, p.threads) for sweep in found for p in sweep.points}
    return sorted(shapes, key=lambda s: (s[0] * s[1], s[0]))
