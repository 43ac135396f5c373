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
from remote.run_scripts import signal_agent_script, stop_sampler_script
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


def test_the_script_finds_the_mark_when_the_run_dir_is_spelt_with_a_double_slash(tmp_path: Path) -> None:
    # mktemp -d "$TMPDIR"/benchbay-XXXXXXXX with TMPDIR=/tmp/ prints /tmp//benchbay-...; the agent
    # normalises its run directory (os.path.abspath) before it marks its environment
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    spelt = f"{tmp_path}//benchbay-run"
    env = dict(os.environ, **{process_tree.RUN_MARK_VAR: process_tree.run_mark(os.path.abspath(spelt))})
    orphan = subprocess.Popen(["sleep", "300"], env=env, start_new_session=True)
    try:
        done = subprocess.run(["sh", "-c", kill_run_script(spelt)], capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stderr) == (0, "")
        assert orphan.wait(timeout=5) == -9
    finally:
        if orphan.poll() is None:
            orphan.kill()
        orphan.wait()


@pytest.mark.parametrize("shell", SHELLS)
def test_the_script_kills_only_the_exact_mark(shell: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "benchbay-run"
    (run_dir / "inner").mkdir(parents=True)
    mark = process_tree.run_mark(str(run_dir))
    others = [{process_tree.RUN_MARK_VAR: process_tree.run_mark(str(run_dir / "inner"))},   # another run's
              {"OLD_" + process_tree.RUN_MARK_VAR: mark},                                 # another variable
              {"NOTE": f"{process_tree.RUN_MARK_VAR}={mark}"}]                           # inside a value
    strangers = [subprocess.Popen(["sleep", "300"], env=dict(os.environ, **extra), start_new_session=True)
                 for extra in others]
    ours = subprocess.Popen(["sleep", "300"], env=dict(os.environ, **{process_tree.RUN_MARK_VAR: mark}),
                            start_new_session=True)
    try:
        done = subprocess.run([shell, "-c", kill_run_script(str(run_dir))], capture_output=True, text=True,
                              timeout=30)
        assert (done.returncode, done.stderr) == (0, "")
        assert ours.wait(timeout=5) == -9
        assert [s.poll() for s in strangers] == [None, None, None]
    finally:
        for proc in [*strangers, ours]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_a_term_spares_a_process_that_took_the_dead_agents_pid(tmp_path: Path) -> None:
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    stranger = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True, cwd="/")
    try:
        (run_dir / "agent.pid").write_text(f"{stranger.pid}\n")
        done = subprocess.run(["sh", "-c", signal_agent_script(str(run_dir), "TERM", touch_cancel=True)],
                              capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stderr) == (0, "") and (run_dir / "cancel").exists()
        time.sleep(0.3)
        assert stranger.poll() is None
    finally:
        if stranger.poll() is None:
            os.killpg(stranger.pid, 9)
        stranger.wait()


def test_a_term_reaches_the_agents_group(tmp_path: Path) -> None:
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    agent = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True, cwd=str(run_dir))
    try:
        (run_dir / "agent.pid").write_text(f"{agent.pid}\n")
        done = subprocess.run(["sh", "-c", signal_agent_script(str(run_dir), "TERM")], capture_output=True,
                              text=True, timeout=30)
        assert (done.returncode, done.stderr) == (0, "")
        assert agent.wait(timeout=5) == -15
    finally:
        if agent.poll() is None:
            os.killpg(agent.pid, 9)
        agent.wait()


def test_stopping_the_sampler_spares_a_process_that_took_its_pid(tmp_path: Path) -> None:
    # the sampler stopped by itself (a full disk): its pid now leads someone else's process group
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    stranger = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True, cwd="/")
    try:
        (run_dir / "sampler.pid").write_text(f"{stranger.pid}\n")
        done = subprocess.run(["sh", "-c", stop_sampler_script(str(run_dir))], capture_output=True, text=True,
                              timeout=30)
        assert (done.returncode, done.stderr) == (0, "")
        assert stranger.poll() is None
    finally:
        if stranger.poll() is None:
            os.killpg(stranger.pid, 9)
        stranger.wait()


def test_stopping_the_sampler_still_stops_the_sampler(tmp_path: Path) -> None:
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    (run_dir / "sampler.sh").write_text("trap 'exit 0' TERM; sleep 300 & wait\n")
    sampler = subprocess.Popen(["sh", f"{run_dir}/sampler.sh", str(run_dir), "0.5", "auto"],
                               start_new_session=True, cwd="/")
    try:
        (run_dir / "sampler.pid").write_text(f"{sampler.pid}\n")
        time.sleep(0.2)
        done = subprocess.run(["sh", "-c", stop_sampler_script(str(run_dir))], capture_output=True, text=True,
                              timeout=30)
        assert (done.returncode, done.stderr) == (0, "")
        assert sampler.poll() is not None and (run_dir / "stop").exists()
    finally:
        if sampler.poll() is None:
            os.killpg(sampler.pid, 9)
        sampler.wait()
