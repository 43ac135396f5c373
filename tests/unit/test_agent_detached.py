"""`agent.pyz run`: the detached agent on this machine, driven through its run directory as the workbench does."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from remote.agent.run_context import Cancelled, EventWriter, RunContext
from remote.agent_package import build_agent


def _start(run_dir: Path, spec: dict, deadline_in: float = 300) -> subprocess.Popen:
    (run_dir / "agent.pyz").write_bytes(build_agent())
    (run_dir / "spec.json").write_text(json.dumps(spec))
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    (run_dir / "deadline").write_text(f"{uptime + deadline_in:.0f}\n")
    return subprocess.Popen([sys.executable, "-E", "-s", str(run_dir / "agent.pyz"), "run", "--run-dir", str(run_dir)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _events(run_dir: Path) -> list[dict]:
    path = run_dir / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _wait_for(run_dir: Path, kind: str, timeout: float = 15) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(e["type"] == kind for e in _events(run_dir)):
            return
        time.sleep(0.05)
    raise AssertionError(f"no {kind} event; got {[e['type'] for e in _events(run_dir)]}")


def test_idle_run_writes_gapless_events(tmp_path: Path) -> None:
    proc = _start(tmp_path, {"test": "idle", "params": {"phases": [["a", "A", 0.6]]}, "run_id": "7"})
    assert proc.wait(30) == 0
    events = _events(tmp_path)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events] == ["start", "facts", "plan", "phase_start", "progress", "progress",
                                           "phase_end", "result", "done"]
    assert events[2]["phases"] == [{"phase": "a", "label": "A", "seconds": 0.6, "timed": True}]
    assert events[0]["run_id"] == "7" and events[0]["pid"] == int((tmp_path / "agent.pid").read_text())
    assert [e["fraction"] for e in events if e["type"] == "progress"][-1] == 1.0
    assert events[-1] == {**events[-1], "status": "done", "error": ""}


@pytest.mark.parametrize("how", ["cancel file", "SIGTERM"])
def test_cancel_stops_the_test(tmp_path: Path, how: str) -> None:
    proc = _start(tmp_path, {"test": "idle", "params": {"phases": [["w", "Wait", 60]]}})
    _wait_for(tmp_path, "phase_start")
    started = time.monotonic()
    if how == "SIGTERM":
        os.killpg(proc.pid, signal.SIGTERM)   # its own process group, as the workbench kills it
    else:
        (tmp_path / "cancel").touch()
    assert proc.wait(10) == 0
    assert time.monotonic() - started < 3
    events = _events(tmp_path)
    assert [e["type"] for e in events][-2:] == ["phase_end", "done"]
    assert events[-1]["status"] == "cancelled"
    assert tmp_path.exists()   # the workbench removes RUN once it has read the last events


def test_past_the_deadline_it_removes_the_run_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    (run_dir / "sampler.sh").write_text("sleep 60 & wait\n")   # a stand-in: the agent checks it runs RUN/sampler.sh
    sampler = subprocess.Popen(["sh", str(run_dir / "sampler.sh"), str(run_dir), "0.5", "auto"],
                               start_new_session=True)
    (run_dir / "sampler.pid").write_text(f"{sampler.pid}\n")
    proc = _start(run_dir, {"test": "idle", "params": {"phases": [["w", "Wait", 60]]}}, deadline_in=1)
    assert proc.wait(15) == 3
    assert not run_dir.exists()
    assert sampler.wait(5) == -signal.SIGTERM


def test_a_bad_spec_ends_as_failed(tmp_path: Path) -> None:
    proc = _start(tmp_path, {"test": "idle", "params": {"phases": "soon"}})
    assert proc.wait(30) == 0
    events = _events(tmp_path)
    assert [e["type"] for e in events] == ["start", "error", "done"]
    assert "phases must be" in events[1]["message"] and events[2]["status"] == "failed"


def test_cleanup_removes_files_and_kills_children(tmp_path: Path) -> None:
    ctx = RunContext(EventWriter(str(tmp_path / "events.jsonl")), str(tmp_path), {})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "data").write_bytes(b"x" * 100)
    ctx.add_cleanup_path(str(scratch))
    child = ctx.popen(["sleep", "60"])
    ctx.request_stop("cancelled")
    with pytest.raises(Cancelled):
        ctx.sleep(5)
    assert ctx.cleanup() == []
    assert not scratch.exists()
    assert child.wait(5) == -signal.SIGKILL
    with pytest.raises(Cancelled):
        ctx.popen(["true"])   # nothing new starts once stopping
