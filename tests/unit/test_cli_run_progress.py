"""`benchbay run`'s progress lines, replayed over event streams the agent wrote in real runs."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from app.cli.run_progress import RunProgress, duration, percent

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "run_events"
NAMES = ["cpu", "disk", "mailstorm", "mailstorm_smtp", "restore", "restore_pg"]
PERCENT = re.compile(r"(\d+) %")


class Replay:
    """The recorded events with their own timestamps as the clock."""

    def __init__(self, name: str) -> None:
        self.events = [json.loads(line) for line in (STREAMS / f"{name}.jsonl").read_text().splitlines() if line]
        self.t = self.events[0]["t"]

    def __call__(self) -> float:
        return self.t

    def play(self, progress: RunProgress, events: list[dict] | None = None, host: str = "db1") -> None:
        for event in self.events if events is None else events:
            self.t = event.get("t", self.t)
            progress.event(host, event)


def percents(text: str) -> list[int]:
    return [int(found) for line in text.splitlines() for found in PERCENT.findall(line)]


@pytest.mark.parametrize("name", NAMES)
def test_overall_progress_never_goes_back_and_reads_100_only_at_the_end(name: str) -> None:
    replay = Replay(name)
    out = io.StringIO()
    replay.play(RunProgress(out=out, clock=replay, every=0.0))   # every progress event gets its line
    lines = out.getvalue().splitlines()
    shown = percents(out.getvalue())
    assert len(shown) >= 3, lines
    assert shown == sorted(shown), lines                          # monotonic across phases
    assert 100 not in shown[:-1] and lines[-1].startswith("db1:   100 %, done in 0:0"), lines
    progress_lines = [line for line in lines if " in all" in line]
    assert progress_lines and all("left" in line or "finishing" in line for line in progress_lines), lines
    # a phase reaching its own 100 % is not the run's: with later phases to go it reads below 100
    assert all(int(PERCENT.search(line)[1]) < 100 for line in progress_lines)


@pytest.mark.parametrize("name", NAMES)
def test_one_progress_line_per_second_at_most(name: str) -> None:
    replay = Replay(name)
    out = io.StringIO()
    replay.play(RunProgress(out=out, clock=replay))
    span = replay.events[-1]["t"] - replay.events[0]["t"]
    progress_lines = [line for line in out.getvalue().splitlines() if " in all" in line]
    assert 1 <= len(progress_lines) <= int(span) + 1, out.getvalue()


def test_a_cancelled_run_keeps_how_far_it_got() -> None:
    replay = Replay("disk")
    half = [e for e in replay.events if e["type"] != "done"][: len(replay.events) // 2]
    out = io.StringIO()
    progress = RunProgress(out=out, clock=replay, every=0.0)
    replay.play(progress, half + [{"type": "done", "status": "cancelled", "t": half[-1]["t"] + 1}])
    last = out.getvalue().splitlines()[-1]
    assert re.fullmatch(r"db1:   cancelled at (\d+) % after 0:0\d", last), last
    reached = int(PERCENT.search(last)[1])
    assert 0 < reached < 100 and reached == max(percents(out.getvalue()))


def test_each_host_and_each_repeat_has_its_own_estimate() -> None:
    replay = Replay("cpu")
    out = io.StringIO()
    progress = RunProgress(out=out, clock=replay, every=0.0)
    replay.play(progress, host="a")
    replay.play(progress, host="a")   # a repeat: the second run starts again from 0 %
    replay.play(progress, [e for e in replay.events if e["type"] != "done"][:6], host="b")
    runs_of_a = out.getvalue().split("a:   100 %, done")
    assert len(runs_of_a) == 3
    second = percents("\n".join(line for line in runs_of_a[1].splitlines() if line.startswith("a:")))
    assert second and second[0] < 50 and second == sorted(second)
    assert all(n < 100 for n in percents("\n".join(line for line in out.getvalue().splitlines()
                                                    if line.startswith("b:"))))


def test_without_a_plan_the_upper_bound_gives_the_percentage() -> None:
    clock = Replay("cpu")
    out = io.StringIO()
    progress = RunProgress(expected=100.0, out=out, clock=clock, every=0.0)
    progress.event("h", {"type": "phase_start", "phase": "x", "label": "Work"})
    clock.t += 40
    progress.event("h", {"type": "progress", "phase": "x", "fraction": 0.9})
    assert out.getvalue().splitlines()[-1] == "h:   Work: 40 % in all"


def test_texts() -> None:
    assert (duration(65), duration(3725), duration(-3)) == ("1:05", "1:02:05", "0:00")
    assert (percent(0.996), percent(0.5), percent(0.0)) == ("99 %", "50 %", "0 %")
