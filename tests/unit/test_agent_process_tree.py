"""The agent finds and kills every process of its run, also those that called setsid() or were orphaned.

Real processes: a stand-in "agent" (a python child of the test) starts what fio does, a child in its
own session, plus a shell with a background child; nothing here is mocked.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from remote.agent import process_tree
from remote.agent.run_context import EventWriter, RunContext
from tests.fixtures.processes import running

STARTS_A_TREE = """
import subprocess, sys, time
subprocess.Popen(["sleep", "300"], start_new_session=True)          # as fio's job processes do
subprocess.Popen(["sh", "-c", "sleep 301 & sleep 302"])             # a grandchild in our group
print("ready", flush=True)
time.sleep(300)
"""


def _start_tree(run_dir: str) -> subprocess.Popen:
    env = dict(os.environ, **{process_tree.RUN_MARK_VAR: process_tree.run_mark(run_dir)})
    proc = subprocess.Popen([sys.executable, "-c", STARTS_A_TREE], stdout=subprocess.PIPE, env=env)
    assert proc.stdout.readline().strip() == b"ready"
    return proc


def _tree_of(root: int, count: int = 4) -> set[int]:
    """The tree once all of it has started (the shell starts its two sleeps after "ready")."""
    end = time.monotonic() + 10
    found = process_tree.run_processes(root)
    while len(found) < count and time.monotonic() < end:
        time.sleep(0.05)
        found = process_tree.run_processes(root)
    return found


def _wait_gone(pids: set[int], timeout: float = 5.0) -> set[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(running(p) for p in pids):
        time.sleep(0.05)
    return {p for p in pids if running(p)}


def test_descendants_include_processes_in_their_own_session(tmp_path: Path) -> None:
    agent = _start_tree(str(tmp_path))
    try:
        found = _tree_of(agent.pid)
        assert len(found) == 4     # sleep 300 (own session), sh, sleep 301, sleep 302
        sessions = {os.getsid(p) for p in found}
        assert len(sessions) == 2 and os.getsid(agent.pid) in sessions
        assert process_tree.kill_run_processes(agent.pid) == set()
        assert _wait_gone(found) == set()
    finally:
        agent.kill()
        agent.wait()


def test_the_mark_finds_orphans_whose_parent_died_first(tmp_path: Path) -> None:
    agent = _start_tree(str(tmp_path))
    found = _tree_of(agent.pid)
    agent.kill()
    agent.wait()       # its children are re-parented away: the parent links no longer lead to them
    try:
        assert process_tree.run_processes(agent.pid) == set()
        marked = process_tree.run_processes(agent.pid, process_tree.run_mark(str(tmp_path)))
        assert marked == {p for p in found if running(p)} and len(marked) == 4
        other_run = process_tree.run_mark(str(tmp_path) + "-other")
        assert process_tree.run_processes(agent.pid, other_run) == set()   # another run's mark: untouched
        assert process_tree.kill_run_processes(agent.pid, process_tree.run_mark(str(tmp_path))) == set()
        assert _wait_gone(found) == set()
    finally:
        for pid in found:
            if running(pid):
                os.kill(pid, 9)


def test_a_run_context_kills_the_tree_only_when_it_owns_it(tmp_path: Path) -> None:
    """A library caller's context (tests, benchmarks) must never kill its host process's children."""
    bystander = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        ctx = RunContext(EventWriter(str(tmp_path / "events.jsonl")), str(tmp_path), {})
        ctx.request_stop("cancelled")
        assert ctx.cleanup() == [] and running(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()


def test_the_agent_can_become_a_subreaper_in_a_child() -> None:
    # in a child: the flag would otherwise stay on the test process
    code = "from remote.agent import process_tree as t; print(t.become_subreaper())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(Path(__file__).resolve().parents[2]))
    assert out.stdout.strip() == ("True" if sys.platform.startswith("linux") else "False")


ORPHAN_EXIT = """
import sys
from remote.agent.run_main import Watchdog

class Ctx:
    def cleanup(self):
        return []

Watchdog(Ctx(), sys.argv[1]).orphan_exit()
"""


def _orphan_exit(run_dir: Path) -> int:
    return subprocess.run([sys.executable, "-c", ORPHAN_EXIT, str(run_dir)], cwd=str(Path(__file__).parents[2]),
                          timeout=30).returncode


def test_an_orphaned_agent_stops_its_sampler(tmp_path: Path) -> None:
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    (run_dir / "sampler.sh").write_text("sleep 300 & wait\n")
    sampler = subprocess.Popen(["sh", f"{tmp_path}//benchbay-run/sampler.sh", str(run_dir), "0.5", "auto"],
                               start_new_session=True, cwd="/")
    try:
        (run_dir / "sampler.pid").write_text(f"{sampler.pid}\n")
        assert _orphan_exit(run_dir) == 3 and not run_dir.exists()
        assert sampler.wait(timeout=5) == -15
    finally:
        if sampler.poll() is None:
            os.killpg(sampler.pid, 9)
        sampler.wait()


def test_an_orphaned_agent_spares_a_process_that_took_the_samplers_pid(tmp_path: Path) -> None:
    # the sampler stopped by itself (a full disk): its pid now leads someone else's process group
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    stranger = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True, cwd="/")
    try:
        (run_dir / "sampler.pid").write_text(f"{stranger.pid}\n")
        assert _orphan_exit(run_dir) == 3 and not run_dir.exists()
        time.sleep(0.3)
        assert stranger.poll() is None
    finally:
        if stranger.poll() is None:
            os.killpg(stranger.pid, 9)
        stranger.wait()
