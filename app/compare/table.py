"""The comparison as a table of text (command line, PDF) and as CSV (spreadsheets)."""
from __future__ import annotations

import csv
import io

from app.compare.model import NO_VALUE, Cell, Comparison
from app.summary.base import Table

CSV_FIXED = ("server", "host", "run_ids", "tests", "started_utc", "spec")


def cell_text(cell: Cell | None, with_ratio: bool = True, with_tags: bool = True, missing: str = NO_VALUE) -> str:
    """ "18,123 (16 workers) 3.4x [cached]" — the number with what must be said beside it."""
    if cell is None or cell.value is None:
        return missing
    parts = [cell.text + (f" ({cell.note})" if cell.note else "")]
    if with_ratio and cell.ratio_text:
        parts.append(cell.ratio_text)
    if with_tags and cell.tags:
        parts.append(f"[{cell.tags}]")
    return " ".join(parts)


def text_table(comparison: Comparison, missing: str = "-") -> Table:
    """A terminal is narrower than the figures are many: one row per figure, one column per server.

    The best value of a row is marked with *, ratios shown when there is a baseline."""
    baseline = comparison.baseline is not None
    table = Table(("figure",) + tuple(row.label + (" (baseline)" if row.baseline else "") for row in comparison.rows))
    for item in comparison.metrics:
        cells = []
        for row in comparison.rows:
            cell = row.cells.get(item.key)
            text = cell_text(cell, with_ratio=baseline, missing=missing)
            cells.append(("*" + text) if cell is not None and cell.best else text)
        table.rows.append((item.header(),) + tuple(cells))
    return table


def csv_text(comparison: Comparison) -> str:
    """Raw stored values (full precision, '.' decimals), a ratio column per figure when there is a
    baseline, and the caveats per figure and per server."""
    baseline = comparison.baseline is not None
    headers = list(CSV_FIXED)
    for item in comparison.metrics:
        headers.append(item.header())
        if baseline:
            headers.append(f"{item.label} ratio to baseline")
        headers.append(f"{item.label} caveats")
    headers += ["best in", "caveats"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(headers)
    for row in comparison.rows:
        line = [row.label, row.host, " ".join(str(i) for i in row.run_ids), " ".join(row.tests),
                min(r.started_at for r in row.runs).strftime("%Y-%m-%d %H:%M:%S"), row.spec]
        for item in comparison.metrics:
            cell = row.cells.get(item.key)
            line.append("" if cell is None or cell.value is None else repr(cell.value))
            if baseline:
                line.append("" if cell is None or cell.ratio is None else f"{cell.ratio:.4g}")
            line.append("" if cell is None else cell.tags)
        line.append("; ".join(m.label for m in comparison.metrics
                              if m.key in row.cells and row.cells[m.key].best))
        line.append(" | ".join(c.text for c in row.caveats))
        writer.writerow(line)
    return out.getvalue()
