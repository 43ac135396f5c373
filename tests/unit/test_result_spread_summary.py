"""How a figure's spread and the consistency figures read in `benchbay run`, `benchbay runs show` and the
results view: "±x %" beside the figure, its range, the variation, p99/p50 and CPU steal."""
from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace

from app.summary.results_page import results_page
from app.summary.spread_text import plus_minus, range_text, result_line
from app.summary.text import summary_text
from storage.records import SPREAD_ACROSS_RUNS, ResultSample, Spread
from storage.spread import spread_of

META = {"engine": "fio", "engine_version": "fio-3.33", "direct": True, "cached": False, "sync": "none"}


def _disk() -> list[ResultSample]:
    iops = spread_of([980.0, 1000.0, 1020.0, 1000.0, 1000.0], 1.0)
    mbps = spread_of([4.0, 4.1, 4.2, 4.1, 4.1], 1.0)
    return [ResultSample("disk", "randread_4k.iops", 1000.0, "IOPS", META, iops),
            ResultSample("disk", "randread_4k.mbps", 4.1, "MB/s", META, mbps),
            ResultSample("disk", "randread_4k.lat_p50", 0.1, "ms", META),
            ResultSample("disk", "randread_4k.lat_p99", 0.5, "ms", META),
            ResultSample("disk", "randread_4k.iops.cv", 1.414, "%", META),
            ResultSample("disk", "randread_4k.p99_over_p50", 5.0, "x", META),
            ResultSample("disk", "randread_4k.steal", 0.25, "%", META),
            ResultSample("disk", "syncwrite_4k.iops", 400.0, "IOPS", META)]


def test_plus_minus_and_range() -> None:
    spread = spread_of([980.0, 1000.0, 1020.0, 1000.0, 1000.0], 1.0)
    assert plus_minus(spread) == "±1.4 %"
    assert range_text(spread, "IOPS") == "980–1,020 IOPS over 5 × 1 s"
    across = Spread(3, 50.0, 10.0, 40.0, 60.0, 41.0, 50.0, 59.0, 0.0, SPREAD_ACROSS_RUNS)
    assert plus_minus(across) == "±20 %" and range_text(across) == "40.0–60.0 over 3 runs"
    assert plus_minus(None) == "" and plus_minus(spread_of([5.0])) == ""   # one sample says nothing


def test_run_summary_shows_spread_and_a_consistency_table() -> None:
    text = summary_text("db1", "done", _disk(), run_id=7)
    row = next(line for line in text.splitlines() if line.strip().startswith("randread_4k "))
    assert "1,000 ±1.4 %" in row and "4.10 ±1.7 %" in row
    plain = next(line for line in text.splitlines() if line.strip().startswith("syncwrite_4k "))
    assert "±" not in plain   # no spread: the figure alone
    table = text.split("consistency (")[1].splitlines()
    line = next(line for line in table if line.strip().startswith("randread_4k"))
    assert "980–1,020 over 5 × 1 s" in line and "1.4" in line and "5.00x" in line and "0.2" in line
    # the same from results as `benchbay run --json` prints them (dicts)
    assert summary_text("db1", "done", [asdict(r) for r in _disk()], run_id=7) == text


def test_runs_show_line_names_the_range_and_kind() -> None:
    line = result_line(_disk()[0])
    assert "1000 IOPS" in line and "±1.4 % (980–1,020 over 5 × 1 s, within run)" in line
    assert "±" not in result_line(_disk()[2])


def test_results_view_cells_carry_the_spread() -> None:
    run = SimpleNamespace(id=7, host_name="db1", test="disk", status="done")
    page = results_page(run, _disk())
    first = page.table.rows[0]
    assert first[1].text == "1,000 ±1.4 %" and "980–1,020 over 5 × 1 s" in first[1].tip
    assert any(line.startswith("Consistency, Random read 4 KiB: IOPS 980–1,020") and "p99/p50 5.00x" in line
               for line in page.summary_lines)
