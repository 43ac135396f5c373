"""A client's load tool starved by other work on its host uses little CPU and is still the client's limit: the
agent sums how long the tool's threads waited for a CPU (their schedstat run delay, sampled every second because
a thread's figures end with it) against the step's time, and the TOTAL's note names that client."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from app.engine.dbload_multi import DbMultiOutcome, client_limit
from remote.agent import tool_cpu

AGENT, TOOL = 100, 101


def _proc(tmp_path, tasks: dict[int, tuple[int, dict[int, tuple[int, int]]]]) -> str:
    """A /proc: pid -> (parent, {tid: (ns run, ns waited)})."""
    proc = tmp_path / "proc"
    shutil.rmtree(proc, ignore_errors=True)
    for pid, (parent, threads) in tasks.items():
        (proc / str(pid) / "task").mkdir(parents=True)
        fields = ["S", parent, pid, pid, 0, -1, 0, 0, 0, 0, 0, 10, 2, 0, 0, 20, 0, len(threads)]
        (proc / str(pid) / "stat").write_text(f"{pid} (tool) " + " ".join(map(str, fields)) + "\n")
        for tid, (ran, waited) in threads.items():
            (proc / str(pid) / "task" / str(tid)).mkdir()
            (proc / str(pid) / "task" / str(tid) / "schedstat").write_text(f"{ran} {waited} 7\n")
    return str(proc)


def test_the_growth_of_every_threads_wait_is_summed_also_of_threads_born_and_ended_between(tmp_path) -> None:
    clock = iter([10.0, 11.0, 12.0])
    waits = tool_cpu.ReadyWait(pid=AGENT, proc=_proc(tmp_path, {AGENT: (1, {AGENT: (5_000, 1_000)})}),
                               clock=lambda: next(clock))
    waits.sample()                                   # the start: what waited before the step does not count
    # a second later: the tool started with two threads
    _proc(tmp_path, {AGENT: (1, {AGENT: (6_000, 1_000)}), TOOL: (AGENT, {TOOL: (400, 300_000_000),
                                                                          102: (500, 200_000_000)})})
    waits.sample()
    # thread 102 ended; a thread 103 was born; the tool's main thread went on
    _proc(tmp_path, {AGENT: (1, {AGENT: (7_000, 1_000)}), TOOL: (AGENT, {TOOL: (800, 600_000_000),
                                                                          103: (100, 100_000_000)})})
    waits.sample()
    waited = 0.3 + 0.2 + 0.3 + 0.1                   # seconds, over 2 s of wall time
    assert waits.share() == round(waited / 2.0, 3)
    assert waits.share(parallel=2) == round(waited / 4.0, 3)   # per thread the tool runs at once


def test_without_schedstat_nothing_is_claimed(tmp_path) -> None:
    assert tool_cpu.ReadyWait(pid=AGENT, proc=str(tmp_path / "none")).share() is None
    off = tool_cpu.ReadyWait(pid=os.getpid(), enabled=False)
    off.sample()
    assert off.share() is None


@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat"),
                    reason="this kernel keeps no schedstat")
def test_a_tool_sharing_its_cpu_with_a_hog_is_seen_waiting() -> None:
    """Two spinning processes on one CPU: each waits for it about half the time; a process that sleeps and
    wakes beside them waits a moment each time, which is little of the time in all."""
    spin = "import time\nend = time.monotonic() + {}\nwhile time.monotonic() < end: pass\n"
    naps = "import time\nend = time.monotonic() + {}\nwhile time.monotonic() < end: time.sleep(0.2)\n"
    cpu = min(os.sched_getaffinity(0))
    pin = lambda: os.sched_setaffinity(0, {cpu})   # noqa: E731 - in the child, before it spins
    hog = subprocess.Popen([sys.executable, "-c", spin.format(6.0)], preexec_fn=pin)
    tool = subprocess.Popen([sys.executable, "-c", spin.format(3.0)], preexec_fn=pin)
    sleeper = subprocess.Popen([sys.executable, "-c", naps.format(3.0)], preexec_fn=pin)
    try:
        waits, idle = tool_cpu.ReadyWait(pid=tool.pid), tool_cpu.ReadyWait(pid=sleeper.pid)
        for _ in range(9):
            waits.sample()
            idle.sample()
            time.sleep(0.25)
        assert waits.share() is not None and waits.share() >= 0.3, waits.share()
        assert idle.share() is not None and idle.share() < 0.25, idle.share()
    finally:
        for proc in (tool, sleeper, hog):
            proc.kill()
            proc.wait()


def test_the_total_names_a_starved_client_when_none_was_out_of_cpu() -> None:
    outcome = DbMultiOutcome("g", ("c1", "c2"), [None, None], cpu={1: {"c1": 0.2, "c2": 0.3}, 2: {"c1": 0.9}},
                             waits={1: {"c1": 0.05, "c2": 0.41}, 2: {"c1": 0.5}})
    assert client_limit(outcome, 1) == "c2's load tool waited for a CPU 41 % of the step (other work on c2 had it)"
    assert client_limit(outcome, 2) == "c1's load tool used 90 % of the CPU it could use"   # out of CPU first
    calm = DbMultiOutcome("g", ("c1", "c2"), [None, None], cpu={1: {"c1": 0.2}}, waits={1: {"c1": 0.1}})
    assert client_limit(calm, 1) == ""
