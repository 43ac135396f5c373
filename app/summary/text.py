"""The whole readable summary of one run and its caveats, without Qt: `benchbay run` prints it, the
window shows its caveats.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from app.catalogue.caveats import summary_caveats
from app.summary.base import Table, result_parts, run_evidence
from app.summary.disk_cpu import CPU_PHASES, cpu_lines, cpu_table, disk_jobs, disk_table, sweep_line
from app.summary.dns import dns_text
from app.summary.services import service_text
from app.summary.spread_text import SD_LEGEND, consistency_line, disk_consistency_table, spread_of_result

SUMMARISED = ("disk", "cpu", "mailstorm", "restore", "dns")   # tests with their own tables
CPU_PHASE_LABELS = ("single core", "all cores")


def caveats(results: Iterable[Any], warnings: Iterable[str] = ()) -> list[str]:
    """The run's warnings (once each), then the disk, mail storm and restore caveats."""
    return list(dict.fromkeys(warnings)) + summary_caveats(run_evidence(results))


def other_table(results: Iterable[Any], skip: tuple[str, ...] = SUMMARISED) -> Table:
    table = Table(("test", "metric", "value", "unit"))
    for test, metric, value, unit, _ in map(result_parts, results):
        if test not in skip:
            table.rows.append((test, metric, f"{value:g}", unit))
    return table


def consistency_lines(results: Sequence[Any]) -> list[str]:
    """How steady the CPU and mail storm figures were, one line each (the disk has its own table)."""
    found = [consistency_line(results, "cpu", phase, label) for phase, label in zip(CPU_PHASES, CPU_PHASE_LABELS,
                                                                                      strict=True)]
    found.append(consistency_line(results, "mailstorm", "accepted_per_s", "accepted msg/s"))
    return [line for line in found if line]


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
        steadiness = disk_consistency_table(results, [job.name for job in disk_jobs(results)])
        if steadiness.rows:
            lines.append("  consistency (IOPS per interval, variation = sd / mean; p99/p50 latency; CPU steal):")
            lines.append(steadiness.text("  "))
    if "cpu" in tests:
        lines.append(cpu_table(results).text("  "))
        lines += ["  " + line for line in cpu_lines(results)]
        lines += ["  consistency, " + line for line in consistency_lines(results)]
    if tests & {"mailstorm", "restore"}:
        lines += service_text(results)
        if "mailstorm" in tests:
            lines += ["  consistency, " + line for line in consistency_lines(results)]
    if "dns" in tests:
        lines += dns_text(results)
    if tests - set(SUMMARISED):
        lines.append(other_table(results).text("  "))
    if any(spread_of_result(r) is not None for r in results):
        # a comparison's "±" is another range (its verdicts' run-to-run range): say which this one is
        lines.append("  " + SD_LEGEND)
    if not results and status == "done":
        lines.append("  no results")
    if warnings:
        lines.append("  warnings:")
        lines += [f"  - {w}" for w in warnings]
    return "\n".join(lines)
