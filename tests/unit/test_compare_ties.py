"""Ties: a comparison names a winner only when the difference is larger than the spread allows."""
from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone

import pytest

from app.compare.metrics import metric
from app.compare.model import RunInput, build, lead
from app.compare.table import csv_text, text_table
from app.compare.ties import ASSUMED_MARGIN_PERCENT, TIE_RULE, margin, standing, tie_rule
from storage.records import SPREAD_ACROSS_RUNS, ResultSample, RunRecord, Spread
from storage.spread import spread_of

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
META = {"python": "3.11.2", "zlib": "1.2.13", "openssl": "OpenSSL 3.0.11", "workers": 2}


def record(run_id: int, host: str, test: str = "cpu", minutes: int = 0, group: str = "", index: int | None = None
           ) -> RunRecord:
    start = T0 + timedelta(minutes=minutes)
    return RunRecord(run_id, host, test, "done", {}, start, start + timedelta(minutes=1), "1", "agent", "1", "",
                     (), "", uid=f"{run_id:032x}", repeat_group=group, repeat_index=index)


def cpu(multi: float, rates: list[float] | None, single: float | None = None) -> list[ResultSample]:
    """A CPU run whose figures carry the spread of their per-interval rates (None: not measured)."""
    spread = spread_of(rates, interval_s=0.5) if rates else None
    single = multi / 2 if single is None else single
    single_spread = spread_of([r / 2 for r in rates], interval_s=0.5) if rates else None
    return [ResultSample("cpu", "single", single, "ops/s", META, single_spread),
            ResultSample("cpu", "multi", multi, "ops/s", META, spread)]


def same_machine_three_times() -> list[RunInput]:
    # three runs of one machine: the figures differ a little, each run's rate wandered more than that
    return [RunInput(record(1, "local", minutes=0), None, cpu(20.4, [19.0, 21.0, 20.5, 21.2, 19.8])),
            RunInput(record(2, "local", minutes=0), None, cpu(19.6, [18.6, 20.8, 19.5, 20.1, 19.0])),
            RunInput(record(3, "local", minutes=0), None, cpu(21.1, [20.0, 22.0, 21.5, 20.3, 21.6]))]


def test_the_same_machine_three_times_ties_everywhere() -> None:
    comparison = build(same_machine_three_times())
    assert [row.label for row in comparison.rows] == ["local run 1", "local run 2", "local run 3"]
    for key in ("cpu:single", "cpu:multi"):
        cells = [row.cells[key] for row in comparison.rows]
        assert not any(cell.best for cell in cells), key
        assert all(cell.verdict.startswith("tie (within ±") for cell in cells), key

    table = text_table(comparison).text()
    assert "*" not in table
    assert table.count("tie (within ±") == 6

    headline = comparison.winners()
    assert len(headline) == 1 and "tie (within ±" in headline[0] and "leads" not in headline[0]
    assert headline[0].startswith("CPU all cores: local run 3, local run 1 and local run 2 tie (within ±")
    summary = comparison.summary()
    assert "tie (within ±" in summary and "leads" not in summary and "x " not in summary

    found = lead(comparison, metric("cpu:multi"))
    assert found is not None and found.is_tie and found.verdict.startswith("tie (within ±")

    rows = list(csv.DictReader(io.StringIO(csv_text(comparison))))
    assert {row["CPU all cores verdict"] for row in rows} == {found.verdict}
    assert {row["best in"] for row in rows} == {""}
    assert all(float(row["CPU all cores ± (range for ties)"]) > 0 for row in rows)
    assert {row["CPU all cores ± from"] for row in rows} == {"per-interval rates within the run"}


def test_two_hosts_far_apart_have_a_winner() -> None:
    runs = [RunInput(record(1, "small-vm"), None, cpu(20.0, [19.5, 20.5, 20.1, 19.8, 20.2])),
            RunInput(record(2, "big-iron"), None, cpu(160.0, [158.0, 161.0, 160.5, 159.0, 161.5]))]
    comparison = build(runs, baseline_run_id=1)
    small, big = comparison.rows
    assert big.cells["cpu:multi"].best and not small.cells["cpu:multi"].best
    assert big.cells["cpu:multi"].verdict == small.cells["cpu:multi"].verdict == ""
    assert "CPU all cores: big-iron leads with 160 ops/s, 8.0x the baseline small-vm." in comparison.winners()
    table = text_table(comparison).text()
    assert "*160 ±" in table and "tie" not in table
    rows = list(csv.DictReader(io.StringIO(csv_text(comparison))))
    assert [row["CPU all cores verdict"] for row in rows] == ["", "best"]
    assert [row["best in"] for row in rows] == ["", "CPU single core; CPU all cores"]


def test_equal_figures_are_never_both_best() -> None:
    """Two servers with the same figure were both marked best: a tie is no one's win."""
    runs = [RunInput(record(1, "a"), None, cpu(50.0, None)), RunInput(record(2, "b"), None, cpu(50.0, None))]
    comparison = build(runs)
    cells = [row.cells["cpu:multi"] for row in comparison.rows]
    assert [cell.best for cell in cells] == [False, False]
    assert cells[0].verdict == f"tie (within ±{2 * ASSUMED_MARGIN_PERCENT:.0f} %)"
    assert comparison.winners() == [f"CPU all cores: a and b tie (within ±{2 * ASSUMED_MARGIN_PERCENT:.0f} %) at "
                                    "about 50.0 ops/s."]
    # the CSV says that this ± was assumed, not measured
    rows = list(csv.DictReader(io.StringIO(csv_text(comparison))))
    assert {row["CPU all cores ± from"] for row in rows} == {"assumed: no spread measured"}


def test_a_tie_at_the_top_still_names_who_is_behind() -> None:
    runs = [RunInput(record(1, "a"), None, cpu(100.0, [98.0, 102.0, 100.0])),
            RunInput(record(2, "b"), None, cpu(101.0, [99.0, 103.0, 101.0])),
            RunInput(record(3, "c"), None, cpu(40.0, [39.0, 41.0, 40.0]))]
    line = build(runs).winners()[0]
    assert line.startswith("CPU all cores: b and a tie (within ±") and line.endswith("ahead of c.")


def test_a_repeat_group_is_one_row_with_its_median_and_spread_across_runs() -> None:
    group = "ab" * 16
    runs = [RunInput(record(1, "db1", group=group, index=1), None, cpu(100.0, [99.0, 101.0])),
            RunInput(record(2, "db1", group=group, index=2), None, cpu(104.0, [103.0, 105.0])),
            RunInput(record(3, "db1", group=group, index=3), None, cpu(101.0, [100.0, 102.0])),
            RunInput(record(4, "db2"), None, cpu(300.0, [298.0, 302.0]))]
    comparison = build(runs)
    assert [row.label for row in comparison.rows] == ["db1", "db2"]
    db1 = comparison.rows[0]
    assert db1.run_ids == (1, 2, 3)
    cell = db1.cells["cpu:multi"]
    assert cell.value == 101.0 and cell.repeats == 3 and cell.note == "median of 3 runs"
    assert cell.spread is not None and cell.spread.kind == SPREAD_ACROSS_RUNS and cell.spread.n == 3
    assert cell.spread.min == 100.0 and cell.spread.max == 104.0
    # the 95 % confidence half-width of the mean of three runs: t(2) = 4.303
    assert cell.margin == pytest.approx(4.303 * cell.spread.sd / 3 ** 0.5)
    assert cell.spread_text.startswith("±")
    assert comparison.rows[1].cells["cpu:multi"].best
    assert "(median of 3 runs)" in text_table(comparison).text()
    rows = list(csv.DictReader(io.StringIO(csv_text(comparison))))
    assert [row["CPU all cores ± from"] for row in rows] == ["across 3 repeats", "per-interval rates within the run"]


def test_margins_follow_the_rule() -> None:
    assert margin(200.0, None).value == pytest.approx(200.0 * ASSUMED_MARGIN_PERCENT / 100)
    assert margin(200.0, None).basis == "assumed"
    within = Spread(n=20, mean=200.0, sd=10.0, min=170.0, max=230.0, p5=184.0, p50=200.0, p95=216.0, interval_s=1.0)
    assert (margin(200.0, within).value, margin(200.0, within).basis) == (16.0, "intervals")
    steady = Spread(n=20, mean=200.0, sd=0.1, min=199.8, max=200.2, p5=199.9, p50=200.0, p95=200.1)
    assert margin(200.0, steady).value == pytest.approx(2.0)   # never narrower than ±1 %
    across = Spread(n=5, mean=200.0, sd=4.0, min=195.0, max=205.0, p5=195.4, p50=200.0, p95=204.6,
                    kind=SPREAD_ACROSS_RUNS)
    assert margin(200.0, across).value == pytest.approx(2.776 * 4.0 / 5 ** 0.5)
    one = Spread(n=1, mean=200.0, sd=0.0, min=200.0, max=200.0, p5=200.0, p50=200.0, p95=200.0)
    assert margin(200.0, one).basis == "assumed"


def test_standing_lower_is_better_and_touching_ranges_tie() -> None:
    result = standing([0.8, 0.2], [0.05, 0.05], higher_is_better=False)
    assert result is not None and result.winner == 1 and result.tied == ()
    touching = standing([10.0, 12.0], [1.0, 1.0], higher_is_better=True)
    assert touching is not None and touching.winner is None and touching.tied == (1, 0)
    assert touching.within_percent == pytest.approx(100 * 2.0 / 12.0)
    assert standing([1.0], [0.1], True) is None


def test_the_rule_reads_as_a_sentence() -> None:
    assert tie_rule() == TIE_RULE
    assert TIE_RULE.startswith("A server is named ahead on a figure only when its range does not overlap")
    assert "95 % confidence" in TIE_RULE and "5th-95th percentile" in TIE_RULE and "=" not in TIE_RULE
