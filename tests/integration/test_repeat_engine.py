"""Repeats through the real run engine on `local`: a run is in its group while it runs, not only afterwards,
so a run a crashed Benchbay leaves behind is still known as a repeat when it is collected."""
from __future__ import annotations

import pytest

from app.engine.orchestrator import RunControl, RunRequest
from app.engine.repeats import REPEAT_EVENT, parse_repeat, run_repeated

pytestmark = pytest.mark.integration


def test_each_run_joins_its_group_while_it_runs(workbench) -> None:
    seen: list[tuple[int, str, int | None]] = []
    current: dict[str, int] = {}

    def on_event(host: str, event: dict) -> None:
        if event["type"] == REPEAT_EVENT:
            current["index"] = event["index"]
        elif event["type"] == "phase_start":
            running = workbench.store.runs.running("local")
            assert len(running) == 1
            record = workbench.find_run(running[0].id).run
            seen.append((current["index"], record.repeat_group, record.repeat_index))

    request = RunRequest("local", "cpu", {"seconds": 0.5, "workers": 1}, interval=0.5)
    outcome = run_repeated(workbench, request, parse_repeat("2"), RunControl(), on_event=on_event)
    assert [o.status for o in outcome.outcomes] == ["done", "done"]
    # two phases per run (single, multi), each seen with the run already in its group at its index
    assert seen == [(1, outcome.group, 1)] * 2 + [(2, outcome.group, 2)] * 2
