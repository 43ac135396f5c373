"""Repeats: N runs or until stable form one group in the store, which export and import keep."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest

from app.engine.orchestrator import RunControl, RunOutcome, RunRequest
from app.engine.repeats import (
    MIN_REPEATS,
    RepeatPlan,
    RepeatPlanError,
    group_rse,
    parse_repeat,
    relative_standard_error,
    run_repeated,
)
from app.errors import AppError
from storage.records import ResultSample, RunStatus


class ScriptedBench:
    """Stores a run per call with the next CPU score of the script, as Workbench.run would (no agent)."""

    def __init__(self, workbench, scores: list[float], statuses: list[str] | None = None,
                 refuse_at: int | None = None) -> None:
        self.store = workbench.store
        self.find_run = workbench.find_run
        self.scores: Iterator[float] = iter(scores)
        self.statuses = iter(statuses or [])
        self.refuse_at = refuse_at
        self.calls = 0

    def run(self, request: RunRequest, control=None, on_sample=None, on_event=None, password=None) -> RunOutcome:
        self.calls += 1
        if self.calls == self.refuse_at:
            raise AppError("db1: connection refused")
        run_id = self.store.runs.create(request.host, request.test, {"params": request.params})
        status = next(self.statuses, "done")
        if status == "done":
            score = next(self.scores)
            self.store.runs.add_results(run_id, [ResultSample("cpu", "multi", score, "ops/s"),
                                                 ResultSample("cpu", "single", score / 2, "ops/s")])
        self.store.runs.finish(run_id, status)
        return RunOutcome(run_id, request.host, RunStatus(status), "", 0)


REQUEST = RunRequest("db1", "cpu", {"seconds": 1.0})


def test_parse_repeat() -> None:
    assert parse_repeat("3") == RepeatPlan(count=3)
    assert parse_repeat("1").repeats is False
    stable = parse_repeat("until-stable", max_repeats=6, target_rse=1.5)
    assert stable.until_stable and stable.most == 6 and stable.target_rse == 1.5
    assert "until stable" in stable.describe()
    for bad, said in (("0", "1-100"), ("101", "1-100"), ("three", "until-stable"), ("-2", "until-stable"),
                      ("9" * 40, "until-stable")):
        with pytest.raises(RepeatPlanError, match=said):
            parse_repeat(bad)
    with pytest.raises(RepeatPlanError, match="most runs"):
        parse_repeat("until-stable", max_repeats=2)
    with pytest.raises(RepeatPlanError, match="relative standard error"):
        parse_repeat("until-stable", target_rse=0)
    with pytest.raises(RepeatPlanError, match="relative standard error"):
        parse_repeat("until-stable", target_rse=float("nan"))


def test_relative_standard_error() -> None:
    assert relative_standard_error([100.0]) is None
    assert relative_standard_error([0.0, 0.0]) is None
    assert relative_standard_error([98.0, 100.0, 102.0]) == pytest.approx(100 * 2.0 / 3 ** 0.5 / 100)
    rse, judged = group_rse("cpu", [{"multi": 98.0, "single": 10.0}, {"multi": 102.0, "single": 90.0}])
    assert judged == "multi" and rse == pytest.approx(2.0)   # the headline figure, not every figure


def test_three_runs_form_one_group_in_order(workbench) -> None:
    bench = ScriptedBench(workbench, [100.0, 103.0, 99.0])
    seen = []
    outcome = run_repeated(bench, REQUEST, parse_repeat("3"), on_event=lambda host, e: seen.append(e),
                           on_run=lambda index, run, rse: seen.append({"type": "ran", "index": index}))
    assert bench.calls == 3 and len(outcome.run_ids) == 3 and outcome.status == RunStatus.DONE
    assert outcome.stable is None and outcome.reason == "3 runs as asked"
    assert [(e["type"], e["index"]) for e in seen] == [("repeat", 1), ("ran", 1), ("repeat", 2), ("ran", 2),
                                                         ("repeat", 3), ("ran", 3)]
    grouped = workbench.store.runs.repeats(outcome.group)
    assert [(r.id, r.repeat_index) for r in grouped] == [(i, n) for n, i in enumerate(outcome.run_ids, 1)]
    assert {r.repeat_group for r in grouped} == {outcome.group}


def test_until_stable_stops_once_the_mean_is_known_well_enough(workbench) -> None:
    # three runs leave the mean uncertain by just over 2 %, the fourth brings it below
    scores = [100.0, 104.0, 97.0, 101.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]
    bench = ScriptedBench(workbench, scores)
    outcome = run_repeated(bench, REQUEST, parse_repeat("until-stable"))
    expected = next(n for n in range(MIN_REPEATS, 11) if relative_standard_error(scores[:n]) < 2.0)
    assert expected == 4
    assert len(outcome.run_ids) == expected and outcome.stable is True
    assert outcome.rse_percent is not None and outcome.rse_percent < 2.0
    assert outcome.reason.startswith(f"stable after {expected} runs: multi varies by")


def test_until_stable_gives_up_at_the_cap_and_says_so(workbench) -> None:
    bench = ScriptedBench(workbench, [100.0, 150.0, 60.0, 140.0, 70.0])
    outcome = run_repeated(bench, REQUEST, parse_repeat("until-stable", max_repeats=4))
    assert len(outcome.run_ids) == 4 and outcome.stable is False
    assert outcome.reason.startswith("not stable after 4 runs (the most allowed): multi RSE")
    # the store keeps it, so compare, the CSV and the PDF flag the group's figures too
    from app.compare.model import build, load_inputs

    comparison = build(load_inputs(workbench, outcome.run_ids))
    flagged = comparison.rows[0].cells["cpu:multi"].until_stable_missed
    assert flagged.startswith("until stable: not reached, RSE ") and flagged.endswith("after 4 runs, target 2 %")


def test_steady_runs_still_run_at_least_three_times(workbench) -> None:
    bench = ScriptedBench(workbench, [100.0] * 10)
    outcome = run_repeated(bench, REQUEST, parse_repeat("until-stable"))
    assert len(outcome.run_ids) == MIN_REPEATS and outcome.stable is True


def test_a_failed_run_ends_the_repeats_and_a_later_refusal_keeps_what_ran(workbench) -> None:
    bench = ScriptedBench(workbench, [100.0, 100.0], statuses=["done", "failed"])
    outcome = run_repeated(bench, REQUEST, parse_repeat("5"))
    assert len(outcome.run_ids) == 2 and outcome.status == RunStatus.FAILED
    assert outcome.reason == "run 2 failed: repeats stopped"

    refused = ScriptedBench(workbench, [100.0] * 5, refuse_at=3)
    outcome = run_repeated(refused, REQUEST, parse_repeat("5"))
    assert len(outcome.run_ids) == 2 and outcome.reason == "run 3 could not start: db1: connection refused"

    first = ScriptedBench(workbench, [100.0] * 5, refuse_at=1)
    with pytest.raises(AppError, match="connection refused"):
        run_repeated(first, REQUEST, parse_repeat("5"))


def test_cancel_ends_the_repeats(workbench) -> None:
    control = RunControl()
    bench = ScriptedBench(workbench, [100.0] * 5)
    outcome = run_repeated(bench, REQUEST, parse_repeat("5"), control,
                           on_run=lambda index, run, rse: control.cancel())
    assert len(outcome.run_ids) == 1 and outcome.reason == "stopped after run 1"


def test_a_test_without_figures_is_not_repeated_forever(workbench) -> None:
    bench = ScriptedBench(workbench, [1.0] * 10)
    outcome = run_repeated(bench, RunRequest("db1", "idle", {}), parse_repeat("until-stable"))
    assert len(outcome.run_ids) == MIN_REPEATS and outcome.stable is False
    assert "no figure to judge stability by" in outcome.reason


def test_one_run_is_not_a_group(workbench) -> None:
    bench = ScriptedBench(workbench, [100.0])
    outcome = run_repeated(bench, REQUEST, parse_repeat("1"))
    assert outcome.group == "" and workbench.find_run(outcome.run_ids[0]).run.repeat_group == ""


def test_the_group_survives_export_and_import(workbench, tmp_path) -> None:
    from app.workbench import Workbench

    outcome = run_repeated(ScriptedBench(workbench, [100.0, 101.0]), REQUEST, parse_repeat("2"))
    single = run_repeated(ScriptedBench(workbench, [100.0]), REQUEST, parse_repeat("1")).run_ids[0]
    out = io.StringIO()
    workbench.export_runs([*outcome.run_ids, single], out)
    document = json.loads(out.getvalue())
    assert [run.get("repeat") for run in document["runs"]] == [{"group": outcome.group, "index": 1},
                                                               {"group": outcome.group, "index": 2}, None]
    other = Workbench(home=tmp_path / "other-home", db_url=f"sqlite:///{tmp_path / 'other.sqlite3'}")
    try:
        report = other.import_runs(io.StringIO(out.getvalue()), "runs.json")
        assert len(report.imported) == 3
        grouped = other.store.runs.repeats(outcome.group)
        assert [r.repeat_index for r in grouped] == [1, 2]
        again = io.StringIO()
        other.export_runs([i for _uid, i in report.imported], again)
        assert json.loads(again.getvalue()) == document   # lossless both ways
        # importing the same document again finds every run already stored, unchanged
        assert len(other.import_runs(io.StringIO(out.getvalue()), "runs.json").skipped) == 3
    finally:
        other.close()


def test_a_broken_repeat_in_a_document_is_refused(workbench) -> None:
    from storage.run_import import InvalidRunDocument

    outcome = run_repeated(ScriptedBench(workbench, [100.0, 101.0]), REQUEST, parse_repeat("2"))
    out = io.StringIO()
    workbench.export_runs(list(outcome.run_ids), out)
    for bad in ({"group": "xyz", "index": 1}, {"group": outcome.group, "index": 0}, {"group": outcome.group},
                "twice"):
        document = json.loads(out.getvalue())
        document["runs"][0]["repeat"] = bad
        for run in document["runs"]:
            run["uid"] = run["uid"][::-1]
        with pytest.raises(InvalidRunDocument, match="repeat"):
            workbench.import_runs(io.StringIO(json.dumps(document)), "bad.json")
