"""Repeating a test on one host: N times, or until its figure is stable, as the Phoronix Test Suite does.

The runs of one repeat form a group (records.RunRecord.repeat_group); a comparison shows the group's
median with its spread across the runs. "Until stable" runs at least MIN_REPEATS times, then again until
the relative standard error of the mean (sd / sqrt(n) / mean) of the test's headline figures falls below
the target, and never more than the cap. Qt-free: the command line and the window both call run_repeated.
"""
from __future__ import annotations

import math
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from app.catalogue import CATALOGUE
from app.engine.orchestrator import EventCallback, RunControl, RunOutcome, RunRequest, SampleCallback
from app.engine.repeat_record import unsettled_event
from app.errors import USER_ERRORS, AppError
from storage.db import Store
from storage.records import RunDetail, RunStatus

UNTIL_STABLE = "until-stable"
MIN_REPEATS = 3                 # the fewest runs "until stable" judges by
DEFAULT_MAX_REPEATS = 10
MAX_REPEATS = 100
DEFAULT_TARGET_RSE = 2.0        # % of the mean
REPEAT_EVENT = "repeat"         # the event on_event gets before each run: index, of, group


class RepeatPlanError(AppError):
    """The repeat request itself is wrong (a count out of range, an unknown mode)."""


@dataclass(frozen=True)
class RepeatPlan:
    """How often to run a test: `count` times, or until stable (then count is ignored)."""

    count: int = 1
    until_stable: bool = False
    max_repeats: int = DEFAULT_MAX_REPEATS
    target_rse: float = DEFAULT_TARGET_RSE   # % relative standard error of the mean

    @property
    def repeats(self) -> bool:
        """More than one run: the runs form a group."""
        return self.until_stable or self.count > 1

    @property
    def most(self) -> int:
        return self.max_repeats if self.until_stable else self.count

    def describe(self) -> str:
        if self.until_stable:
            return f"until stable (RSE below {self.target_rse:g} %, {MIN_REPEATS} to {self.max_repeats} runs)"
        return f"{self.count} time{'s' if self.count != 1 else ''}"


@dataclass(frozen=True)
class RepeatedRequest(RunRequest):
    """A run request with how often to run it (the window's run dialog hands these to its controller)."""

    plan: RepeatPlan = RepeatPlan()


def plan_for(count: int, until_stable: bool) -> RepeatPlan:
    """The plan a form asks for: `count` runs, or until stable with at most `count` runs."""
    if until_stable:
        return check_plan(RepeatPlan(until_stable=True, max_repeats=count))
    return check_plan(RepeatPlan(count=count))


def check_plan(plan: RepeatPlan) -> RepeatPlan:
    """The plan, or RepeatPlanError saying what to change."""
    if not plan.until_stable and not 1 <= plan.count <= MAX_REPEATS:
        raise RepeatPlanError(f"repeat a test 1-{MAX_REPEATS} times, not {plan.count}")
    if plan.until_stable:
        if not MIN_REPEATS <= plan.max_repeats <= MAX_REPEATS:
            raise RepeatPlanError(f"the most runs until stable must be {MIN_REPEATS}-{MAX_REPEATS}, "
                                  f"not {plan.max_repeats}")
        if not math.isfinite(plan.target_rse) or not 0 < plan.target_rse <= 50:
            raise RepeatPlanError(f"the target relative standard error must be above 0 and at most 50 %, "
                                  f"not {plan.target_rse:g}")
    return plan


def parse_repeat(text: str, max_repeats: int = DEFAULT_MAX_REPEATS,
                 target_rse: float = DEFAULT_TARGET_RSE) -> RepeatPlan:
    """ "3" or "until-stable" (as --repeat takes it) into a checked plan."""
    word = text.strip().lower()
    if word in (UNTIL_STABLE, "until_stable", "stable"):
        return check_plan(RepeatPlan(until_stable=True, max_repeats=max_repeats, target_rse=target_rse))
    if not word.isdigit() or len(word) > 6:
        raise RepeatPlanError(f"--repeat takes a count (1-{MAX_REPEATS}) or {UNTIL_STABLE}, not {text[:40]!r}")
    return check_plan(RepeatPlan(count=int(word), max_repeats=max_repeats, target_rse=target_rse))


def judged_metrics(test: str) -> tuple[str, ...]:
    """The stored metric names "until stable" judges a test by: its headline figures, else every compared one."""
    compared = [m for m in CATALOGUE.compared_metrics() if m.test == test and not m.derived]
    headline = [m for m in compared if m.headline]
    return tuple(m.metric for m in (headline or compared))


def relative_standard_error(values: Sequence[float]) -> float | None:
    """sd / sqrt(n) / |mean| in %; None for fewer than two values or a mean of 0."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return None
    mean = math.fsum(finite) / len(finite)
    if not mean:
        return None
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (len(finite) - 1))
    return 100.0 * sd / math.sqrt(len(finite)) / abs(mean)


def group_rse(test: str, results: Sequence[Mapping[str, float]]) -> tuple[float | None, str]:
    """The largest RSE over the test's judged figures across the runs' results (metric -> value), and
    which figure it is; (None, "") when no figure is there in two runs."""
    worst: tuple[float | None, str] = (None, "")
    for name in judged_metrics(test):
        rse = relative_standard_error([run[name] for run in results if name in run])
        if rse is not None and (worst[0] is None or rse > worst[0]):
            worst = (rse, name)
    return worst


@dataclass(frozen=True)
class RepeatOutcome:
    """What the repeats of one test on one host gave."""

    host: str
    group: str                        # the repeat group ("" when the test ran once)
    outcomes: tuple[RunOutcome, ...]  # one per run, in order
    stable: bool | None               # until stable: reached the target; None for a fixed count
    rse_percent: float | None         # after the last run, of the figure named in `judged`
    judged: str                       # the metric the RSE is of
    reason: str                       # why the repeats ended, in a sentence

    @property
    def status(self) -> RunStatus:
        """done when every run is; else the last run's status."""
        if all(o.status == RunStatus.DONE for o in self.outcomes):
            return RunStatus.DONE
        return self.outcomes[-1].status

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(o.run_id for o in self.outcomes)


class RepeatServices(Protocol):
    """What repeating uses of the Workbench."""

    @property
    def store(self) -> Store: ...

    def run(self, request: RunRequest, control: RunControl | None = None, on_sample: SampleCallback | None = None,
            on_event: EventCallback | None = None, password: str | None = None) -> RunOutcome: ...

    def find_run(self, run_id: int) -> RunDetail | None: ...


def _figures(detail: RunDetail | None, test: str) -> dict[str, float]:
    if detail is None:
        return {}
    return {r.metric: float(r.value) for r in detail.results if r.test == test and math.isfinite(float(r.value))}


def _claiming(bench: RepeatServices, request: RunRequest, group: str, index: int,
              on_event: EventCallback | None) -> EventCallback | None:
    """on_event, which also puts the run in its group as soon as it runs on its host: a run this process
    loses (a crash) is still known as a repeat when a later Benchbay collects it."""
    if not group:
        return on_event

    def claim(host: str, event: dict) -> None:
        if event.get("type") == "started":
            mine = [run for run in bench.store.runs.running(request.host)
                    if run.test == request.test and run.owner is not None and run.owner.pid == os.getpid()]
            if len(mine) == 1:   # one test per host at a time in a process; anything else is left alone
                bench.store.runs.set_repeat(mine[0].id, group, index)
        if on_event is not None:
            on_event(host, event)
    return claim


def new_group() -> str:
    return uuid.uuid4().hex


def run_repeated(bench: RepeatServices, request: RunRequest, plan: RepeatPlan, control: RunControl | None = None,
                 on_sample: SampleCallback | None = None, on_event: EventCallback | None = None,
                 password: str | None = None,
                 on_run: Callable[[int, RunOutcome, float | None], None] | None = None) -> RepeatOutcome:
    """Run `request` as the plan says and group the runs; blocks (call it from a worker thread).

    The first run raises as Workbench.run does (nothing stored); a later one that cannot start ends the
    repeats with what was run. Repeats stop at the first run that is not done (failed or cancelled).
    on_run(index, outcome, rse) is called after each run."""
    check_plan(plan)
    control = control or RunControl()
    group = new_group() if plan.repeats else ""
    outcomes: list[RunOutcome] = []
    figures: list[dict[str, float]] = []
    rse: float | None = None
    judged = ""
    reason = ""
    stable: bool | None = False if plan.until_stable else None
    for index in range(1, plan.most + 1):
        if on_event is not None and plan.repeats:
            on_event(request.host, {"type": REPEAT_EVENT, "index": index, "of": plan.most, "group": group,
                                    "until_stable": plan.until_stable})
        try:
            outcome = bench.run(request, control, on_sample, _claiming(bench, request, group, index, on_event),
                                password)
        except USER_ERRORS as exc:
            if not outcomes:
                raise
            reason = f"run {index} could not start: {exc}"
            break
        outcomes.append(outcome)
        if group:
            bench.store.runs.set_repeat(outcome.run_id, group, index)
        figures.append(_figures(bench.find_run(outcome.run_id), request.test))
        rse, judged = group_rse(request.test, figures)
        if on_run is not None:
            on_run(index, outcome, rse)
        if outcome.status != RunStatus.DONE:
            reason = f"run {index} {outcome.status}: repeats stopped"
            break
        if control.cancelled or control.stopped:
            reason = f"stopped after run {index}"
            break
        if plan.until_stable and index >= MIN_REPEATS:
            if not judged:
                reason = f"{index} runs: the {request.test} test has no figure to judge stability by"
                break
            if rse is not None and rse < plan.target_rse:
                stable = True
                reason = f"stable after {index} runs: {judged} varies by {rse:.2g} % (RSE), below {plan.target_rse:g} %"
                break
    if not reason:
        if plan.until_stable:
            shown = f"{rse:.2g} %" if rse is not None else "unknown"
            reason = (f"not stable after {len(outcomes)} runs (the most allowed): {judged or 'the figure'} RSE "
                      f"{shown}, target {plan.target_rse:g} %")
            if outcomes:   # compare, the CSV and the report flag the group's figures too
                bench.store.runs.add_events(outcomes[-1].run_id,
                                            [unsettled_event(len(outcomes), rse, plan.target_rse, judged)])
        else:
            reason = f"{len(outcomes)} run{'s' if len(outcomes) != 1 else ''} as asked"
    return RepeatOutcome(request.host, group, tuple(outcomes), stable, rse, judged, reason)


def outcome_summary(outcome: RepeatOutcome) -> dict[str, Any]:
    """The repeats as JSON-ready data (the command line's --json)."""
    return {"host": outcome.host, "repeat_group": outcome.group, "run_ids": list(outcome.run_ids),
            "status": str(outcome.status), "stable": outcome.stable, "rse_percent": outcome.rse_percent,
            "judged": outcome.judged, "reason": outcome.reason}
