"""A run's results as readable tables, without Qt: the command line prints them, the window shows them.

Results are ResultSample objects or dicts with test, metric, value, unit, metadata (as stored and as
`benchbay run --json` prints them). Disk metrics are "{job}.{quantity}" (job names have no dots;
quantities may: "lat_p99.9"); CPU metrics are "single", "multi", "scaling" and "{phase}.{kernel}".
The window's results view (widgets/results_view.py) is a Qt layer over the same functions: job
labels, numbers, the disk jobs, the sweep, the CPU figures and the caveats are decided here only.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DISK_COLUMNS = (("iops", "IOPS"), ("mbps", "MB/s"), ("lat_mean", "mean ms"), ("lat_p50", "p50 ms"),
                ("lat_p99", "p99 ms"), ("lat_p99.9", "p99.9 ms"))
LATENCIES = (("lat_mean", "mean"), ("lat_p50", "p50"), ("lat_p95", "p95"), ("lat_p99", "p99"),
             ("lat_p99.9", "p99.9"))
CPU_KERNELS = (("zlib_compress", "zlib compress"), ("zlib_decompress", "zlib decompress"), ("sha256", "SHA-256"))
CPU_PHASES = ("single", "multi")
VERSION_KEYS = (("python", "interpreter"), ("zlib", "zlib"), ("openssl", "OpenSSL"))
SWEEP_JOB = re.compile(r"^sweep_(?P<kind>.+)_w(?P<workers>\d+)$")
READAHEAD_JOB = re.compile(r"^readahead_(?P<kind>.+)_ra(?P<kb>\d+)$")
SERIES_PREFIXES = ("sweep_", "readahead_")   # jobs that are one point of a series
# the agent's job names (remote/agent/bench_disk.py) as a reader names them, in the order a reader expects
JOB_LABELS = {"randread_4k": "Random read 4 KiB", "randread_1m": "Random read 1 MiB",
              "syncwrite_4k": "Sync write 4 KiB", "syncwrite_1m": "Sync write 1 MiB",
              "seqread_1m": "Sequential read 1 MiB", "seqwrite_1m": "Sequential write 1 MiB"}
KNEE_GAIN = 1.10    # the sweep "stops growing" where doubling the workers adds less than 10%
MISSING = "-"       # no value, in the command line's tables
NO_VALUE = "—"      # no value, in the window


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def text(self, indent: str = "") -> str:
        """Columns aligned: text left, numbers right."""
        widths = [max([len(h)] + [len(r[i]) for r in self.rows]) for i, h in enumerate(self.headers)]
        numeric = [all(_looks_numeric(r[i]) for r in self.rows) and bool(self.rows) for i in range(len(widths))]

        def line(cells: Sequence[str]) -> str:
            parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
            return (indent + "  ".join(parts)).rstrip()

        return "\n".join([line(self.headers)] + [line(r) for r in self.rows])


def _looks_numeric(text: str) -> bool:
    return text == MISSING or bool(re.fullmatch(r"[-+]?[\d,]+(\.\d+)?x?", text))


def result_field(result: Any, name: str) -> Any:
    """A field of a result, whether it is a ResultSample or a dict as `benchbay run --json` prints it."""
    return result.get(name) if isinstance(result, Mapping) else getattr(result, name, None)


def warning_messages(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The messages of a run's warning events, in order."""
    return [str(e["message"]) for e in events if e.get("type") == "warning" and e.get("message")]


def result_parts(result: Any) -> tuple[str, str, float, str, dict]:
    return (str(result_field(result, "test") or ""), str(result_field(result, "metric") or ""),
            float(result_field(result, "value") or 0.0), str(result_field(result, "unit") or ""),
            dict(result_field(result, "metadata") or {}))


def number(value: float | None, decimals: int | None = None, missing: str = MISSING) -> str:
    """Thousands separated; by default three significant figures or so: 12,345 / 512 / 48.2 / 1.27 / 0.083.

    decimals: a fixed number of decimals instead; missing: the text for None (and NaN).
    """
    if value is None or math.isnan(value):
        return missing
    if decimals is None:
        size = abs(value)
        decimals = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else 3
    return f"{value:,.{decimals}f}"


# -- disk ------------------------------------------------------------------------------------------

def job_label(job: str) -> str:
    """ "randread_4k" -> "Random read 4 KiB", "sweep_randread_4k_w4" -> "Sweep: random read 4 KiB, 4 workers"."""
    sweep = SWEEP_JOB.match(job)
    if sweep:
        base = JOB_LABELS.get(sweep["kind"], sweep["kind"])
        count = int(sweep["workers"])
        return f"Sweep: {base[:1].lower()}{base[1:]}, {count} worker{'s' if count != 1 else ''}"
    readahead = READAHEAD_JOB.match(job)
    if readahead:
        return f"Read-ahead {readahead['kb']} KiB: sequential read"
    return JOB_LABELS.get(job, job)


def job_order(job: str) -> tuple[int, int, str]:
    """Sort key: the main jobs as JOB_LABELS lists them, then the sweep by workers, then the rest."""
    order = list(JOB_LABELS)
    if job in order:
        return (0, order.index(job), job)
    numbers = re.findall(r"\d+$", job)
    return (1 if job.startswith("sweep_") else 2, int(numbers[0]) if numbers else 0, job)


def engine_text(meta: Mapping[str, Any]) -> str:
    """ "fio 3.36", "built-in 1"; the window's dash when the engine is not known."""
    engine = {"builtin": "built-in"}.get(str(meta.get("engine") or ""), str(meta.get("engine") or NO_VALUE))
    version = str(meta.get("engine_version") or "").removeprefix(f"{engine}-")   # fio says "fio-3.36"
    return f"{engine} {version}".strip()


@dataclass
class DiskJob:
    name: str
    figures: dict[str, float] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

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
    for test, metric, value, _unit, metadata in map(result_parts, results):
        if test != "disk" or "." not in metric:
            continue
        name, _, quantity = metric.partition(".")
        job = jobs.setdefault(name, DiskJob(name))
        job.figures[quantity] = value
        job.metadata.update(metadata)
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
        table.rows.append((job.name,) + tuple(number(job.figures.get(q)) for q, _ in DISK_COLUMNS)
                          + (str(job.metadata.get("engine") or MISSING), job.mode,
                             MISSING if sync == "none" else sync))
    return table


def sweep_knee(workers: Sequence[int], iops: Sequence[float]) -> int | None:
    """The worker count after which more workers stop adding IOPS (None: they still do)."""
    for index in range(len(workers) - 1):
        if iops[index] > 0 and iops[index + 1] < iops[index] * KNEE_GAIN:
            return workers[index]
    return None


def disk_caveats(results: Iterable[Any]) -> list[str]:
    """What the disk metadata says a reader must know before trusting the figures."""
    jobs = disk_jobs(results)
    notes = []
    cached = [job.name for job in jobs if job.cached]
    if cached:
        notes.append(f"Cached I/O (no O_DIRECT) in {len(cached)} job(s): the page cache may be measured, not "
                     "the disk.")
    engines = {engine_text(job.metadata) for job in jobs}
    if any(e.startswith("built-in") for e in engines):
        notes.append("Measured with the built-in engine (fio was not used): compare with results of the same "
                     "engine.")
    if len(engines) > 1:
        notes.append("Several engines in one run: " + ", ".join(sorted(engines)))
    return notes


def caveats(results: Iterable[Any], warnings: Iterable[str] = ()) -> list[str]:
    """The run's warnings (once each), then the disk, mail storm and restore caveats."""
    from app.summary.services import service_caveats  # it builds on this module's tables

    results = list(results)
    return list(dict.fromkeys(warnings)) + disk_caveats(results) + service_caveats(results)


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
    values, metadata = cpu_figures(results)
    table = Table(("phase", "workers", "score ops/s") + tuple(f"{h} MB/s" for _, h in CPU_KERNELS))
    for phase in CPU_PHASES:
        if phase not in values:
            continue
        workers = metadata.get(phase, {}).get("workers")
        table.rows.append((phase, MISSING if workers is None else str(workers), number(values[phase]))
                          + tuple(number(values.get(f"{phase}.{k}")) for k, _ in CPU_KERNELS))
    return table


def cpu_lines(results: Sequence[Any]) -> list[str]:
    """Scaling and the versions the score depends on."""
    values, metadata = cpu_figures(results)
    lines = []
    if "scaling" in values:
        meta = metadata.get("scaling", {})
        cores = f" on {meta['cores']} cores" if "cores" in meta else ""
        lines.append(f"scaling: {values['scaling']:.2f}x (multi/single, {meta.get('workers', '?')} workers{cores})")
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


# -- any run ---------------------------------------------------------------------------------------

SUMMARISED = ("disk", "cpu", "mailstorm", "restore")   # tests with their own tables


def other_table(results: Iterable[Any], skip: tuple[str, ...] = SUMMARISED) -> Table:
    table = Table(("test", "metric", "value", "unit"))
    for test, metric, value, unit, _ in map(result_parts, results):
        if test not in skip:
            table.rows.append((test, metric, f"{value:g}", unit))
    return table


def summary_text(host: str, status: str, results: Sequence[Any], warnings: Sequence[str] = (),
                 run_id: int | None = None, error: str = "") -> str:
    """The whole readable summary of one run: a title line, the tables, the warnings."""
    results = list(results)
    stored = f"run {run_id}" if run_id is not None else "not stored"
    lines = [f"{host}: {status} ({stored})" + (f" — {error}" if error else "")]
    tests = {result_parts(r)[0] for r in results}
    if "disk" in tests:
        lines.append(disk_table(results).text("  "))
        sweep = sweep_line(results)
        if sweep:
            lines.append("  " + sweep)
    if "cpu" in tests:
        lines.append(cpu_table(results).text("  "))
        lines += ["  " + line for line in cpu_lines(results)]
    if tests & {"mailstorm", "restore"}:
        from app.summary.services import service_text  # it builds on this module's tables

        lines += service_text(results)
    if tests - set(SUMMARISED):
        lines.append(other_table(results).text("  "))
    if not results and status == "done":
        lines.append("  no results")
    if warnings:
        lines.append("  warnings:")
        lines += [f"  - {w}" for w in warnings]
    return "\n".join(lines)
