"""Every resolver and both passes of the compared dns runs, with the same numbers in the CSV, `compare --json`,
the PDF's table and the Compare tab's table (one formatter, widgets.dns_table)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from app.cli import main
from app.compare.dns import dns_comparison
from app.compare.model import load_inputs
from tests.fixtures.dns_runs import store_dns_runs
from widgets.dns_table import COLUMNS, VALUE_KEYS, count, line_cells, ms
from widgets.format import number

EVERY_LINE = {(host, resolver, pass_) for host in ("branch-a", "branch-b") for resolver in ("10.0.0.2:53", "9.9.9.9:53")
              for pass_ in ("cold", "warm")}


@pytest.fixture
def dns_runs(cli_env, qapp):
    from app.workbench import Workbench

    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        ids = store_dns_runs(bench.store, ("branch-a", "branch-b"))
        lines = dns_comparison((run.record.id, run.record.host_name, run.results)
                               for run in load_inputs(bench, ids)).lines
        return ids, lines
    finally:
        bench.close()


def _shown(key: str, value: float | int | None) -> str:
    """A CSV or JSON value as the tables print it."""
    if key in ("total_s", "qps"):
        return number(value)
    return ms(value) if key.endswith("_ms") else count(value)


def test_csv_and_json_hold_every_resolver_and_pass_with_the_tables_numbers(dns_runs, capsys, tmp_path: Path):
    from app.report.pdf_dns import PDF_COLUMNS, table_texts

    ids, lines = dns_runs
    table = tmp_path / "dns.csv"
    assert main(["compare", *map(str, ids), "--csv", str(table), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    by_json = {(x["host"], x["resolver"], x["pass"]): x for x in document["dns_lines"]}
    assert set(by_json) == EVERY_LINE

    servers, _, dns_part = table.read_text().partition("\n\n")
    assert [r["server"] for r in csv.DictReader(io.StringIO(servers))] == ["branch-a", "branch-b"]
    by_csv = {(r["host"], r["resolver"], r["pass"]): r for r in csv.DictReader(io.StringIO(dns_part))}
    assert set(by_csv) == EVERY_LINE

    pdf = {(line.host, line.resolver, line.pass_): texts for line, texts in zip(lines, table_texts(lines), strict=True)}
    for line in lines:
        key = (line.host, line.resolver, line.pass_)
        cells = line_cells(line)    # the Compare tab's row (tests/gui checks the panel shows these)
        for index, name in enumerate(VALUE_KEYS, start=2):
            from_json = by_json[key]["values"][name]
            from_csv = by_csv[key][name]
            assert (from_csv == "" and from_json is None) or float(from_csv) == from_json, (key, name)
            assert _shown(name, from_json) == cells[index], (key, name, COLUMNS[index])
        assert pdf[key][1:] == [cells[i] for i in PDF_COLUMNS]
        assert by_json[key]["verdicts"]["p50_ms"] == by_csv[key]["p50_ms verdict"] == line.verdicts["p50_ms"]
    # the local resolver's 8 timeouts of each pass, from each host
    assert all(by_json[(host, "10.0.0.2:53", p)]["values"]["timeouts"] == 8 for host, _r, p in EVERY_LINE)
