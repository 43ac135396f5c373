"""Disk and CPU results as readable tables and lines, without Qt: `benchbay run` prints them, the window
shows them.

Disk metrics are "{job}.{quantity}" (job names have no dots; quantities may: "lat_p99.9"); CPU metrics
are "single", "multi", "scaling" and "{phase}.{kernel}". Job labels, numbers, the disk jobs, the sweep,
the CPU figures are decided here only.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.catalogue import CATALOGUE, SWEEP_JOB
from app.catalogue.presentation import engine_text as engine_text  # the summary's readers take it from here
from app.summary.base import MISSING, Table, number, result_field, result_parts
from app.summary.spread_text import spread_of_result, with_spread
from storage.records import Spread
from widgets.format import workers_text

DISK_COLUMNS = (("iops", "IOPS"), ("mbps", "MB/s"), ("lat_mean", "mean ms"), ("lat_p50", "p50 ms"),
                ("lat_p99", "p99 ms"), ("lat_p99.9", "p99.9 ms"))
LATENCIES = (("lat_mean", "mean"), ("lat_p50", "p50"), ("lat_p95", "p95"), ("lat_p99", "p99"),
             ("lat_p99.9", "p99.9"))
CPU_KERNELS = (("zlib_compress", "zlib compress"), ("zlib_decompress", "zlib decompress"), ("sha256", "SHA-256"))
CPU_PHASES = ("single", "multi")
VERSION_KEYS = (("python", "interpreter"), ("zlib", "zlib"), ("openssl", "OpenSSL"))
SERIES_PREFIXES = ("sweep_", "readahead_")   # jobs that are one point of a series
KNEE_GAIN = 1.10    # the sweep "stops growing" where doubling the workers adds less than 10%


def job_label(job: str) -> str:
    """ "randread_4k" -> "Random read 4 KiB", "sweep_randread_4k_w4" -> "Sweep: random read 4 KiB, 4 workers"."""
    return CATALOGUE.job_label(job)


def job_order(job: str) -> tuple[int, int, str]:
    """Sort key: the main jobs in reading order, then the sweep by workers, then the rest."""
    return CATALOGUE.job_order(job)


@dataclass
class DiskJob:
    name: str
    figures: dict[str, float] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    spreads: dict[str, Spread] = field(default_factory=dict)   # quantity -> how much it varied

    @property
    def cached(self) -> bool:
        """The page cache was in the way (no O_DIRECT): the figures are not the disk's alone."""
        return bool(self.metadata.get("cached")) or self.metadata.get("direct") is False

    @property
    def mode(self) -> str:
        """ "cached", "direct", or MISSING when the metadata does not say."""
        if self.cached:
            return "cached"
        return MISSING if self.metadata.get("direct") is None else "direct"

    @property
    def series(self) -> bool:
        """One point of the concurrency or read-ahead sweep, not a job of its own."""
        return self.name.startswith(SERIES_PREFIXES)


def disk_jobs(results: Iterable[Any], reading_order: bool = False) -> list[DiskJob]:
    """The disk results grouped by job, in the order the jobs ran (or in job_order)."""
    jobs: dict[str, DiskJob] = {}
    for result in results:
        test, metric, value, _unit, metadata = result_parts(result)
        if test != "disk" or "." not in metric:
            continue
        name, _, quantity = metric.partition(".")
        job = jobs.setdefault(name, DiskJob(name))
        job.figures[quantity] = value
        job.metadata.update(metadata)
        spread = spread_of_result(result)
        if spread is not None:
            job.spreads[quantity] = spread
    return sorted(jobs.values(), key=lambda j: job_order(j.name)) if reading_order else list(jobs.values())


def disk_sweep(results: Iterable[Any]) -> list[tuple[int, float]]:
    """(workers, IOPS) of the concurrency sweep, by workers."""
    points = []
    for job in disk_jobs(results):
        match = SWEEP_JOB.match(job.name)
        if match and "iops" in job.figures:
            points.append((int(match["workers"]), job.figures["iops"]))
    return sorted(points)


def disk_table(results: Iterable[Any]) -> Table:
    """One row per job (the sweep is listed apart): figures, engine, direct or cached, sync."""
    table = Table(("job",) + tuple(h for _, h in DISK_COLUMNS) + ("engine", "I/O", "sync"))
    for job in disk_jobs(results):
        if SWEEP_JOB.match(job.name):
            continue
        sync = str(job.metadata.get("sync") or "none")
        table.rows.append((job.name,) + tuple(with_spread(number(job.figures.get(q)), job.spreads.get(q))
                                              for q, _ in DISK_COLUMNS)
                          + (str(job.metadata.get("engine") or MISSING), job.mode,
                             MISSING if sync == "none" else sync))
    return table


def sweep_knee(workers: Sequence[int], iops: Sequence[float]) -> int | None:
    """The worker count after which more workers stop adding IOPS (None: they still do)."""
    for index in range(len(workers) - 1):
        if iops[index] > 0 and iops[index + 1] < iops[index] * KNEE_GAIN:
            return workers[index]
    return None


def sweep_line(results: Iterable[Any]) -> str:
    points = disk_sweep(results)
    if not points:
        return ""
    return "sweep (workers: IOPS): " + ", ".join(f"{w}: {number(iops)}" for w, iops in points)


# -- cpu -------------------------------------------------------------------------------------------

def cpu_figures(results: Iterable[Any]) -> tuple[dict[str, float], dict[str, dict]]:
    """metric -> value, and phase ("single"/"multi"/"scaling") -> its metadata."""
    values: dict[str, float] = {}
    metadata: dict[str, dict] = {}
    for test, metric, value, _unit, meta in map(result_parts, results):
        if test == "cpu":
            values[metric] = value
            metadata.setdefault(metric.partition(".")[0], meta)
    return values, metadata


def cpu_table(results: Iterable[Any]) -> Table:
    results = list(results)
    values, metadata = cpu_figures(results)
    spreads = {str(result_field(r, "metric")): spread_of_result(r) for r in results if result_field(r, "test") == "cpu"}
    table = Table(("phase", "workers", "score ops/s") + tuple(f"{h} MB/s" for _, h in CPU_KERNELS))
    for phase in CPU_PHASES:
        if phase not in values:
            continue
        workers = metadata.get(phase, {}).get("workers")
        score = with_spread(number(values[phase]), spreads.get(phase))
        table.rows.append((phase, MISSING if workers is None else str(workers), score)
                          + tuple(number(values.get(f"{phase}.{k}")) for k, _ in CPU_KERNELS))
    return table


def cpu_lines(results: Sequence[Any]) -> list[str]:
    """Scaling and the versions the score depends on."""
    values, metadata = cpu_figures(results)
    lines = []
    if "scaling" in values:
        meta = metadata.get("scaling", {})
        cores = f" on {meta['cores']} cores" if "cores" in meta else ""
        lines.append(f"scaling: {values['scaling']:.2f}x (multi/single, {workers_text(meta.get('workers'))}{cores})")
    versions = cpu_versions(results)
    if versions:
        lines.append("versions: " + ", ".join(_version_text(k, v) for k, v in versions.items()))
    return lines


def cpu_versions(results: Iterable[Any]) -> dict[str, str]:
    """python / zlib / openssl as the cpu test recorded them."""
    found: dict[str, str] = {}
    for test, _metric, _value, _unit, meta in map(result_parts, results):
        if test == "cpu":
            for key, _ in VERSION_KEYS:
                if key in meta and key not in found:
                    found[key] = str(meta[key])
    return found


def _version_text(key: str, value: str) -> str:
    label = dict(VERSION_KEYS)[key]
    return value if value.lower().startswith(label.lower()) else f"{label} {value}"


def version_differences(runs_results: Mapping[str, Iterable[Any]] | Iterable[tuple[str, Iterable[Any]]]
                        ) -> list[str]:
    """One line per library whose version differs between hosts, e.g.
    "zlib 1.2.13 on db1 vs 1.3 on db2: CPU scores are not strictly comparable".

    runs_results: host (or run label) -> its results, as a mapping or as (label, results) pairs.
    """
    pairs = list(runs_results.items()) if isinstance(runs_results, Mapping) else list(runs_results)
    per_host = [(label, cpu_versions(results)) for label, results in pairs]
    lines = []
    for key, label in VERSION_KEYS:
        by_value: dict[str, list[str]] = {}
        for host, versions in per_host:
            if key in versions:
                by_value.setdefault(versions[key], []).append(str(host))
        if len(by_value) > 1:
            groups = [f"{value} on {', '.join(hosts)}" for value, hosts in by_value.items()]
            first = groups[0] if groups[0].lower().startswith(label.lower()) else f"{label} {groups[0]}"
            lines.append(" vs ".join([first] + groups[1:]) + ": CPU scores are not strictly comparable")
    return lines
