"""A database server that goes away in the middle of a dbload step, over a real sshd test host: MariaDB
(sysbench) cut off behind a relay, Redis shut down under redis-benchmark. The sweep ends with the steps before
kept, the run says what is left on the server and how to remove it, and no load process stays.

(PostgreSQL and the built-in Redis generator: test_dbload_ssh.py, test_dbload_redis_ssh.py.)
"""
from __future__ import annotations

import contextlib
import os
import threading

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from remote.agent import resp_wire
from tests.fixtures import mariadb
from tests.fixtures.processes import processes_using, running
from tests.integration.test_dbload_reattach import _tools_running
from tests.integration.test_dbload_redis import private_redis  # noqa: F401 - the fixture used here
from tests.integration.test_dbload_redis_ssh import _installed, _missing
from tests.integration.test_dbload_ssh import _add, _agent, _need, _Proxy, _steps

pytestmark = pytest.mark.integration


def test_a_mariadb_that_goes_away_ends_the_sweep_and_says_what_is_left(workbench, ssh_host, mariadb_login) -> None:
    _need("sysbench", "sysbench")
    name = _add(workbench, ssh_host)
    proxy = _Proxy(3306)
    database = mariadb_login["database"]
    params = {"engine": "mysql", "target": f"127.0.0.1:{proxy.port}", "workload": "oltp_point_select",
              "data": "scale=1000", "clients": "1,2", "step_seconds": 4, "user": mariadb_login["user"],
              "password": mariadb_login["password"], "database": database}

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and event["step"] == 2:
            proxy.cut()

    try:
        outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl(), None,
                              on_event)
        events = workbench.store.runs.events(outcome.run_id)
        warnings = [e["message"] for e in events if e["type"] == "warning"]
        text = " | ".join(warnings) + " | " + outcome.error
        assert (outcome.status, outcome.error) == ("done", ""), text
        # the step before stands; the step the server went away in ends the sweep, in one true line
        assert sorted(_steps(workbench.store.runs.get(outcome.run_id).results)) == [1]
        assert any("sysbench failed with 2 clients" in w and "the sweep ends at 1 client" in w for w in warnings), text
        # the server is out of reach: the drop cannot happen, and the run says what to remove and how
        assert f"the scratch database {database} is left on the server" in text
        assert f"remove it with DROP DATABASE `{database}`" in text
        assert mariadb_login["password"] not in text
        assert mariadb.databases(database) == {database}
    finally:
        proxy.cut()
        mariadb.admin_sql(f"DROP DATABASE IF EXISTS `{database}`")
    pid, run_dir = _agent(events)
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []
    assert _tools_running("sysbench", database) == []


def test_a_redis_that_goes_away_under_redis_benchmark_says_how_to_delete_the_keys(workbench, ssh_host,
                                                                                 private_redis) -> None:  # noqa: F811
    if not _installed("redis-benchmark"):
        _missing("redis-benchmark is not installed (Debian package redis-tools)")
    name = _add(workbench, ssh_host)
    params = {"engine": "redis", "target": private_redis, "tool": "redis-benchmark", "clients": "2,4",
              "step_seconds": 4, "data": "scale=1000", "key_prefix": "bench:gone:"}
    host, port = resp_wire.parse_target(private_redis)

    def shutdown() -> None:
        with resp_wire.Client(host, port) as client, contextlib.suppress(OSError, resp_wire.RedisError):
            client.call("SHUTDOWN", "NOSAVE")

    # a second into the second step (redis-benchmark sizes its requests from a calibration: on a busy machine a
    # step may have no second tick to wait for)
    timer = threading.Timer(1.0, shutdown)

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "phase_start" and event.get("phase") == "step2" and timer.ident is None:
            timer.start()

    try:
        outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl(), None,
                              on_event)
    finally:
        timer.cancel()
        if timer.ident is not None:
            timer.join()
    events = workbench.store.runs.events(outcome.run_id)
    warnings = [e["message"] for e in events if e["type"] == "warning"]
    text = " | ".join(warnings) + " | " + outcome.error
    assert (outcome.status, outcome.error) == ("done", ""), text
    assert 1 in _steps(workbench.store.runs.get(outcome.run_id).results)   # the step before the server went
    # the keys went with the server (no save): the run cannot delete them, and says how one would
    assert any("could not be deleted" in w and "--pattern 'bench:gone:*'" in w for w in warnings), text
    pid, run_dir = _agent(events)
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []
    assert _tools_running("redis-benchmark", f"-p {port}") == []
