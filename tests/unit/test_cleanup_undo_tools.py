"""A cancelled run's undo steps finish: no kill of the run's processes ends the tools they start.

The restore test drops its scratch databases in cleanup callbacks that run psql. A stop kills every
process of the run, walking /proc until none is left; on a loaded host that walk was still going when
the cleanup started psql, killed it, and the scratch database stayed on the server. The same for the
watchdog's cleanup of an orphaned run while the main thread's cleanup was dropping.

Real processes in a stand-in agent (a python child of the test, so the kills never reach the test's
own children). The slow walk is made certain: in the stop's thread, the walk goes on until the undo
tool has had every chance to start.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from remote.agent import process_tree
from remote.agent.restore_pg import Pg
from remote.agent.run_context import EventWriter, RunContext

REPO = Path(__file__).resolve().parents[2]

AGENT = r"""
import json, os, subprocess, sys, threading, time
from remote.agent import process_tree
from remote.agent.run_context import EventWriter, RunContext

run_dir, scenario = sys.argv[1], sys.argv[2]
undo_started = threading.Event()
real_kill = process_tree.kill_run_processes


def the_undo_tool_runs(seconds):
    # the undo tool has started when a process of the run is alive (the killed test tool is reaped)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if process_tree.run_processes(os.getpid(), os.environ[process_tree.RUN_MARK_VAR]):
            return
        time.sleep(0.02)


def loaded_walk(root=None, mark=None):
    # a stop's kill on a loaded host: it walks /proc again after the cleanup could have begun
    left = real_kill(root, mark)
    if threading.current_thread().name == "stop":
        undo_started.wait(1.0)
        the_undo_tool_runs(1.5)
        left = real_kill(root, mark)
    return left


process_tree.kill_run_processes = loaded_walk
ctx = RunContext(EventWriter(os.path.join(run_dir, "events.jsonl")), run_dir, {})
ctx.own_process_tree(run_dir)
undone = os.path.join(run_dir, "undone")


def drop_scratch_database():
    undo_started.set()
    subprocess.run(["sh", "-c", 'sleep 1 && : > "$1"', "sh", undone], check=True, timeout=30)


ctx.add_cleanup_callback(drop_scratch_database)
tool = ctx.popen(["sleep", "60"])   # pg_restore, say
second = []
if scenario == "stop":
    threading.Thread(target=ctx.request_stop, args=("cancelled",), name="stop").start()
    tool.wait()
    helper = None
else:   # the watchdog gives up on an orphaned run while the main thread's cleanup is dropping
    ctx.request_stop("deadline")
    tool.wait()

    def orphan_exit():
        undo_started.wait(10)
        the_undo_tool_runs(2.0)
        second.append(ctx.cleanup())

    helper = threading.Thread(target=orphan_exit, name="watchdog")
    helper.start()
failed = ctx.cleanup()
if helper is not None:
    helper.join()
print(json.dumps({"failed": failed, "second": second, "undone": os.path.exists(undone)}))
"""


@pytest.mark.parametrize("scenario", ["stop", "second cleanup"])
def test_a_stop_never_kills_the_cleanups_own_tools(tmp_path: Path, scenario: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", AGENT, str(tmp_path), scenario], cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        # whatever the stand-in agent left: found by its run's mark only, never the test's own children
        process_tree.kill_run_processes(proc.pid, process_tree.run_mark(str(tmp_path)))
    assert proc.returncode == 0, err
    result = json.loads(out.splitlines()[-1])
    assert result["failed"] == []     # was: "drop_scratch_database: Command ... died with <Signals.SIGKILL: 9>"
    assert result["undone"] is True   # the scratch database is gone
    if scenario == "second cleanup":
        assert result["second"] == [[]]


def test_a_drop_that_fails_says_which_database_is_left_and_how_to_remove_it(tmp_path: Path) -> None:
    # a psql stand-in stopped by a signal, as psql was when the run's kill met it
    psql = tmp_path / "psql"
    psql.write_text("#!/bin/sh\nkill -9 $$\n")
    psql.chmod(0o755)
    pg = Pg(RunContext(EventWriter(str(tmp_path / "events.jsonl")), str(tmp_path), {}), {"psql": str(psql)})
    with pytest.raises(RuntimeError) as caught:
        pg.drop_quietly("benchbay_x_j1", True)
    assert str(caught.value) == ('the scratch database benchbay_x_j1 is left on the server (psql was stopped by '
                                 'signal 9); remove it with DROP DATABASE "benchbay_x_j1"')


def test_a_failed_undo_step_is_reported_in_its_own_words(tmp_path: Path) -> None:
    ctx = RunContext(EventWriter(str(tmp_path / "events.jsonl")), str(tmp_path), {})

    def fail(message: str) -> None:
        raise RuntimeError(message)

    ctx.add_cleanup_callback(lambda: fail("the scratch database d is left on the server (x)"))
    assert ctx.cleanup() == ["the scratch database d is left on the server (x)"]   # no "<lambda>" in front
