"""The progress estimate of a run: from the agent's plan, forward only, refined by the speed seen."""
from __future__ import annotations

from widgets.run_estimate import RunEstimate, parse_plan


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_bad_plan_is_read_as_far_as_it_is_good():
    phases = parse_plan({"type": "plan", "phases": [
        {"phase": "a", "seconds": 2, "timed": True}, {"phase": "", "seconds": 1}, {"phase": "b", "seconds": -1},
        {"phase": "c", "seconds": True}, "junk", {"phase": "d", "seconds": 3.5, "label": "Dee"}]})
    assert [(p.phase, p.label, p.seconds, p.timed) for p in phases] == [("a", "a", 2.0, True),
                                                                       ("d", "Dee", 3.5, False)]
    assert parse_plan({"type": "plan", "phases": "all of them"}) == []


def test_without_a_plan_the_upper_bound_only_undershoots():
    clock = Clock()
    estimate = RunEstimate(expected=60.0, clock=clock)
    assert estimate.fraction() == 0.0 and estimate.seconds_left() is None
    clock.t += 30
    assert estimate.fraction() == 0.5
    clock.t += 300
    assert estimate.fraction() == 0.95   # the bound was wrong: never "100 %" while it runs
    estimate.finish("done")
    assert estimate.fraction() == 1.0


def test_guessed_phases_are_refined_by_the_speed_seen():
    clock = Clock()
    estimate = RunEstimate(clock=clock)
    estimate.add_event({"type": "plan", "phases": [{"phase": "generate", "seconds": 10},
                                                   {"phase": "restore", "seconds": 10}]})
    assert estimate.seconds_left() == (20.0, True)
    estimate.add_event({"type": "phase_start", "phase": "generate"})
    clock.t += 40   # four times slower than guessed, with no progress said
    estimate.add_event({"type": "phase_end", "phase": "generate"})
    estimate.add_event({"type": "phase_start", "phase": "restore"})
    assert estimate.fraction() == 0.5
    assert estimate.seconds_left() == (40.0, True)   # the next guess scaled by what the first took


def test_progress_never_goes_back_and_a_cancelled_run_keeps_it():
    clock = Clock()
    estimate = RunEstimate(clock=clock)
    estimate.add_event({"type": "plan", "phases": [{"phase": "a", "seconds": 10, "timed": True}]})
    estimate.add_event({"type": "phase_start", "phase": "a"})
    estimate.add_event({"type": "progress", "phase": "a", "fraction": 0.5, "eta_s": 5})
    estimate.add_event({"type": "progress", "phase": "a", "fraction": 0.25, "eta_s": 7})
    assert estimate.fraction() == 0.5
    estimate.add_event({"type": "phase_end", "phase": "a"})   # as a cancelled phase ends
    assert estimate.fraction() == 0.5
    estimate.finish("cancelled")
    assert estimate.fraction() == 0.5 and estimate.seconds_left() is None


def test_a_phase_that_said_nothing_counts_whole_once_the_next_begins():
    clock = Clock()
    estimate = RunEstimate(clock=clock)
    estimate.add_event({"type": "plan", "phases": [{"phase": "dump", "seconds": 10}, {"phase": "load", "seconds": 30}]})
    estimate.add_event({"type": "phase_start", "phase": "dump"})
    clock.t += 5
    estimate.add_event({"type": "phase_end", "phase": "dump"})
    estimate.add_event({"type": "phase_start", "phase": "load"})
    assert estimate.fraction() == 0.25
    assert estimate.seconds_left() == (15.0, True)   # twice as fast as guessed
