"""`benchbay compare`: stored runs side by side as a table, JSON, CSV or the customer PDF."""
from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.cli.commands import command_help
from app.cli.common import UsageError, print_json, stored_id
from app.cli.exits import Exit
from app.compare import dns_export
from app.compare.dns import DnsLine, dns_comparison
from app.compare.model import Cell, Comparison, build, load_inputs
from app.compare.prices import parse_price, price_to_json
from app.compare.table import csv_text, steadiness_lines, text_table
from app.compare.ties import LEGEND, TIE_RULE
from app.report.content import PAGE_SIZES, ReportError, ReportOptions
from app.summary.dns import DnsPass
from app.util.atomic_file import write_text_atomically
from app.workbench import Workbench
from storage.records import HostPrice


def add_parser(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("compare", help=command_help("compare"))
    cmd.add_argument("run_ids", type=stored_id, nargs="+", metavar="RUN_ID")
    cmd.add_argument("--baseline", type=stored_id, metavar="RUN_ID", help="ratios are relative to this run's server")
    cmd.add_argument("--pdf", metavar="FILE", help="write the customer report")
    cmd.add_argument("--csv", metavar="FILE", help="write the table as CSV")
    cmd.add_argument("--json", action="store_true", help="print the comparison as JSON instead of a table")
    cmd.add_argument("--title", default="Server comparison", help="the report's title")
    cmd.add_argument("--customer", default="", help="customer or project, on the title page")
    cmd.add_argument("--author", default="")
    cmd.add_argument("--logo", metavar="FILE", help="an image for the title page")
    cmd.add_argument("--page-size", choices=PAGE_SIZES, default="A4")
    cmd.add_argument("--price", action="append", default=[], metavar="HOST=PRICE", type=price_argument,
                     help="a host's price for this comparison, over the inventory's (benchbay host edit --price): "
                          "'db1=120 EUR/month' or 'db1=3400 EUR/once', then optionally ', DATE, SOURCE'; "
                          "figures per price unit are added to the table, the CSV and the PDF")
    cmd.set_defaults(handler=_compare)


def _compare(bench: Workbench, args: argparse.Namespace) -> int:
    if args.logo and not Path(args.logo).is_file():
        raise ReportError(f"no logo file {args.logo}")
    inputs = load_inputs(bench, args.run_ids)
    try:
        comparison = build(inputs, args.baseline, dict(args.price))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    dns_lines = dns_comparison(((run.record.id, run.record.host_name, run.results) for run in inputs),
                               {run.record.id: run.record.started_at for run in inputs}).lines
    written = []
    if args.csv:
        _write_text(Path(args.csv), csv_text(comparison, dns_lines))
        written.append(f"CSV: {args.csv}")
    if args.pdf:
        pages = _write_pdf(bench, args)
        written.append(f"PDF: {args.pdf} ({pages} page{'s' if pages != 1 else ''})")
    if args.json:
        print_json(comparison_json(comparison, dns_lines))
        for line in written:   # stdout stays one JSON document
            print(line, file=sys.stderr)
        return Exit.OK
    print(text_table(comparison).text())
    print()
    print(comparison.summary())
    steady = steadiness_lines(comparison)
    if steady:
        print()
        print("How steady (variation of the per-second rate, p99/p50 latency, CPU steal):")
        for line in steady:
            print(f"  {line}")
    if comparison.price_lines():
        print()
        print("Prices:")
        for line in comparison.price_lines():
            print(f"  {line}")
    # one meaning of "±" in this view: the verdict's range (`runs show` prints a standard deviation)
    if comparison.standings or any(cell.judged for row in comparison.rows for cell in row.cells.values()):
        print()
        print(f"{LEGEND} {TIE_RULE}")
        floors = [f"{s.row}, {s.label}" for s in comparison.standings if s.basis == "noise_floor"
                  and s.verdict != "reference"]
        if floors:
            print("Judged with the figure's noise floor (a single run on one side, so the run-to-run variation "
                  "measured on real hosts, or the host's own earlier repeats where they varied more, stands in): "
                  + "; ".join(floors) + ".")
    lines = comparison.caveat_lines()
    if lines:
        print()
        print("Caveats:")
        for line in lines:
            print(f"  {line}")
    for line in written:
        print(line)
    return Exit.OK


def _write_text(path: Path, text: str) -> None:
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}") from None


def _write_pdf(bench: Workbench, args: argparse.Namespace) -> int:
    # Qt needs an application object for fonts; a command line has no display, so draw offscreen
    from app.report.content import gather
    from app.report.pdf_writer import ensure_application, write_pdf

    ensure_application()
    options = ReportOptions(title=args.title, customer=args.customer, author=args.author, logo_path=args.logo,
                            page_size=args.page_size)
    return write_pdf(gather(bench, args.run_ids, args.baseline, options, dict(args.price)), args.pdf)


def _cell_json(cell: Cell) -> dict[str, Any]:
    verdict = cell.judged.verdict if cell.judged is not None else None
    return {"value": cell.value, "text": cell.text, "note": cell.note, "ratio": cell.ratio,
            "ratio_text": cell.ratio_text, "best": cell.best, "verdict": cell.verdict_said,
            "verdict_kind": cell.kind, "factor": verdict.factor if verdict else None,
            "lo": verdict.lo if verdict else None, "hi": verdict.hi if verdict else None,
            "against": cell.judged.against if cell.judged else None, "settle": verdict.settle if verdict else None,
            "basis": verdict.basis if verdict else None, "partial": cell.partial or None,
            "until_stable": cell.until_stable_missed or None,
            "spread": asdict(cell.spread) if cell.spread is not None else None, "repeats": cell.repeats,
            "steadiness": cell.steadiness,
            "caveats": [c.tag for c in cell.caveats]}


def price_argument(text: str) -> tuple[str, HostPrice]:
    """argparse type of --price: "HOST=AMOUNT CURRENCY/PERIOD[, DATE[, SOURCE]]"."""
    host, sep, rest = text.partition("=")
    if not sep or not host.strip():
        raise argparse.ArgumentTypeError(f"expected HOST=PRICE, e.g. 'db1=120 EUR/month', not {text[:60]!r}")
    parts = [part.strip() for part in rest.split(",", 2)] + ["", ""]
    try:
        return host.strip(), parse_price(parts[0], parts[1], parts[2])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--price {host.strip()}: {exc}") from None


def dns_json(item: DnsPass) -> dict[str, Any]:
    """One resolver's pass of a dns run: its figures, the slowest names and the latency CDF."""
    return {"resolver": item.resolver, "pass": item.pass_name, "engine": item.meta.get("engine"),
            "queries": item.meta.get("queries"), "source": item.meta.get("source"), "values": item.values,
            "slowest": item.slowest, "cdf": item.cdf}


def comparison_json(comparison: Comparison, dns_lines: tuple[DnsLine, ...] = ()) -> dict[str, Any]:
    """The comparison for scripts: metrics, one entry per server with its cells, summary and caveats; the dns
    runs' every resolver and pass with their verdicts (dns_lines, as the CSV, the Compare tab and the PDF)."""
    return {
        "metrics": [{"key": m.key, "test": m.test, "label": m.label, "unit": m.unit, "better": m.better}
                    for m in comparison.metrics],
        "baseline": comparison.baseline.label if comparison.baseline else None,
        "rows": [{"label": row.label, "host": row.host, "run_ids": list(row.run_ids), "tests": list(row.tests),
                  "spec": row.spec, "baseline": row.baseline,
                  "cells": {key: _cell_json(cell) for key, cell in row.cells.items()},
                  "caveats": [{"tag": c.tag, "text": c.text} for c in row.caveats],
                  **({"dns": [dns_json(item) for item in row.dns]} if row.dns else {})}
                 for row in comparison.rows],
        "prices": {row.label: price_to_json(row.price) for row in comparison.rows if row.price is not None},
        "standings": [standing.to_json() for standing in comparison.standings],
        "tie_rule": TIE_RULE,
        "legend": LEGEND,
        "summary": comparison.summary(),
        "winners": comparison.winners(),
        "caveats": comparison.caveat_lines(),
        **({"dns_lines": [dns_export.line_json(line) for line in dns_lines]} if dns_lines else {}),
    }
