"""The comparison as a table of text (command line, PDF) and as CSV (spreadsheets)."""
from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from app.compare import dns_export
from app.compare.dns import DnsLine
from app.compare.model import NO_VALUE, Cell, Comparison
from app.compare.prices import price_text
from app.summary.base import Table

CSV_FIXED = ("server", "host", "run_ids", "tests", "started_utc", "spec")
CSV_PRICE = ("price", "price currency", "price period", "price date", "price source")   # only when one is set


def cell_text(cell: Cell | None, with_ratio: bool = True, with_tags: bool = True, missing: str = NO_VALUE) -> str:
    """ "18,123 (16 workers) [cached] — ahead of db-02 by 1.8x (1.6–2.0)": the number with its note and
    caveats, then its verdict against the reference. The factor against the baseline is the verdict's own
    (with_ratio is kept for callers; a second ratio beside a verdict would read as a contradiction)."""
    if cell is None or cell.value is None:
        return missing
    parts = [cell.text + (f" ({cell.note})" if cell.note else "")]
    if with_tags and cell.tags:
        parts.append(f"[{cell.tags}]")
    if cell.until_stable_missed:
        parts.append(f"[{cell.until_stable_missed}]")
    if cell.verdict:
        parts.append(f"— {cell.verdict}")
    return " ".join(parts)


def text_table(comparison: Comparison, missing: str = "-") -> Table:
    """A terminal is narrower than the figures are many: one row per figure, one column per server.

    The figure ahead of every other is marked with *; every figure says its verdict against the reference.
    A row of prices (with their dates) when a price is set."""
    baseline = comparison.baseline is not None
    table = Table(("figure",) + tuple(row.label + (" (baseline)" if row.baseline else "") for row in comparison.rows))
    if any(row.price is not None for row in comparison.rows):
        table.rows.append(("price",) + tuple(
            price_text(row.price) + (f" ({row.price.date})" if row.price.date else "") if row.price else missing
            for row in comparison.rows))
    for item in comparison.metrics:
        cells = []
        for row in comparison.rows:
            cell = row.cells.get(item.key)
            text = cell_text(cell, with_ratio=baseline, missing=missing)
            cells.append(("*" + text) if cell is not None and cell.best else text)
        table.rows.append((item.header(),) + tuple(cells))
    return table


def steadiness_lines(comparison: Comparison) -> list[str]:
    """ "db-01, Random read 4 KiB IOPS: variation 2.0 % · p99/p50 3.1x · steal 0.4 %" per headline figure."""
    return [f"{row.label}, {item.label}: {cell.steadiness}" for item in comparison.metrics if item.headline
            for row in comparison.rows if (cell := row.cells.get(item.key)) is not None and cell.steadiness]


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))   # full precision: the same number as the JSON


def csv_text(comparison: Comparison, dns_lines: Sequence[DnsLine] = ()) -> str:
    """Raw stored values (full precision, '.' decimals), each figure's verdict against its reference with
    the factor and its range (the numbers the summary, the JSON and the PDF print), a ratio column per figure
    when there is a baseline, and the caveats per figure and per server. The dns runs' every resolver and
    pass (dns_lines, app.compare.dns) follow after an empty row, with a header of their own."""
    baseline = comparison.baseline is not None
    priced = any(row.price is not None for row in comparison.rows)
    headers = list(CSV_FIXED) + (list(CSV_PRICE) if priced else [])
    for item in comparison.metrics:
        headers.append(item.header())
        headers += [f"{item.label} {name}" for name in VERDICT_COLUMNS]
        if item.headline:
            headers.append(f"{item.label} steadiness")
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
        if priced:
            price = row.price
            line += ["", "", "", "", ""] if price is None else [repr(price.amount), price.currency, price.period,
                                                                 price.date, price.source]
        for item in comparison.metrics:
            cell = row.cells.get(item.key)
            line.append("" if cell is None or cell.value is None else repr(cell.value))
            line += verdict_fields(cell)
            if item.headline:
                line.append("" if cell is None else cell.steadiness)
            if baseline:
                line.append("" if cell is None or cell.ratio is None else f"{cell.ratio:.4g}")
            tags = "" if cell is None else ", ".join(t for t in (cell.tags, cell.until_stable_missed) if t)
            line.append(tags)
        line.append("; ".join(m.label for m in comparison.metrics
                              if m.key in row.cells and row.cells[m.key].best))
        line.append(" | ".join(c.text for c in row.caveats))
        writer.writerow(line)
    if dns_lines:
        writer.writerow([])
        writer.writerows(dns_export.csv_rows(dns_lines))
    return out.getvalue()


# per figure: the verdict against the reference, as `compare --json` gives it in "standings"
VERDICT_COLUMNS = ("verdict", "factor", "factor lo", "factor hi", "against", "verdict basis", "settle",
                   "verdict text")


def verdict_fields(cell: Cell | None) -> list[str]:
    """The VERDICT_COLUMNS of one cell, at full precision (the JSON's numbers)."""
    if cell is None or cell.judged is None:
        return [""] * len(VERDICT_COLUMNS)
    verdict = cell.judged.verdict
    return [verdict.kind, _number(verdict.factor), _number(verdict.lo), _number(verdict.hi),
            cell.judged.against, verdict.basis, verdict.settle or "", cell.verdict_said]
