"""A restore is one timed operation: its figures have no spread within the run, and every view says
"spread: from repeats only" beside them instead of showing them bare; repeats give them a spread."""
from __future__ import annotations

from dataclasses import replace

from app.compare.model import RunInput, build
from app.compare.table import text_table
from app.summary.services import restore_lines
from app.summary.spread_basis import FROM_REPEATS_ONLY, from_repeats_only, repeats_only_line
from storage.records import ResultSample, Spread
from tests.fixtures.comparison_runs import restore_results, within_run
from tests.unit.test_compare_model import record
from widgets.compare_table import figure_text

KEY = "restore:restore_jN.total_s"


def restore_run(run_id: int, host: str, jn_s: float, group: str = "", index: int | None = None) -> RunInput:
    run = record(run_id, host, "restore", minutes=run_id)
    return RunInput(replace(run, repeat_group=group, repeat_index=index), None, restore_results(2 * jn_s, jn_s, 8))


def test_single_restore_runs_say_their_spread_comes_from_repeats_only() -> None:
    comparison = build([restore_run(1, "db-01", 140.0), restore_run(2, "db-02", 700.0)])
    cell = comparison.rows[0].cells[KEY]
    assert cell.note == FROM_REPEATS_ONLY and cell.judged.verdict.basis == "noise_floor"
    assert FROM_REPEATS_ONLY in figure_text(cell, with_ratio=False)          # the window's table
    table = text_table(comparison).text()                                   # the command line and the PDF table
    assert table.count(FROM_REPEATS_ONLY) == 2 * 2                          # -j 1 and -j N, both servers
    assert comparison.rows[0].cells[KEY].best                               # 5x apart: still a winner


def test_repeated_restores_have_a_spread_and_no_such_note() -> None:
    runs = [restore_run(i, "db-01", 140.0 + i, "g1", i) for i in (1, 2, 3)]
    runs += [restore_run(i, "db-02", 700.0 + i, "g2", i - 3) for i in (4, 5, 6)]
    comparison = build(runs)
    cell = comparison.rows[0].cells[KEY]
    assert cell.repeats == 3 and cell.spread is not None and cell.spread.n == 3
    assert comparison.rows[1].cells[KEY].judged.verdict.basis == "repeats"
    assert FROM_REPEATS_ONLY not in cell.note and "median of 3 runs" in cell.note


def test_other_tests_and_measured_spreads_get_no_note() -> None:
    spread = within_run(100.0, 3.0)
    assert not from_repeats_only("disk", None)
    assert not from_repeats_only("restore", spread)
    assert from_repeats_only("restore", None) and from_repeats_only("restore", Spread(n=1, mean=1.0, sd=0.0,
                                                                                      min=1.0, max=1.0, p5=1.0,
                                                                                      p50=1.0, p95=1.0))


def test_the_results_view_lines_say_it_for_pg_and_file_level_restores() -> None:
    lines = restore_lines(restore_results(280.0, 140.0, 8))
    assert lines[-1].startswith("Spread: from repeats only: a restore is one timed operation")
    meta = {"kind": "file", "reason": "PostgreSQL client tools not found", "files": 2048, "bytes": 16_800_000,
            "archive_bytes": 1_200_000, "size_mb": 16}
    files = [{"test": "restore", "metric": "file_restore.total_s", "value": 2.0, "unit": "s", "metadata": meta}]
    assert restore_lines(files)[-1].startswith("Spread: from repeats only")
    assert repeats_only_line([ResultSample("disk", "randread_4k.iops", 1.0, "IOPS", {})], "disk") == ""
    assert repeats_only_line(files, "cpu") == ""
