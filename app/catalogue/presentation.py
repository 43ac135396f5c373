"""The human side of the tests, keyed by the agent's names: labels, job labels, preset summaries and the
figures a comparison shows. app/catalogue/build.py joins it to the agent's description and refuses a
name here that the agent does not define (and an agent job without a label).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue.model import HIGHER, LOWER, MetricSpec

# the run dialog's order and names
MENU_LABELS = {"disk": "Disk", "cpu": "CPU", "idle": "Idle (demo)", "mailstorm": "Mail storm",
               "restore": "Restore (PostgreSQL)", "shared-storage": "Shared storage (many clients)",
               "dns": "DNS resolvers"}
# names in tables, headings and the report ("monitor" is a stored run that is not a test)
TEST_LABELS = {"disk": "Disk", "cpu": "CPU", "mailstorm": "Mail storm", "restore": "Restore", "idle": "Idle",
               "monitor": "Monitor", "shared-storage": "Shared storage", "dns": "DNS"}
# the agent's disk job names (remote/agent/bench_disk.py) as a reader names them, in the order a reader expects
JOB_LABELS = {"randread_4k": "Random read 4 KiB", "randread_1m": "Random read 1 MiB",
              "syncwrite_4k": "Sync write 4 KiB", "syncwrite_1m": "Sync write 1 MiB",
              "seqread_1m": "Sequential read 1 MiB", "seqwrite_1m": "Sequential write 1 MiB"}
# the tests of the disk test that run a series of jobs, as the run dialog names them
SERIES_LABELS = {"sweep": "Concurrency sweep", "readahead": "Read-ahead sweep (root)"}
JOB_HELP = {"readahead": "Sequential reads at several read-ahead sizes; needs root, full preset only. "
                         "The original value is restored afterwards."}


def _disk_full(values: Mapping[str, Any]) -> str:
    return (f"the figures to keep ({values['file_size'] >> 30} GiB file, {values['runtime']:g} s per job, "
            "the whole sweep)")


# test -> preset -> what the preset gives, from its values
PRESET_SUMMARIES: dict[str, dict[str, Callable[[Mapping[str, Any]], str]]] = {
    "disk": {"quick": lambda _values: "minutes, small files", "full": _disk_full},
    "cpu": {"quick": lambda values: f"{values['seconds']:g} s per phase",
            "full": lambda values: f"{values['seconds']:g} s per phase"},
}

# the labels a reader must not miss beside mail storm and restore figures
SYNTHETIC_LABEL = "SYNTHETIC queue storm (no MTA)"
NON_DURABLE_LABEL = "NON-DURABLE (fsync off)"
FILE_LEVEL_LABEL = "FILE-LEVEL restore (no PostgreSQL)"
ENGINE_NAMES = {"builtin": "built-in"}
UNKNOWN_ENGINE = "—"


def engine_text(meta: Mapping[str, Any]) -> str:
    """ "fio 3.36", "built-in 1"; a dash when the engine is not known."""
    engine = ENGINE_NAMES.get(str(meta.get("engine") or ""), str(meta.get("engine") or UNKNOWN_ENGINE))
    version = str(meta.get("engine_version") or "").removeprefix(f"{engine}-")   # fio says "fio-3.36"
    return f"{engine} {version}".strip()


SWEEP_BEST = "sweep_best.iops"   # derived: the highest IOPS of the concurrency sweep

# the figures a comparison puts side by side, in the order of its columns
COMPARED: tuple[MetricSpec, ...] = (
    MetricSpec("disk:randread_4k.iops", "disk", "Random read 4 KiB", "IOPS", HIGHER, headline=True),
    MetricSpec("disk:" + SWEEP_BEST, "disk", "Random read 4 KiB, best of sweep", "IOPS", HIGHER, derived=True),
    MetricSpec("disk:randread_4k.lat_p99", "disk", "Random read 4 KiB p99", "ms", LOWER),
    MetricSpec("disk:randread_1m.mbps", "disk", "Random read 1 MiB", "MB/s", HIGHER),
    MetricSpec("disk:seqread_1m.mbps", "disk", "Sequential read", "MB/s", HIGHER),
    MetricSpec("disk:seqwrite_1m.mbps", "disk", "Sequential write", "MB/s", HIGHER),
    MetricSpec("disk:syncwrite_4k.iops", "disk", "Sync write 4 KiB", "IOPS", HIGHER, headline=True),
    MetricSpec("disk:syncwrite_4k.lat_p99", "disk", "Sync write 4 KiB p99", "ms", LOWER),
    MetricSpec("disk:syncwrite_1m.mbps", "disk", "Sync write 1 MiB", "MB/s", HIGHER),
    MetricSpec("cpu:single", "cpu", "CPU single core", "ops/s", HIGHER),
    MetricSpec("cpu:multi", "cpu", "CPU all cores", "ops/s", HIGHER, headline=True),
    MetricSpec("mailstorm:accepted_per_s", "mailstorm", "Mail storm accepted", "msg/s", HIGHER, headline=True),
    MetricSpec("mailstorm:data_p99", "mailstorm", "End of DATA p99", "ms", LOWER),
    MetricSpec("mailstorm:drain_s", "mailstorm", "Queue drain", "s", LOWER),
    MetricSpec("restore:restore_j1.total_s", "restore", "Restore -j 1", "s", LOWER),
    MetricSpec("restore:restore_jN.total_s", "restore", "Restore -j N", "s", LOWER, headline=True),
    MetricSpec("restore:file_restore.total_s", "restore", "File-level restore", "s", LOWER, headline=True),
    # a dns run's first resolver, first pass (app.compare.metrics): the whole list's time decides, then the tail
    MetricSpec("dns:total_s", "dns", "DNS list total", "s", LOWER, headline=True),
    MetricSpec("dns:p50_ms", "dns", "DNS p50", "ms", LOWER),
    MetricSpec("dns:p99_ms", "dns", "DNS p99", "ms", LOWER),
    # the TOTAL run of a shared-storage sweep: the highest total of its steps (app/engine/shared_run.py)
    MetricSpec("shared-storage:sweep.best_ops", "shared-storage", "Shared storage, best total", "op/s", HIGHER,
               headline=True),
)


# -- consistency: how steady each figure was (stored by the workbench, app/engine/consistency.py) ----

# the results the workbench adds to what the agent reports, by test: metric template and unit
WORKBENCH_RESULTS: dict[str, tuple[tuple[str, str], ...]] = {
    "disk": (("{job}.{quantity}.cv", "%"), ("{job}.p99_over_p50", "x"), ("{job}.steal", "%")),
    "cpu": (("{phase}.cv", "%"), ("{phase}.steal", "%")),
    "mailstorm": (("accepted_per_s.cv", "%"), ("storm.steal", "%")),
    "shared-storage": (("sweep.best_ops", "op/s"), ("{step}.start_spread", "ms")),
}
# tests whose figures are not named after the phase that measured them: that phase's name
STEAL_PHASE = {"mailstorm": "storm"}


def _consistency_of(item: MetricSpec) -> tuple[MetricSpec, ...]:
    """The variation of a rate the agent measured per interval, its disk job's latency tail and the steal
    during its phase."""
    if item.derived or item.better != HIGHER or item.unit not in ("IOPS", "MB/s", "ops/s", "msg/s"):
        return ()
    test, metric = item.test, item.metric
    phase = STEAL_PHASE.get(test, metric.partition(".")[0])
    out = [MetricSpec(f"{item.key}.cv", test, f"{item.label}, variation", "%", LOWER, qualifies=item.key)]
    if test == "disk":
        out.append(MetricSpec(f"{test}:{phase}.p99_over_p50", test, f"{item.label}, p99/p50 latency", "x", LOWER,
                              qualifies=item.key))
    out.append(MetricSpec(f"{test}:{phase}.steal", test, f"{item.label}, CPU steal", "%", LOWER,
                          qualifies=item.key))
    return tuple(out)


CONSISTENCY: tuple[MetricSpec, ...] = tuple(spec for item in COMPARED for spec in _consistency_of(item))
