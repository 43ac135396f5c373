"""A workbench killed (SIGKILL) during a dbload step, over a real sshd test host: the host finishes the run
alone, removes what it made (scratch database, keys, its load processes) and `benchbay runs attach` stores
the whole run, every second once. PostgreSQL (pgbench), MariaDB (sysbench), Redis (built-in generator and
redis-benchmark).

The sshd test hosts are this machine: the tests look at the run directory, the servers and the process
list directly, as an admin logged in on the host would.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from storage.db import open_store
from tests.fixtures import mariadb
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.lost_runs import _STARTED, add_host, finish, running_on_host, stopped_after, wait_for  # noqa: F401 - stopped_after: a fixture
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.fixtures.processes import processes_using, running
from tests.integration.test_dbload_redis import private_redis  # noqa: F401 - the fixture used here
from tests.integration.test_dbload_redis_ssh import _installed, _keys, _missing
from tests.integration.test_dbload_ssh import PG_TARGET, _need, _pg_databases, pg_tcp  # noqa: F401 - fixture

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("stopped_after")]
ROOT = Path(__file__).resolve().parents[2]


def _start(cli_env, name: str, params: dict[str, object], password: str = "",
           on_host: Callable[[object], object] = running_on_host) -> tuple[object, subprocess.Popen]:
    """`benchbay run NAME --test dbload` as its own process; the run once the host runs its first second of load
    (`on_host(store)`: the stored run once it runs on the host, else None)."""
    argv = [sys.executable, str(ROOT / "main.py"), "run", name, "--test", "dbload", "--interval", "0.5"]
    for key, value in params.items():
        argv += ["--set", f"{key}={value}"]
    if password:
        argv.append("--db-password")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE, text=True,
                            env=os.environ.copy())
    _STARTED.append(proc)
    proc.stdin.write(password + "\n" if password else "")   # no terminal: the password from stdin
    proc.stdin.close()
    proc.stdin = None   # communicate() later reads the output only
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = wait_for("the run to start on the host", lambda: on_host(store), timeout=120)
    finally:
        store.close()
    events = Path(run.remote.run_dir) / "events.jsonl"
    wait_for("the load's first second", lambda: events.exists() and b'"dbload_tick"' in events.read_bytes(),
              timeout=180)
    return run, proc


def _kill_then_attach(cli_env, run, proc: subprocess.Popen, made: Callable[[], bool]) -> tuple[int, list[dict]]:
    """SIGKILL to the workbench while the host loads the target; `runs attach` follows the run to its end.
    `made`: the scratch database or keys exist (checked before the kill). The agent's pid and the stored events."""
    assert made()                                          # the load runs in what the test made
    run_dir = Path(run.remote.run_dir)
    pid = int((run_dir / "agent.pid").read_text().strip())
    proc.send_signal(signal.SIGKILL)
    assert finish(proc)[0] == -signal.SIGKILL
    code, _out, err = finish(subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "runs", "attach", str(run.id)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=os.environ.copy()), timeout=300)
    assert code == 0, err
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        detail, events = store.runs.get(run.id), store.runs.events(run.id)
    finally:
        store.close()
    assert (detail.run.status, detail.run.error) == ("done", ""), err
    assert any(e["type"] == "reattached" for e in events)
    seqs = [e["seq"] for e in events if e["seq"] is not None]
    assert seqs == list(range(1, len(seqs) + 1))           # every agent event once, none lost across the kill
    ticks = [e for e in events if e["type"] == "dbload_tick"]
    results = {(r.metadata.get("step"), r.metric): r for r in detail.results}
    steps = sorted({t["step"] for t in ticks})
    assert steps
    for step in steps:
        stored = results[(step, "ops_per_s")].metadata["per_second"]
        seconds = [t["second"] for t in ticks if t["step"] == step]
        assert seconds == list(range(1, len(seconds) + 1)) and len(stored) == len(seconds)
    assert any(r.metric == "knee_clients" for r in detail.results)
    assert not running(pid) and not run_dir.exists() and processes_using(str(run_dir)) == []
    return pid, events


def _tools_running(word: str, needle: str) -> list[str]:
    """Command lines of live processes named `word` whose arguments hold `needle` (the target's port, the
    database): a load tool the run left behind."""
    ps = subprocess.run(["ps", "-eww", "-o", "stat=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if word in line and needle in line and not line.lstrip().startswith("Z")]


@pytest.mark.usefixtures("pg_tcp")
def test_a_killed_workbench_pgbench_run_is_collected_and_the_database_dropped(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    database = scratch_name(PG_PREFIX)
    run, proc = _start(cli_env, name, {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1",
                                       "clients": "1,2", "step_seconds": 3, "database": database})
    _kill_then_attach(cli_env, run, proc, lambda: _pg_databases(database) == {database})
    assert _pg_databases(database) == set()
    assert _tools_running("pgbench", database) == []


def test_a_killed_workbench_sysbench_run_is_collected_and_the_database_dropped(cli_env, ssh_host,
                                                                              mariadb_login) -> None:
    _need("sysbench", "sysbench")
    name = add_host(ssh_host)
    database = mariadb_login["database"]
    run, proc = _start(cli_env, name, {"engine": "mysql", "target": "127.0.0.1:3306",
                                       "workload": "oltp_point_select", "data": "scale=1000", "clients": "1,2",
                                       "step_seconds": 3, "user": mariadb_login["user"], "database": database},
                       password=mariadb_login["password"])
    _kill_then_attach(cli_env, run, proc, lambda: mariadb.databases(database) == {database})
    assert mariadb.databases(database) == set()
    assert _tools_running("sysbench", database) == []


@pytest.mark.parametrize("tool", ["builtin", "redis-benchmark"])
def test_a_killed_workbench_redis_run_is_collected_and_the_keys_deleted(cli_env, ssh_host, private_redis,  # noqa: F811
                                                                        tool: str) -> None:
    if tool == "redis-benchmark" and not _installed("redis-benchmark"):
        _missing("redis-benchmark is not installed (Debian package redis-tools)")
    name = add_host(ssh_host)
    run, proc = _start(cli_env, name, {"engine": "redis", "target": private_redis, "tool": tool,
                                       "clients": "1,2", "step_seconds": 3, "data": "scale=2000",
                                       "key_prefix": "bench:killed:"})
    _kill_then_attach(cli_env, run, proc, lambda: len(_keys(private_redis)) == 2000)
    assert _keys(private_redis) == []
    port = private_redis.rsplit(":", 1)[1]
    assert _tools_running("redis-benchmark", f"-p {port}") == []
