"""A database-load run in the results window: one table row per step, and the charts' data."""
from __future__ import annotations

from app.summary.base import number
from app.summary.dbload_series import DbLoad, cv_percent
from widgets.results_data import Align, CellData, Highlight, TableData

PERCENTILE_NAMES = (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"))


def dbload_table(load: DbLoad) -> TableData:
    """Clients, ops/s (median of the seconds), how much the seconds varied, each operation's p50/p99/p99.9,
    errors and retries; the knee's row marked."""
    ops = load.ops
    headers = ["Step", "Clients", "ops/s", "Variation"]
    headers += [f"{op} {name} ms" for op in ops for _key, name in PERCENTILE_NAMES]
    headers += ["Errors", "Retries"]
    rows = []
    for step in load.steps:
        cv = cv_percent(step.per_second)
        knee = step.step == load.knee
        tool = f"the tool itself printed {number(step.tool_total)} ops/s for the step" \
            if step.tool_total is not None else ""
        row = [CellData(f"{step.step + 1}" + (" (knee)" if knee else ""),
                        load.knee_text() if knee else "", Align.LEFT,
                        Highlight.CAUTION if knee else Highlight.NONE),
               CellData(str(step.clients)), CellData(number(step.ops, 0), tool),
               CellData(f"{cv:.1f} %" if cv is not None else "—",
                        "coefficient of variation of the per-second totals")]
        for op in ops:
            figures = step.latency.get(op, {})
            row += [CellData(number(figures[key]) if key in figures else "—") for key, _name in PERCENTILE_NAMES]
        row += [CellData(number(step.errors, 0), "", Align.RIGHT,
                         Highlight.CAUTION if step.errors else Highlight.NONE),
                CellData(number(step.retries, 0))]
        rows.append(row)
    return TableData(tuple(headers), rows)


def dbload_lines(load: DbLoad) -> list[str]:
    """The run in a few lines: the tool, the best step, the knee, the errors."""
    best = load.best
    lines = [f"Load from {load.engine or 'an unnamed tool'}" + (f", workload {load.workload}" if load.workload
                                                                 else "")
             + (f", at a constant {number(load.rate, 0)} ops/s (latency from each request's intended start)"
                if load.rate else "") + "."]
    if best is not None:
        cv = cv_percent(best.per_second)
        lines.append(f"Best step: {number(best.ops, 0)} ops/s at {best.label}"
                     + (f", its seconds varied by {cv:.1f} %" if cv is not None else "") + ".")
    said = load.knee_text()
    if said:
        lines.append(said[:1].upper() + said[1:] + ".")
    errors = round(load.errors)
    lines.append(f"{errors:,} error{'s' if errors != 1 else ''} and {round(load.retries):,} "
                 f"retr{'ies' if round(load.retries) != 1 else 'y'} over the whole run.")
    return lines

