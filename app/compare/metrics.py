"""The figures a comparison puts side by side: which result each column reads and which way is better.

A column is one stored result ("disk" / "randread_4k.iops") or one derived figure (the best point of the
disk concurrency sweep). Columns of a test none of the compared runs has are left out of the table.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.summary.run import SWEEP_JOB, result_field

HIGHER, LOWER = "higher", "lower"


@dataclass(frozen=True)
class Metric:
    key: str            # "disk:randread_4k.iops": test, a colon, the stored metric name
    test: str
    label: str          # what a reader calls it, without the unit
    unit: str
    better: str         # HIGHER or LOWER
    headline: bool = False   # the figure that decides "the winner" of its test in the summary

    @property
    def metric(self) -> str:
        return self.key.partition(":")[2]

    def header(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


SWEEP_BEST = "sweep_best.iops"   # derived: the highest IOPS of the concurrency sweep

METRICS: tuple[Metric, ...] = (
    Metric("disk:randread_4k.iops", "disk", "Random read 4 KiB", "IOPS", HIGHER, headline=True),
    Metric("disk:" + SWEEP_BEST, "disk", "Random read 4 KiB, best of sweep", "IOPS", HIGHER),
    Metric("disk:randread_4k.lat_p99", "disk", "Random read 4 KiB p99", "ms", LOWER),
    Metric("disk:randread_1m.mbps", "disk", "Random read 1 MiB", "MB/s", HIGHER),
    Metric("disk:seqread_1m.mbps", "disk", "Sequential read", "MB/s", HIGHER),
    Metric("disk:seqwrite_1m.mbps", "disk", "Sequential write", "MB/s", HIGHER),
    Metric("disk:syncwrite_4k.iops", "disk", "Sync write 4 KiB", "IOPS", HIGHER, headline=True),
    Metric("disk:syncwrite_4k.lat_p99", "disk", "Sync write 4 KiB p99", "ms", LOWER),
    Metric("disk:syncwrite_1m.mbps", "disk", "Sync write 1 MiB", "MB/s", HIGHER),
    Metric("cpu:single", "cpu", "CPU single core", "ops/s", HIGHER),
    Metric("cpu:multi", "cpu", "CPU all cores", "ops/s", HIGHER, headline=True),
    Metric("mailstorm:accepted_per_s", "mailstorm", "Mail storm accepted", "msg/s", HIGHER, headline=True),
    Metric("mailstorm:data_p99", "mailstorm", "End of DATA p99", "ms", LOWER),
    Metric("mailstorm:drain_s", "mailstorm", "Queue drain", "s", LOWER),
    Metric("restore:restore_j1.total_s", "restore", "Restore -j 1", "s", LOWER),
    Metric("restore:restore_jN.total_s", "restore", "Restore -j N", "s", LOWER, headline=True),
    Metric("restore:file_restore.total_s", "restore", "File-level restore", "s", LOWER, headline=True),
)
TEST_LABELS = {"disk": "Disk", "cpu": "CPU", "mailstorm": "Mail storm", "restore": "Restore", "idle": "Idle",
               "monitor": "Monitor"}


def metric(key: str) -> Metric:
    for item in METRICS:
        if item.key == key:
            return item
    raise KeyError(f"no comparison metric {key!r}")



@dataclass(frozen=True)
class Figure:
    """One value of one run, with the metadata of the result it came from (caveats read it)."""

    value: float
    metadata: dict[str, Any]
    note: str = ""      # e.g. "16 workers" for the best sweep point


def figures(results: Iterable[Any]) -> dict[str, Figure]:
    """metric key -> Figure for every comparison metric the results hold."""
    stored: dict[str, Figure] = {}
    sweep: list[tuple[float, int, dict[str, Any]]] = []
    for result in results:
        test, name = str(result_field(result, "test") or ""), str(result_field(result, "metric") or "")
        value, meta = result_field(result, "value"), dict(result_field(result, "metadata") or {})
        if value is None:
            continue
        stored[f"{test}:{name}"] = Figure(float(value), meta)
        job, _, quantity = name.partition(".")
        match = SWEEP_JOB.match(job)
        if test == "disk" and match and quantity == "iops":
            sweep.append((float(value), int(match["workers"]), meta))
    out = {m.key: stored[m.key] for m in METRICS if m.key in stored}
    if sweep:
        value, workers, meta = max(sweep, key=lambda point: point[0])
        out["disk:" + SWEEP_BEST] = Figure(value, meta, f"{workers} worker{'s' if workers != 1 else ''}")
    return out
