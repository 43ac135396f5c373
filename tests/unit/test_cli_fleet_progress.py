"""`benchbay run` on many hosts: overall lines every few seconds, replayed over recorded event streams."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from app.cli.run_fleet_progress import FLEET_EVERY, FLEET_THRESHOLD, FleetProgress, run_progress_for
from app.cli.run_progress import RunProgress

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "run_events"
OVERALL = re.compile(r"^(\d+) hosts: (\d+) % in all, (.*)$")


def stream(name: str) -> list[dict]:
    return [json.loads(line) for line in (STREAMS / f"{name}.jsonl").read_text().splitlines() if line]


class Clock:
    t = 0.0

    def __call__(self) -> float:
        return self.t


def fleet_events(name: str, hosts: int, spread: float, fail: set[int]) -> list[tuple[float, str, dict]]:
    """Each host replays the stream, starting `spread` seconds after the one before; the `fail` hosts stop
    halfway with an error. All events in time order, as a hundred worker threads would deliver them."""
    events = stream(name)
    merged = []
    for i in range(hosts):
        own = events if i not in fail else [e for e in events if e["type"] != "done"][: len(events) // 2] + [
            {"type": "error", "message": "agent exited with status 137"},
            {"type": "done", "status": "failed", "error": "agent exited with status 137"}]
        last = events[0]["t"]
        for e in own:
            last = e.get("t", last)
            merged.append((last - events[0]["t"] + i * spread, f"s{i:03d}", e))
    return sorted(merged, key=lambda item: item[0])


def replay(progress: FleetProgress, clock: Clock, merged: list[tuple[float, str, dict]]) -> list[str]:
    for t, host, event in merged:
        clock.t = t
        progress.event(host, event)
    return progress._out.getvalue().splitlines()


@pytest.mark.parametrize("name", ["disk", "cpu", "mailstorm_smtp", "restore_pg"])
def test_a_hundred_hosts_write_a_few_overall_lines_not_a_hundred_a_second(name: str) -> None:
    clock = Clock()
    merged = fleet_events(name, 100, spread=0.05, fail={20})
    progress = FleetProgress(100, out=io.StringIO(), clock=clock)
    lines = replay(progress, clock, merged)
    span = merged[-1][0] - merged[0][0]
    overall = [line for line in lines if OVERALL.match(line)]
    ended = [line for line in lines if "ended)" in line]
    # one overall line per FLEET_EVERY seconds (and the final one), a line per host that ended, its error
    assert len(overall) <= span / FLEET_EVERY + 2, lines
    assert len(ended) == 100 and len(lines) == len(overall) + len(ended) + 1, lines
    shown = [int(OVERALL.match(line)[2]) for line in overall]
    assert shown == sorted(shown), overall   # never goes back
    assert 100 not in shown[:-1]
    assert overall[-1] == "100 hosts: 100 % in all, 0 running · 99 done · 1 failed", lines
    [failed] = [line for line in lines if line.startswith("s020: failed")]
    assert re.fullmatch(r"s020: failed at \d+ % after 0:0\d: agent exited with status 137 \(\d+ of 100 ended\)",
                        failed), failed
    assert "s020: error: agent exited with status 137" in lines


def test_the_overall_line_counts_each_state_and_the_time_left() -> None:
    clock = Clock()
    merged = fleet_events("disk", 12, spread=0.0, fail=set())
    progress = FleetProgress(12, out=io.StringIO(), clock=clock, every=1e9)   # only the lines asked for
    half = merged[: len(merged) // 2]
    for t, host, event in half:
        clock.t = t
        if host != "s011":
            progress.event(host, event)
    progress.host_ended("s010", "failed", "could not connect to s010: Connection refused")
    line = progress.overall()
    match = OVERALL.match(line)
    assert match and match[1] == "12" and 0 < int(match[2]) < 100, line
    assert "1 starting · 10 running · 0 done · 1 failed" in line
    assert "left" not in line        # a host not started yet: no honest time left
    progress.host_ended("s011", "failed", "could not connect to s011: Connection refused")
    assert "left" in progress.overall() or "finishing" in progress.overall()
    lines = progress._out.getvalue().splitlines()
    assert re.fullmatch(r"s010: failed at \d+ % after 0:0\d: could not connect to s010: Connection refused "
                        r"\(1 of 12 ended\)", lines[-2]), lines
    # a host that failed before its agent said anything: no percentage to tell
    assert lines[-1] == "s011: failed after 0:00: could not connect to s011: Connection refused (2 of 12 ended)"


def test_a_host_that_ended_is_said_once() -> None:
    progress = FleetProgress(10, out=io.StringIO(), clock=Clock())
    progress.host_ended("a", "done")
    progress.host_ended("a", "done")
    assert progress._out.getvalue().count("a: done") == 1


def test_a_few_hosts_keep_their_own_lines() -> None:
    assert type(run_progress_for(FLEET_THRESHOLD)) is RunProgress
    assert isinstance(run_progress_for(FLEET_THRESHOLD + 1), FleetProgress)
