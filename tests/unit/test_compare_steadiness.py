"""How steady a server was stands beside its headline figure: in the comparison's cells, the CSV, the
command line's text and the PDF's source (app.report.consistency)."""
from __future__ import annotations

import csv
import io

from app.compare.model import RunInput, build
from app.compare.table import csv_text, steadiness_lines
from app.report.consistency import consistency
from storage.records import ResultSample
from tests.unit.test_compare_ties import META, cpu, record


def steady(cv: float, steal: float) -> list[ResultSample]:
    return [ResultSample("cpu", "multi.cv", cv, "%", META), ResultSample("cpu", "multi.steal", steal, "%", META)]


def runs() -> list[RunInput]:
    return [RunInput(record(1, "bare-metal"), None, cpu(160.0, [159.0, 161.0, 160.0]) + steady(0.6, 0.0)),
            RunInput(record(2, "shared-vm"), None, cpu(150.0, [120.0, 180.0, 150.0]) + steady(18.4, 7.25)),
            RunInput(record(3, "old-box"), None, cpu(40.0, [39.0, 41.0]))]   # stored before steadiness existed


def test_each_headline_figure_carries_how_steady_the_server_was() -> None:
    comparison = build(runs())
    cells = {row.label: row.cells["cpu:multi"] for row in comparison.rows}
    assert cells["bare-metal"].steadiness == "variation 0.6 % · steal 0.0 %"
    assert cells["shared-vm"].steadiness == "variation 18.4 % · steal 7.2 %"
    assert cells["old-box"].steadiness == ""
    assert all(row.cells["cpu:single"].steadiness == "" for row in comparison.rows)   # not a headline figure

    rows = {row["server"]: row for row in csv.DictReader(io.StringIO(csv_text(comparison)))}
    assert rows["shared-vm"]["CPU all cores steadiness"] == "variation 18.4 % · steal 7.2 %"
    assert rows["old-box"]["CPU all cores steadiness"] == ""
    assert "CPU single core steadiness" not in rows["old-box"]

    assert steadiness_lines(comparison) == ["bare-metal, CPU all cores: variation 0.6 % · steal 0.0 %",
                                            "shared-vm, CPU all cores: variation 18.4 % · steal 7.2 %"]
    assert consistency(comparison, {}) == {("bare-metal", "cpu:multi"): "variation 0.6 % · steal 0.0 %",
                                           ("shared-vm", "cpu:multi"): "variation 18.4 % · steal 7.2 %"}
