"""An outage of three minutes during a run, with Benchbay's default settings, over a real sshd host.

The link to the host goes silent (tests.fixtures.netns: the server's end of a veth pair set down) about
15 s into a 90 s idle run and comes back three minutes later. `benchbay run` gives up after its stall
limit and its reconnect budget (120 s by default) and stores the run as "lost link"; the run goes on on
its host and finishes there, with nobody watching. Once the host answers again, the next start of
Benchbay collects it complete by itself: every sample, the host's own measured duration, nothing left on
the host. Alone in its file: it takes about four minutes.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from remote.run_link import DEFAULT_RECONNECT_BUDGET
from storage.db import open_store
from tests.fixtures.lost_runs import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]   # about 4 min; more on a loaded machine
INTERVAL = 1.0
MEASURE = 90          # seconds of the idle test's measure phase
WARMUP = 1
CUT_AFTER = 15.0      # seconds into the run (its warm-up included) when the link goes silent
OUTAGE = 180.0        # seconds the link stays silent, at least (longer if the workbench is slow to give up)


class _Lines:
    """A process's output, read as it comes."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines)


def _wait_for(what: str, check, timeout: float):
    return wait_for(what, check, timeout, poll=0.2)


def _events(run_dir: Path) -> list[dict]:
    path = run_dir / "events.jsonl"
    text = path.read_text() if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _measure_started(run_dir: Path) -> bool:
    return any(e.get("type") == "phase_start" and e.get("phase") == "measure" for e in _events(run_dir))


def _run_dir(host) -> Path | None:
    found = list(host.run_root.glob("*/events.jsonl"))
    return found[0].parent if found else None


def test_a_run_over_a_three_minute_outage_is_collected_complete_without_a_hand_command(far_host, bench_paths) -> None:
    phases = json.dumps([["warmup", "Warm-up", WARMUP], ["measure", "Measure", MEASURE]])
    proc = far_host.benchbay("run", far_host.name, "--test", "idle", "--set", f"phases={phases}",
                             "--interval", str(INTERVAL))
    try:
        err, out = _Lines(proc.stderr), _Lines(proc.stdout)
        run_dir = _wait_for("the run on the host", lambda: _run_dir(far_host), 120)
        _wait_for("the measurement", lambda: _measure_started(run_dir), 120)
        time.sleep(CUT_AFTER - WARMUP)
        far_host.set_link(False)
        down_at = time.monotonic()

        # the workbench gives up by itself (stall limit, then the default reconnect budget) and says so
        proc.wait(timeout=OUTAGE + 300)
        assert proc.returncode == 1, err.text()
        assert "Traceback" not in err.text(), err.text()
        _wait_for("the summary", lambda: any(f"{far_host.name}: lost link" in line for line in out.lines), 10)
        [line] = [line for line in out.lines if line.startswith(f"{far_host.name}: lost link")]
        assert f"could not reconnect within {DEFAULT_RECONNECT_BUDGET:.0f} s" in line, line
        assert "collected when it answers again" in line, line
        store = open_store(f"sqlite:///{bench_paths['db']}")
        try:
            [run] = store.runs.list()
            detail = store.runs.get(run.id)
        finally:
            store.close()
        assert detail.run.status == "lost link" and not detail.results

        # the host finishes the run alone and keeps it for the workbench
        _wait_for("the run to end on the host", lambda: any(e.get("type") == "done" for e in _events(run_dir)),
                  MEASURE + 120)
        time.sleep(max(0.0, down_at + OUTAGE - time.monotonic()))
        assert run_dir.is_dir(), "the host removed the finished run before the link came back"
    finally:
        far_host.set_link(True)
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    # the next start of Benchbay collects it: no `runs attach` typed
    monitor = far_host.benchbay("monitor", far_host.name, "--seconds", "1")
    try:
        _out, err_text = monitor.communicate(timeout=180)
    finally:
        if monitor.poll() is None:
            monitor.kill()
            monitor.communicate()
    assert monitor.returncode == 0, err_text
    assert f"run {run.id} on {far_host.name}: re-attached after its link was lost; stored as done" in err_text

    store = open_store(f"sqlite:///{bench_paths['db']}")
    try:
        detail = store.runs.get(run.id)
        events = store.runs.events(run.id)
        [cpu] = [s for s in store.runs.series(run.id) if s.name == "cpu.user" and s.device == ""]
    finally:
        store.close()
    assert detail.run.status == "done" and detail.run.error == ""
    # the duration the host measured, not one that runs until the collection minutes later
    [elapsed] = [r for r in detail.results if r.metric == "elapsed"]
    assert MEASURE <= elapsed.value < MEASURE + 5
    span = (detail.run.finished_at - detail.run.started_at).total_seconds()
    assert MEASURE <= span < MEASURE + WARMUP + 30, span
    # every agent event once and in order, and a sample every tick across the outage
    seqs = [e["seq"] for e in events if e["seq"] is not None]
    assert seqs == list(range(1, len(seqs) + 1))
    assert any(e["type"] == "done" for e in events)
    steps = [b - a for a, b in zip(cpu.t, cpu.t[1:], strict=False)]
    # a gap of a tick or two may come from a loaded host; a lost stretch of the outage is minutes
    assert steps and min(steps) > 0 and max(steps) < 2.5 * INTERVAL
    assert len(cpu.t) >= (MEASURE + 1) / INTERVAL
    assert cpu.t[-1] - cpu.t[0] >= MEASURE
    assert not run_dir.exists()
