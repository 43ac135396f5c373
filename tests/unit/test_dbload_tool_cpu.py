"""The "this step's total may be the client's limit" note rests on the load tool's own CPU (the agent and the
processes under it, from /proc/<pid>/stat) against the CPUs they could use, not on the whole machine's: a
client host busy with other work gets no note; a tool that used all the CPU it could does."""
from __future__ import annotations

import os

import pytest

from app.engine.dbload_multi import DbMultiOutcome, client_limit
from remote.agent import tool_cpu

AGENT, TOOL, OTHER = 100, 101, 200


def _proc(tmp_path, processes: dict[int, tuple[int, int, int]]) -> str:
    """A /proc with one stat file per pid: (parent, own ticks, reaped children's ticks)."""
    proc = tmp_path / "proc"
    if proc.exists():
        for old in proc.iterdir():
            if old.name.isdigit():
                (old / "stat").unlink()
                old.rmdir()
    for pid, (parent, own, reaped) in processes.items():
        (proc / str(pid)).mkdir(parents=True)
        # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
        fields = ["S", parent, pid, pid, 0, -1, 0, 0, 0, 0, 0, own - own // 4, own // 4, reaped, 0, 20, 0, 1]
        (proc / str(pid) / "stat").write_text(f"{pid} (a (tool)) " + " ".join(map(str, fields)) + "\n")
    return str(proc)


def _share(tmp_path, before: dict, after: dict, seconds: float, cpus: float) -> float | None:
    first = tool_cpu.tree_ticks(AGENT, _proc(tmp_path, before))
    second = tool_cpu.tree_ticks(AGENT, _proc(tmp_path, after))
    return tool_cpu.busy((first / 100.0, 0.0, cpus), (second / 100.0, seconds, cpus))


def test_a_machine_busy_with_other_work_is_not_the_clients_limit(tmp_path) -> None:
    # another process kept both CPUs busy for the 10 s step; pgbench under the agent used 0.3 s
    before = {1: (0, 5, 0), AGENT: (1, 10, 0), TOOL: (AGENT, 20, 0), OTHER: (1, 1000, 0)}
    after = {1: (0, 5, 0), AGENT: (1, 12, 0), TOOL: (AGENT, 48, 0), OTHER: (1, 3000, 0)}
    share = _share(tmp_path, before, after, 10.0, 2.0)
    assert share == 0.015
    assert client_limit(DbMultiOutcome("g", ("c1",), [None], cpu={1: {"c1": share}}), 1) == ""


def test_a_tool_that_used_all_the_cpu_it_could_is_named(tmp_path) -> None:
    # pgbench ended with the step and was reaped: its ticks are in the agent's cutime, counted once
    before = {1: (0, 5, 0), AGENT: (1, 10, 0), TOOL: (AGENT, 50, 0), OTHER: (1, 1000, 0)}
    after = {1: (0, 5, 0), AGENT: (1, 30, 1960), OTHER: (1, 1000, 0)}
    share = _share(tmp_path, before, after, 10.0, 2.0)
    assert share == 0.965
    assert client_limit(DbMultiOutcome("g", ("c1",), [None], cpu={1: {"c1": share}}), 1) == (
        "c1's load tool used 96 % of the CPU it could use")


def test_a_single_threaded_tool_is_out_of_cpu_at_one_cpu_of_many(tmp_path) -> None:
    # redis-benchmark (one thread) kept one of 8 CPUs busy for the whole 10 s step: the limit, although
    # the host had 7 CPUs idle
    before = {1: (0, 5, 0), AGENT: (1, 10, 0), TOOL: (AGENT, 0, 0)}
    after = {1: (0, 5, 0), AGENT: (1, 20, 0), TOOL: (AGENT, 980, 0)}
    first = tool_cpu.tree_ticks(AGENT, _proc(tmp_path, before))
    second = tool_cpu.tree_ticks(AGENT, _proc(tmp_path, after))
    spans = ((first / 100.0, 0.0, 8.0), (second / 100.0, 10.0, 8.0))
    assert tool_cpu.busy(*spans) == 0.124   # against all 8 CPUs it looks idle
    share = tool_cpu.busy(*spans, parallel=1)
    assert share == 0.99
    assert client_limit(DbMultiOutcome("g", ("c1",), [None], cpu={1: {"c1": share}}), 1) == (
        "c1's load tool used 99 % of the CPU it could use")
    assert tool_cpu.busy(*spans, parallel=16) == 0.124   # more threads than CPUs: the CPUs are the limit


def test_each_engine_says_how_many_cpus_its_tool_can_keep_busy(monkeypatch) -> None:
    from remote.agent import dbload_redis, resp_load
    from remote.agent.dbload_pgbench import PgbenchEngine
    from remote.agent.dbload_sysbench import SysbenchEngine

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert PgbenchEngine.parallel(None, 16) == 4 and PgbenchEngine.parallel(None, 2) == 2
    assert SysbenchEngine.parallel(None, 16) == 16
    params = {"target": "127.0.0.1:6379", "key_prefix": "bb:", "get_ratio": 0.5, "pipeline": 1}
    assert dbload_redis.parallelism(params, ("redis-benchmark", "7.0"), 10) == 2   # a process per command
    assert dbload_redis.parallelism(dict(params, get_ratio=1.0), ("redis-benchmark", "7.0"), 10) == 1
    builtin = (dbload_redis.ENGINE_BUILTIN, "")
    assert dbload_redis.parallelism(params, builtin, 50) == resp_load.process_count(50, 0, 1, True)
    assert dbload_redis.parallelism(dict(params, processes=3), builtin, 50) == 3


def test_a_cpu_quota_is_the_cpu_the_tool_could_use(tmp_path, monkeypatch) -> None:
    proc, root = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text("0::/half/session-7\n")
    (root / "half" / "session-7").mkdir(parents=True)
    (root / "half" / "cpu.max").write_text("50000 100000\n")
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    assert tool_cpu.usable_cpus(str(proc), str(root)) == 0.5
    (root / "half" / "cpu.max").write_text("max 100000\n")
    assert tool_cpu.usable_cpus(str(proc), str(root)) == 4.0


def test_the_agents_own_tree_is_found_on_this_machine() -> None:
    ticks = tool_cpu.tree_ticks(os.getpid())
    assert ticks is not None and ticks >= 0
    assert tool_cpu.busy(None, (1.0, 1.0, 1.0)) is None


@pytest.mark.parametrize("meta", [{"tool_cpu_busy": 0.2, "host_cpu_busy": 0.99}, {"host_cpu_busy": 0.2}])
def test_the_tools_share_is_read_first_and_older_runs_keep_the_machines(meta) -> None:
    from app.engine.dbload_multi import tool_busy

    assert tool_busy(meta) == 0.2
