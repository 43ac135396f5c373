"""Verdicts: a server is named ahead only when the difference exceeds how far the next run could land;
otherwise a tie (within ±z) or "can't tell yet" with what would settle it."""
from __future__ import annotations

import csv
import io
import json
import math
import re
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.cli.compare import comparison_json
from app.compare.model import RunInput, build
from app.compare.noise_floors import floor_for, parse_floors, shipped_floors
from app.compare.standings import Standing, standing_line
from app.compare.table import csv_text, text_table
from app.compare.ties import (
    AHEAD,
    BEHIND,
    CANT_TELL,
    TIE,
    TIE_RULE,
    Runs,
    Verdict,
    judge,
    range_text,
    same_decimals,
    tie_rule,
)
from app.engine.repeat_record import unsettled_event, until_stable_missed
from storage.records import ResultSample, RunRecord
from storage.spread import spread_of

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
META = {"python": "3.11.2", "zlib": "1.2.13", "openssl": "OpenSSL 3.0.11", "workers": 2}
CPU_FLOOR = floor_for("cpu:multi").log_sd


def record(run_id: int, host: str, test: str = "cpu", minutes: int = 0, group: str = "", index: int | None = None,
           status: str = "done") -> RunRecord:
    start = T0 + timedelta(minutes=minutes)
    return RunRecord(run_id, host, test, status, {}, start, start + timedelta(minutes=1), "1", "agent", "1", "",
                     (), "", uid=f"{run_id:032x}", repeat_group=group, repeat_index=index)


def cpu(multi: float, rates: list[float] | None, single: float | None = None, steal: float | None = None
        ) -> list[ResultSample]:
    """A CPU run whose figures carry the spread of their per-interval rates (None: not measured)."""
    spread = spread_of(rates, interval_s=0.5) if rates else None
    single = multi / 2 if single is None else single
    single_spread = spread_of([r / 2 for r in rates], interval_s=0.5) if rates else None
    out = [ResultSample("cpu", "single", single, "ops/s", META, single_spread),
           ResultSample("cpu", "multi", multi, "ops/s", META, spread)]
    if steal is not None:
        out.append(ResultSample("cpu", "multi.steal", steal, "%", {}))
    return out


def disk(iops: float, p99: float = 0.5) -> list[ResultSample]:
    meta = {"engine": "fio", "engine_version": "fio-3.36", "direct": True}
    return [ResultSample("disk", "randread_4k.iops", iops, "IOPS", meta),
            ResultSample("disk", "randread_4k.lat_p99", p99, "ms", meta)]


def repeats(run_id: int, host: str, values: list[float], test: str = "cpu") -> list[RunInput]:
    group = f"{run_id:032x}"
    make = (lambda v: cpu(v, None)) if test == "cpu" else disk
    return [RunInput(record(run_id + i, host, test, group=group, index=i + 1), None, make(value))
            for i, value in enumerate(values)]


def same_machine_three_times() -> list[RunInput]:
    # three single runs of one machine: each run was steady, but that says nothing of the next run
    return [RunInput(record(1, "local", minutes=0), None, cpu(20.4, [20.3, 20.5, 20.4, 20.4, 20.5])),
            RunInput(record(2, "local", minutes=0), None, cpu(19.6, [19.5, 19.7, 19.6, 19.6, 19.5])),
            RunInput(record(3, "local", minutes=0), None, cpu(21.1, [21.0, 21.2, 21.1, 21.1, 21.0]))]


def test_the_same_machine_three_times_never_names_a_winner() -> None:
    """Single runs 7 % apart with steady per-second rates: the old rule named winners on within-run
    steadiness; the noise floor (runs of one host vary ~10 %) says no one is ahead."""
    comparison = build(same_machine_three_times())
    for key in ("cpu:single", "cpu:multi"):
        cells = [row.cells[key] for row in comparison.rows]
        assert not any(cell.best for cell in cells), key
        assert sorted(cell.kind for cell in cells) == ["cant_tell", "cant_tell", "reference"], key
        assert all(cell.settle == "run 2 more repeats on each" for cell in cells if cell.kind == CANT_TELL)
        assert all(cell.verdict_said.endswith(": run 2 more repeats on each") for cell in cells
                   if cell.kind == CANT_TELL)
    table = text_table(comparison).text()
    assert "*" not in table and "ahead" not in table
    summary = comparison.summary()
    assert "can't tell yet vs local run 3" in summary and "ahead" not in summary
    assert [s.basis for s in comparison.standings] == ["noise_floor"] * 3


def test_half_the_cpu_is_behind_by_its_factor_with_single_runs() -> None:
    runs = [RunInput(record(1, "honA"), None, cpu(11.1, None)), RunInput(record(2, "honH"), None, cpu(5.4, None))]
    comparison = build(runs)
    whole, half = comparison.rows
    assert whole.cells["cpu:multi"].best and whole.cells["cpu:multi"].verdict == "leader"
    cell = half.cells["cpu:multi"]
    verdict = cell.judged.verdict
    assert cell.kind == BEHIND and verdict.factor == pytest.approx(5.4 / 11.1)
    assert verdict.lo < verdict.factor < verdict.hi < 1.0
    factor, lo, hi = same_decimals(verdict.factor, verdict.lo, verdict.hi)
    assert cell.verdict == f"{factor}x of honA ({lo}–{hi})"
    assert cell.verdict.startswith("0.49x of honA (")
    line = next(line for line in comparison.winners() if line.startswith("CPU all cores"))
    assert line.startswith("CPU all cores: honA leads with 11.1 ops/s; honH: 0.49x of honA (")


def test_with_a_baseline_ahead_says_by_how_much() -> None:
    runs = [RunInput(record(1, "small-vm"), None, cpu(20.0, None)), RunInput(record(2, "big-iron"), None,
                                                                             cpu(160.0, None))]
    comparison = build(runs, baseline_run_id=1)
    small, big = comparison.rows
    assert big.cells["cpu:multi"].kind == AHEAD and big.cells["cpu:multi"].best
    assert small.cells["cpu:multi"].verdict == "baseline" and not small.cells["cpu:multi"].best
    assert big.cells["cpu:multi"].verdict.startswith("ahead of small-vm by 8.0")
    assert "CPU all cores: small-vm (baseline) has 20.0 ops/s; big-iron: ahead of small-vm by 8.0" \
        in comparison.summary()
    rows = list(csv.DictReader(io.StringIO(csv_text(comparison))))
    assert [row["CPU all cores verdict"] for row in rows] == ["reference", "ahead"]
    assert [row["best in"] for row in rows] == ["", "CPU single core; CPU all cores"]


def test_skewed_repeats_of_a_throttled_disk_are_behind_with_a_factor_inside_the_runs() -> None:
    """The issue's case: 3,422 / 3,710 / 8,053 IOPS against 999.6 / 999.8 / 999.6. The t-table rule made it a
    "tie (within ±174 %)"; every run of one beat every run of the other."""
    runs = repeats(1, "fast", [3422.0, 3710.0, 8053.0], "disk") + repeats(10, "throttled", [999.6, 999.8, 999.6],
                                                                           "disk")
    comparison = build(runs)
    fast, slow = comparison.rows
    key = "disk:randread_4k.iops"
    assert fast.cells[key].best and fast.cells[key].kind == "reference"
    verdict = slow.cells[key].judged.verdict
    assert slow.cells[key].kind == BEHIND and verdict.basis == "repeats"
    assert (verdict.pairs_won, verdict.pairs_total) == (0, 9)
    standing = next(s for s in comparison.standings if s.row == "throttled" and s.figure == key)
    assert (standing.verdict, standing.to_json()["pairs_won"], standing.to_json()["pairs"]) == ("behind", 0, 9)
    # the factor and its range lie within what the runs themselves allow
    assert 999.6 / 8053.0 * (1 - 1e-9) <= verdict.lo <= verdict.factor <= verdict.hi <= 999.8 / 3422.0 * (1 + 1e-9)
    assert verdict.factor == pytest.approx(999.6 / 3710.0)
    # and the other way round
    ahead = judge(Runs((3422.0, 3710.0, 8053.0), 0.1), Runs((999.6, 999.8, 999.6), 0.1), True)
    assert ahead.kind == AHEAD and ahead.lo == pytest.approx(3422.0 / 999.8) and ahead.hi == pytest.approx(8053 / 999.6)
    assert ahead.text("throttled").startswith("ahead of throttled by 3.7x (3.4–8.1)")


def test_identical_hosts_are_never_ahead_or_behind() -> None:
    """Runs of identical hosts with 5-10 % skewed run-to-run noise, single runs and three repeats."""
    rng = np.random.default_rng(19)
    kinds = []
    for trial in range(150):
        n = 1 if trial % 2 else 3
        sd = rng.uniform(0.05, 0.10)
        a, b = 10.0 * np.exp(rng.normal(0, sd, n)), 10.0 * np.exp(rng.normal(0, sd, n))
        kinds.append(judge(Runs(tuple(a), CPU_FLOOR), Runs(tuple(b), CPU_FLOOR), True).kind)
    assert AHEAD not in kinds and BEHIND not in kinds
    assert TIE in kinds   # three repeats each can say "tie"; one run each cannot


def test_steady_repeats_tie_and_say_within_what() -> None:
    runs = repeats(1, "a", [10.0, 10.2, 10.1]) + repeats(10, "b", [10.1, 9.9, 10.05])
    comparison = build(runs)
    cells = [row.cells["cpu:multi"] for row in comparison.rows]
    assert [c.kind for c in cells] == ["reference", TIE] and not any(c.best for c in cells)
    assert cells[1].verdict.startswith("tie with a (within ±") and cells[1].verdict.endswith(" %)")
    # the tie does not quote the leader's figure as shared
    line = next(line for line in comparison.winners() if line.startswith("CPU all cores"))
    # ... nor calls the higher of two tied figures a lead
    assert line.startswith("CPU all cores: a has 10.1 ops/s; b: tie with a (within ±")
    assert "at about" not in line


def test_a_wide_range_is_cant_tell_with_what_would_settle_it() -> None:
    # a 15 % difference, three runs each with 5 % noise: not beyond the noise, too wide for a tie
    found = judge(Runs((11.5, 12.1, 11.0), CPU_FLOOR), Runs((10.0, 10.5, 9.6), CPU_FLOOR), True)
    assert found.kind == CANT_TELL and 1 < found.lo < 1.1 and found.hi > 1.25
    assert found.settle is not None and re.fullmatch(r"run \d+ more repeats? on each", found.settle)
    assert found.text("x").startswith("can't tell yet vs x (")
    # far too noisy: says that repeats will hardly settle it, not a hopeless count
    noisy = judge(Runs((10.0, 14.0, 9.0), CPU_FLOOR), Runs((11.0, 8.0, 12.5), CPU_FLOOR), True)
    assert noisy.kind == CANT_TELL and noisy.lo < 1 < noisy.hi
    assert "more than 20 more repeats on each would be needed" in noisy.settle


def test_steal_widens_a_single_run_and_is_named_in_what_would_settle_it() -> None:
    quiet = judge(Runs((16.0,), CPU_FLOOR), Runs((10.0,), CPU_FLOOR), True)
    assert quiet.kind == AHEAD
    noisy = judge(Runs((16.0,), CPU_FLOOR, steal_percent=12.0, label="honA"), Runs((10.0,), CPU_FLOOR), True)
    assert noisy.kind == CANT_TELL and noisy.lo < quiet.lo
    assert "steal 12 % on honA: measure when the host is quiet" in noisy.settle
    # the stored steal of a run reaches the verdict
    comparison = build([RunInput(record(1, "honA"), None, cpu(16.0, None, steal=12.0)),
                        RunInput(record(2, "honB"), None, cpu(10.0, None))])
    assert "steal 12 % on honA" in comparison.rows[1].cells["cpu:multi"].verdict_said
    assert "steal 12 % on honA" in comparison.summary()


def test_tail_latency_has_a_wider_floor_than_throughput() -> None:
    runs = [RunInput(record(1, "a", "disk"), None, disk(10_000.0, 0.4)),
            RunInput(record(2, "b", "disk"), None, disk(10_000.0, 1.6))]   # p99 4x apart, one run each
    comparison = build(runs)
    assert comparison.rows[1].cells["disk:randread_4k.lat_p99"].kind == CANT_TELL
    # measured on one real disk: its random-read p99 varied more from run to run than its IOPS
    assert floor_for("disk:randread_4k.lat_p99").rsd_percent > floor_for("disk:randread_4k.iops").rsd_percent


def test_equal_figures_are_never_both_best() -> None:
    runs = [RunInput(record(1, "a"), None, cpu(50.0, None)), RunInput(record(2, "b"), None, cpu(50.0, None))]
    cells = [row.cells["cpu:multi"] for row in build(runs).rows]
    assert [cell.best for cell in cells] == [False, False]
    assert [cell.kind for cell in cells] == ["reference", CANT_TELL]


def test_a_cancelled_run_is_never_the_reference_nor_starred_and_its_caveat_stays_on_it() -> None:
    runs = [RunInput(record(1, "honA", "disk", status="cancelled"), None, disk(90_000.0)),
            RunInput(record(2, "honA", "cpu"), None, cpu(11.0, None)),
            RunInput(record(3, "honB", "disk"), None, disk(20_000.0)),
            RunInput(record(4, "honB", "cpu"), None, cpu(11.2, None))]
    comparison = build(runs)
    a, b = comparison.rows
    key = "disk:randread_4k.iops"
    assert not a.cells[key].best and a.cells[key].partial == "cancelled run"
    assert a.cells[key].verdict == "not compared: cancelled run" and a.cells[key].kind == CANT_TELL
    assert b.cells[key].kind == "reference"
    assert [(s.verdict, s.against) for s in comparison.standings if s.figure == key] == [("cant_tell", "honB"),
                                                                                         ("reference", "honB")]
    assert all(s.row != "honA" for s in comparison.standings if s.verdict == "reference" and s.figure == key)
    assert "90,000" not in " ".join(comparison.winners())
    # the cancelled disk run's caveat stands beside its disk figures, not beside honA's completed CPU run
    assert a.cells[key].tags == "cancelled"
    assert a.cells["cpu:multi"].tags == "" and a.cells["cpu:single"].tags == ""


def test_a_cancelled_repeat_stays_out_of_the_median() -> None:
    runs = repeats(1, "a", [10.0, 10.2, 10.1])
    runs.append(RunInput(record(9, "a", group=runs[0].record.repeat_group, index=4, status="cancelled"), None,
                         cpu(1.0, None)))
    cell = build(runs).rows[0].cells["cpu:multi"]
    assert cell.value == 10.1 and cell.repeats == 3 and cell.partial == ""


def test_best_of_sweep_is_compared_only_at_the_same_worker_count() -> None:
    def sweep(run_id: int, host: str, points: dict[int, float]) -> RunInput:
        return RunInput(record(run_id, host, "disk"), None,
                        [ResultSample("disk", f"sweep_randread_4k_w{w}.iops", v, "IOPS", {})
                         for w, v in points.items()])
    comparison = build([sweep(1, "one", {1: 5_000.0, 16: 60_000.0}), sweep(2, "two", {1: 9_000.0, 4: 20_000.0})])
    cells = [row.cells["disk:sweep_best.iops"] for row in comparison.rows]
    assert not any(cell.best for cell in cells)
    assert cells[1].kind == CANT_TELL and "best at 4 workers, one at 16" in cells[1].verdict
    assert [cell.note for cell in cells] == ["16 workers", "4 workers"]


def test_json_csv_and_summary_say_the_same_numbers() -> None:
    runs = [RunInput(record(1, "honA"), None, cpu(11.1, None)), RunInput(record(2, "honH"), None, cpu(5.4, None)),
            RunInput(record(3, "honT"), None, cpu(10.9, None))]
    comparison = build(runs, baseline_run_id=3)
    document = json.loads(json.dumps(comparison_json(comparison)))
    standings = [s for s in document["standings"] if s["figure"] == "cpu:multi"]
    assert [(s["row"], s["verdict"], s["against"]) for s in standings] == [
        ("honA", "cant_tell", "honT"), ("honH", "behind", "honT"), ("honT", "reference", "honT")]
    assert set(standings[0]) >= {"figure", "label", "row", "run_ids", "verdict", "factor", "lo", "hi", "against",
                                 "settle", "basis"}
    assert standings[1]["run_ids"] == [2] and standings[1]["basis"] == "noise_floor"
    rows = {row["server"]: row for row in csv.DictReader(io.StringIO(csv_text(comparison)))}
    for s in standings:
        row = rows[s["row"]]
        assert row["CPU all cores verdict"] == s["verdict"]
        for field, column in (("factor", "factor"), ("lo", "factor lo"), ("hi", "factor hi")):
            assert (float(row[f"CPU all cores {column}"]) if row[f"CPU all cores {column}"] else None) == s[field]
        assert row["CPU all cores verdict text"] == s["text"]
    behind = standings[1]
    factor, lo, hi = same_decimals(behind["factor"], behind["lo"], behind["hi"])
    words = f"honH: {factor}x of honT ({lo}–{hi})"
    assert words in document["summary"] and words in " ".join(document["winners"])
    assert document["rows"][1]["cells"]["cpu:multi"]["factor"] == behind["factor"]


def test_until_stable_that_missed_its_target_is_flagged_in_table_and_csv() -> None:
    runs = repeats(1, "a", [10.0, 13.0, 8.0])
    flagged = until_stable_missed([unsettled_event(3, 18.2, 2.0, "multi")])
    assert flagged == "until stable: not reached, RSE 18 % after 3 runs, target 2 %"
    runs[-1] = RunInput(runs[-1].record, None, runs[-1].results, until_stable_missed=flagged)
    comparison = build(runs + [RunInput(record(9, "b"), None, cpu(9.0, None))])
    assert comparison.rows[0].cells["cpu:multi"].until_stable_missed == flagged
    assert flagged in text_table(comparison).text()
    rows = list(csv.DictReader(io.StringIO(csv_text(comparison))))
    assert flagged in rows[0]["CPU all cores caveats"] and flagged not in rows[1]["CPU all cores caveats"]


def test_every_compared_figure_has_a_shipped_noise_floor_that_says_where_it_came_from() -> None:
    floors = shipped_floors()
    for item in CATALOGUE.compared_metrics():
        assert item.key in floors, item.key
        assert floors[item.key].how and floors[item.key].rsd_percent > 0
    with pytest.raises(ValueError, match="rsd_percent"):
        parse_floors({"cpu": {"cpu:multi": {"rsd_percent": -1}}})
    assert math.isclose(floor_for("nothing:known.lat_p99").rsd_percent, 80.0)


def test_the_method_reads_as_a_sentence() -> None:
    assert tie_rule() == TIE_RULE
    assert "bootstrap" in TIE_RULE and "noise floor" in TIE_RULE and "can't tell yet" in TIE_RULE


def test_a_single_run_is_judged_with_its_hosts_own_repeats_when_they_varied_more_than_the_floor(workbench) -> None:
    from app.compare.model import load_inputs

    store = workbench.store

    def stored(host: str, value: float, group: str = "", index: int | None = None) -> int:
        run = store.runs.create(host, "cpu", {})
        store.runs.add_results(run, cpu(value, None))
        store.runs.finish(run, "done")
        if group:
            store.runs.set_repeat(run, group, index)
        return run

    quiet, noisy = stored("quiet", 10.0), stored("noisy", 20.0)
    single = build(load_inputs(workbench, [quiet, noisy])).rows[0].cells["cpu:multi"]
    assert single.kind == BEHIND     # half with one run each: beyond the CPU floor
    for index, value in enumerate((10.0, 16.0, 7.0), start=1):   # the noisy host's earlier repeats varied a lot
        stored("noisy", value, "ab" * 16, index)
    widened = build(load_inputs(workbench, [quiet, noisy])).rows[0].cells["cpu:multi"]
    assert widened.kind == CANT_TELL and widened.judged.verdict.hi > single.judged.verdict.hi
    # a steady host's repeats never narrow the floor
    for index, value in enumerate((10.0, 10.01, 10.02), start=1):
        stored("quiet", value, "cd" * 16, index)
    again = build(load_inputs(workbench, [quiet, noisy])).rows[0].cells["cpu:multi"]
    assert again.judged.verdict.hi == pytest.approx(widened.judged.verdict.hi)


def test_one_server_alone_is_said_with_its_figure_not_as_a_leader() -> None:
    comparison = build([RunInput(record(1, "local"), None, cpu(20.4, None))])
    assert comparison.winners() == ["CPU all cores: 20.4 ops/s on local."]
    cell = comparison.rows[0].cells["cpu:multi"]
    assert cell.verdict == "" and not cell.best and cell.kind == "reference"


def test_one_run_of_a_repeat_group_compared_alone_is_judged_with_its_groups_spread(workbench) -> None:
    from app.compare.model import load_inputs

    store = workbench.store
    ids: dict[str, list[int]] = {}
    # two identical hosts whose runs wander far more than the CPU floor, each repeated three times
    for host, values, group in (("twin-a", (10.0, 25.0, 6.0), "ab" * 16), ("twin-b", (20.0, 9.0, 30.0), "cd" * 16)):
        for index, value in enumerate(values, start=1):
            run = store.runs.create(host, "cpu", {})
            store.runs.add_results(run, cpu(value, None))
            store.runs.finish(run, "done")
            store.runs.set_repeat(run, group, index)
            ids.setdefault(host, []).append(run)
    # one run of each group on its own: a 2x gap between them is within how far those hosts' runs land
    cell = build(load_inputs(workbench, [ids["twin-a"][0], ids["twin-b"][0]])).rows[0].cells["cpu:multi"]
    assert cell.kind == CANT_TELL


def test_a_range_too_wide_to_mean_anything_says_so_instead_of_its_digits() -> None:
    assert range_text(0.71, 1.9) == "(0.71–1.90x)"
    assert range_text(0.0014, 495.0) == "(from below 0.01x to above 100x)"
    assert range_text(0.05, 240.0) == "(from 0.05x to above 100x)"
    wide = Verdict(CANT_TELL, 1.3, 0.0014, 495.0, "noise_floor", "run 2 more repeats on each")
    assert wide.text("iops") == "can't tell yet vs iops (from below 0.01x to above 100x): run 2 more repeats on each"


def test_the_headline_calls_a_figure_a_lead_only_beside_a_server_behind_it() -> None:
    from app.compare.ties import BEHIND, CANT_TELL, REFERENCE
    from app.report.content import Headline

    def standing(row: str, verdict: str, text: str) -> Standing:
        return Standing("cpu:x", "CPU", "ops/s", row, (1,), 10.0, "10.0", verdict, None, None, None, "a", None,
                        "noise_floor", text)

    unsure = (standing("b", CANT_TELL, "can't tell yet vs a (0.60–1.70x)"),)
    behind = (standing("c", BEHIND, "0.50x of a (0.45–0.55)"),)
    assert Headline("CPU", "a", "", unsure, value="10.8 ops/s").text.startswith("CPU: a has 10.8 ops/s; b: can't")
    assert Headline("CPU", "a", "", unsure + behind, value="10.8 ops/s").reference_text == "a leads with 10.8 ops/s"
    assert standing_line("CPU", "ops/s", (standing("a", REFERENCE, "leader"),) + unsure).startswith(
        "CPU: a has 10.0 ops/s; b:")
