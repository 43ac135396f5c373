"""One stored run's results as the window shows them: a ResultsPage the results view lays out.

Disk results are "{job}.{quantity}" metrics of the test "disk" (iops, mbps, lat_mean, lat_p50 ...
lat_p99.9) with the engine and direct/cached in their metadata; CPU results are single, multi, scaling
and "{single|multi}.{kernel}"; mail storm and restore runs get their summary lines and a table (latency
per SMTP stage, or one row per pg_restore pass) with their labels (synthetic, non-durable, file level)
as badges; anything else is listed as metric, value, unit. The wording is the command line's
(app.summary), so `benchbay run` and the window say the same.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from app.summary.base import MISSING, Table
from app.summary.disk_cpu import (
    CPU_KERNELS,
    LATENCIES,
    VERSION_KEYS,
    DiskJob,
    cpu_figures,
    cpu_versions,
    disk_jobs,
    disk_sweep,
    engine_text,
    job_label,
    sweep_knee,
)
from app.summary.dns import dns_lines, dns_table
from app.summary.mail_series import mail_series
from app.summary.services import (
    FILE_LEVEL_LABEL,
    NON_DURABLE_LABEL,
    SYNTHETIC_LABEL,
    mail_latency_table,
    mail_lines,
    mail_synthetic,
    restore_kind,
    restore_lines,
    restore_non_durable,
    restore_table,
)
from app.summary.spread_text import disk_consistency_table, range_text, with_spread
from app.summary.text import caveats, consistency_lines
from storage.records import Spread
from widgets.format import NOT_AVAILABLE, number, workers_text
from widgets.results_data import (
    Align,
    BarChart,
    CellData,
    Highlight,
    ResultsPage,
    SweepData,
    TableData,
)

DISK_COLUMNS = ("Job", "IOPS", "MB/s", "Mean ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "Engine", "I/O")


class RunHeading(Protocol):
    """What the page reads of the stored run (storage's RunRecord has it)."""
    @property
    def id(self) -> int: ...
    @property
    def host_name(self) -> str: ...
    @property
    def test(self) -> str: ...
    @property
    def status(self) -> str: ...


def _text(text: str, tip: str = "") -> CellData:
    return CellData(text, tip, Align.LEFT)


def _figure(value: float | None, decimals: int | None = None) -> CellData:
    return CellData(number(value, decimals))


def _spread_figure(value: float | None, spread: Spread | None, decimals: int | None = None) -> CellData:
    """The figure with "±x %" after it and its range in the tip, when it has a spread."""
    if spread is None:
        return _figure(value, decimals)
    return CellData(with_spread(number(value, decimals), spread), f"{range_text(spread)}; ± is one standard "
                    "deviation of the per-interval rate in % of its mean")


def results_page(run: RunHeading, results: Sequence[Any], warnings: Sequence[str] = ()) -> ResultsPage:
    """run: a RunRecord; results: its ResultSamples; warnings: the run's warning messages."""
    subtitle, badges, lines, lines_title = "", (), (), "How steady the run was"
    tests = {sample.test for sample in results}
    jobs = disk_jobs(results, reading_order=True)
    latency: tuple[BarChart, ...] = ()
    if tests & {"mailstorm", "restore"}:
        badges = _service_badges(results)
        lines = tuple(mail_lines(results) + restore_lines(results)
                      + ["Consistency, " + line for line in consistency_lines(results)])
        table = _service_table(results)
    elif "dns" in tests:
        table = _plain_table(dns_table(results), text_columns=2)
        lines = tuple(dns_lines(results, shown=10))
        lines_title = "The query list and the slowest names"
    elif jobs:
        table = _disk_table(jobs)
        latency = _latency_charts(jobs)
        lines = tuple(_disk_consistency(results, jobs))
    elif any(s.test == "cpu" for s in results):
        table = _cpu_table(results)
        lines = tuple("Consistency, " + line for line in consistency_lines(results))
        found = cpu_versions(results)
        # the work runs in these libraries: hosts with other versions ran other code
        subtitle = " · ".join(f"{key}: {found[key]}" for key, _label in VERSION_KEYS if found.get(key))
    else:
        table = _generic_table(results)
    return ResultsPage(run_id=run.id, host_name=run.host_name, test=run.test, status=str(run.status),
                       subtitle=subtitle, badges=badges, warnings=tuple(caveats(results, warnings)),
                       summary_lines=lines, summary_title=lines_title, table=table, latency=latency,
                       sweep=_sweep(results), mail=mail_series(results))


# -- tables ----------------------------------------------------------------------------------------

def _disk_table(jobs: list[DiskJob]) -> TableData:
    rows = []
    for job in jobs:
        figures, meta = job.figures, job.metadata
        row = [_text(job_label(job.name), job.name), _spread_figure(figures.get("iops"), job.spreads.get("iops"), 0),
               _spread_figure(figures.get("mbps"), job.spreads.get("mbps"), 1)]
        row += [_figure(figures.get(key)) for key, _name in LATENCIES]
        row.append(_text(engine_text(meta), str(meta.get("flags") or "")))
        if job.cached:
            row.append(CellData("cached", "page cache in the way: not the disk alone", Align.CENTER,
                                Highlight.CAUTION))
        else:
            row.append(CellData("direct", "O_DIRECT: the page cache bypassed", Align.CENTER))
        rows.append(row)
    return TableData(DISK_COLUMNS, rows)


def _cpu_table(results: Sequence[Any]) -> TableData:
    values, metadata = cpu_figures(results)
    lines = [("Score", "single", "multi", "ops/s")]
    lines += [(label, f"single.{k}", f"multi.{k}", "MB/s") for k, label in CPU_KERNELS]
    workers = metadata.get("multi", {}).get("workers") if "multi" in values else None
    headers = ("", "Single core", f"All cores ({workers})" if workers else "All cores", "Unit")
    spreads = {s.metric: s.spread for s in results if s.test == "cpu"}
    rows = [[_text(label), *(_spread_figure(values.get(key), spreads.get(key), 2 if unit == "ops/s" else 1)
                             for key in (single, multi)), _text(unit)] for label, single, multi, unit in lines]
    scaling = number(values.get("scaling"), 2)
    rows.append([_text("Scaling (all cores / single)"), CellData(""),
                 CellData(scaling if scaling == NOT_AVAILABLE else f"{scaling}×"), _text("")])
    return TableData(headers, rows)


def _service_badges(results: Sequence[Any]) -> tuple[str, ...]:
    badges = []
    if mail_synthetic(results):
        badges.append(SYNTHETIC_LABEL)
    if restore_kind(results) == "file":
        badges.append(FILE_LEVEL_LABEL)
    if restore_non_durable(results):
        badges.append(NON_DURABLE_LABEL)
    return tuple(badges)


def _service_table(results: Sequence[Any]) -> TableData:
    return _plain_table(mail_latency_table(results) if any(s.test == "mailstorm" for s in results)
                        else restore_table(results))


def _plain_table(table: Table, text_columns: int = 1) -> TableData:
    # the command line's "-" for no value is the window's "—"
    rows = [[CellData(NOT_AVAILABLE if text == MISSING else text,
                      align=Align.RIGHT if column >= text_columns else Align.LEFT)
             for column, text in enumerate(cells)] for cells in table.rows]
    return TableData(tuple(table.headers), rows)


def _generic_table(results: Sequence[Any]) -> TableData:
    rows = [[_text(sample.test), _text(sample.metric), _figure(sample.value), _text(sample.unit)]
            for sample in results]
    return TableData(("Test", "Metric", "Value", "Unit"), rows)


def _disk_consistency(results: Sequence[Any], jobs: list[DiskJob]) -> list[str]:
    """One line per main job that has consistency figures: IOPS range, variation, latency tail, steal."""
    table = disk_consistency_table(results, [job.name for job in jobs if not job.series])
    return [f"Consistency, {job_label(job)}: IOPS {_shown(iops)}, variation {_shown(cv)} %, p99/p50 {_shown(tail)}, "
            f"CPU steal {_shown(steal)} %" for job, iops, cv, tail, steal in table.rows]


def _shown(text: str) -> str:
    return NOT_AVAILABLE if text == MISSING else text


# -- charts ----------------------------------------------------------------------------------------

def _latency_charts(jobs: list[DiskJob]) -> tuple[BarChart, ...]:
    # the sweep's jobs have their latencies in the table: charts for the main jobs only
    shown = [job for job in jobs if not job.series and any(k in job.figures for k, _ in LATENCIES)]
    labels = tuple(name for _key, name in LATENCIES)
    return tuple(BarChart(job.name, job_label(job.name), labels,
                          [float(job.figures.get(key, 0.0)) for key, _ in LATENCIES]) for job in shown)


def _sweep(results: Sequence[Any]) -> SweepData:
    points = disk_sweep(results)
    workers, iops = [w for w, _ in points], [i for _, i in points]
    if len(workers) < 2:
        return SweepData(workers, iops)
    knee = sweep_knee(workers, iops)
    note = (f"IOPS stop growing at about {workers_text(knee)} (the next doubling adds under 10%)."
            if knee is not None else "IOPS still grow at the highest worker count tried.")
    return SweepData(workers, iops, note)
