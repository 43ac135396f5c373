"""The workbench's last-resort kill: a POSIX sh script that ends an agent and everything its run started.

Run with the shells hosts have as /bin/sh (dash, bash, busybox-like); real processes, nothing mocked.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from remote.agent import process_tree
from remote.agent.disk_file import record_created, unique_file_name
from remote.run_kill import kill_run_script
from tests.fixtures.processes import running

AGENT = """
import subprocess, time
subprocess.Popen(["sleep", "300"], start_new_session=True)       # outside the agent's group, as fio's jobs
subprocess.Popen(["sh", "-c", "sleep 301 & sleep 302"])
subprocess.Popen(["env", "-i", "sleep", "304"], start_new_session=True)   # no mark: as under sudo
print("ready", flush=True)
time.sleep(300)
"""
SHELLS = [s for s in ("dash", "bash", "sh") if shutil.which(s)]


def _tree(root: int) -> set[int]:
    end = time.monotonic() + 10
    found = process_tree.run_processes(root)
    while len(found) < 5 and time.monotonic() < end:
        time.sleep(0.05)
        found = process_tree.run_processes(root)
    return found


@pytest.mark.parametrize("shell", SHELLS)
def test_the_script_kills_the_agent_and_processes_outside_its_group(shell: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "benchbay-run x'y"          # a quote and a space: the script quotes it
    run_dir.mkdir()
    env = dict(os.environ, **{process_tree.RUN_MARK_VAR: process_tree.run_mark(str(run_dir))})
    agent = subprocess.Popen([sys.executable, "-c", AGENT], stdout=subprocess.PIPE, env=env,
                             start_new_session=True, cwd=str(run_dir))   # the agent works in RUN
    assert agent.stdout.readline().strip() == b"ready"
    tree = _tree(agent.pid)
    # an orphan whose parent died before the kill: only the environment mark leads to it
    orphan_parent = subprocess.Popen(["sh", "-c", "sleep 303 & echo $!"], stdout=subprocess.PIPE, env=env,
                                     start_new_session=True)
    orphan = int(orphan_parent.stdout.readline())
    orphan_parent.wait()
    (run_dir / "agent.pid").write_text(f"{agent.pid}\n")
    try:
        assert len(tree) == 5 and running(orphan)
        done = subprocess.run([shell, "-c", kill_run_script(str(run_dir))], capture_output=True, text=True,
                              timeout=30)
        assert (done.returncode, done.stderr) == (0, "")
        agent.wait(timeout=5)
        end = time.monotonic() + 5
        while time.monotonic() < end and any(running(p) for p in tree | {orphan}):
            time.sleep(0.05)
        assert [p for p in tree | {orphan} if running(p)] == []
    finally:
        for pid in tree | {orphan, agent.pid}:
            if running(pid):
                os.kill(pid, 9)
        agent.wait()


def test_the_script_does_nothing_when_the_run_is_gone(tmp_path: Path) -> None:
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        done = subprocess.run(["sh", "-c", kill_run_script(str(tmp_path / "benchbay-gone"))],
                              capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stderr) == (0, "") and running(bystander.pid)
        # agent.pid names a pid that is no longer the agent (it works elsewhere): left alone
        run_dir = tmp_path / "benchbay-run"
        run_dir.mkdir()
        (run_dir / "agent.pid").write_text(f"{bystander.pid}\n")
        done = subprocess.run(["sh", "-c", kill_run_script(str(run_dir))], capture_output=True, text=True,
                              timeout=30)
        assert (done.returncode, done.stderr) == (0, "") and running(bystander.pid)
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.parametrize("shell", SHELLS)
def test_the_script_removes_the_listed_test_files_and_nothing_else(shell: str, tmp_path: Path) -> None:
    run_dir, test_dir, elsewhere = tmp_path / "benchbay-run", tmp_path / "test dir", tmp_path / "elsewhere"
    for directory in (run_dir, test_dir, elsewhere):
        directory.mkdir()
    ours = test_dir / unique_file_name()
    theirs = test_dir / "important.dat"                       # listed, but not a name the agent makes
    target = elsewhere / unique_file_name()
    link = test_dir / unique_file_name()                        # the agent's name, but a symlink
    folder = test_dir / unique_file_name()                      # the agent's name, but a directory
    through_link = tmp_path / "via"                             # a symlink on the way to a real file
    for path in (ours, theirs, target):
        path.write_bytes(b"x" * 4096)
    link.symlink_to(target)
    folder.mkdir()
    through_link.symlink_to(elsewhere)
    listed = [ours, theirs, link, folder, through_link / target.name, Path(target.name)]   # the last: relative
    for path in listed:
        record_created(str(run_dir), str(path))
    done = subprocess.run([shell, "-c", kill_run_script(str(run_dir))], capture_output=True, text=True,
                          timeout=30)
    assert (done.returncode, done.stderr) == (0, "")
    assert not ours.exists()
    assert theirs.read_bytes() == b"x" * 4096 and target.read_bytes() == b"x" * 4096
    assert link.is_symlink() and folder.is_dir()
