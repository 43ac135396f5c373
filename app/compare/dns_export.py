"""The dns lines of a comparison for the CSV and `compare --json`: every resolver and pass of every run, the
same values the Compare tab and the PDF show (widgets.dns_table), at full precision, with their verdicts.

The servers' table compares one line of a dns run (its first resolver's first pass); these rows hold all.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.compare.dns import DnsLine
from widgets.dns_table import VALUE_KEYS, line_values

VERDICT_KEYS = ("p50_ms", "p99_ms", "timeouts")
CSV_HEADERS = ("dns line", "host", "run id", "resolver", "pass", "engine", "queries", *VALUE_KEYS,
               *(f"{key} verdict" for key in VERDICT_KEYS), "note")


def line_json(line: DnsLine) -> dict[str, Any]:
    return {"label": line.label, "host": line.host, "run_id": line.run_id, "resolver": line.resolver,
            "pass": line.pass_, "engine": line.engine, "queries": line.queries, "values": line_values(line),
            "verdicts": {key: line.verdicts.get(key) for key in VERDICT_KEYS}, "note": line.note or None}


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    return str(value) if isinstance(value, int) else repr(float(value))   # full precision: the JSON's number


def csv_rows(lines: Sequence[DnsLine]) -> list[list[str]]:
    """The header, then a row per line, in the comparison's order (cold pass first)."""
    rows = [list(CSV_HEADERS)]
    for line in lines:
        values = line_values(line)
        rows.append([line.label, line.host, str(line.run_id), line.resolver, line.pass_, line.engine,
                     str(line.queries)] + [_csv_value(values[key]) for key in VALUE_KEYS]
                    + [line.verdicts.get(key, "") for key in VERDICT_KEYS] + [line.note])
    return rows
