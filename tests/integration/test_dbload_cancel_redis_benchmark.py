"""A cancel during a redis-benchmark step, over a real sshd test host: the run is stored as cancelled, every
key of the run's prefix is deleted and no redis-benchmark stays. (The built-in generator, pgbench and
sysbench: test_dbload_redis_ssh.py, test_dbload_ssh.py.)
"""
from __future__ import annotations

import os

import pytest

from app.engine.orchestrator import RunRequest, execute_run
from tests.fixtures.processes import processes_using, running
from tests.integration.test_dbload_reattach import _tools_running
from tests.integration.test_dbload_redis import private_redis  # noqa: F401 - the fixture used here
from tests.integration.test_dbload_redis_ssh import _installed, _keys, _missing, _run
from tests.integration.test_dbload_ssh import _add, _agent

pytestmark = pytest.mark.integration


def test_cancel_during_a_redis_benchmark_step_deletes_the_keys(workbench, ssh_host, private_redis) -> None:  # noqa: F811
    if not _installed("redis-benchmark"):
        _missing("redis-benchmark is not installed (Debian package redis-tools)")
    name = _add(workbench, ssh_host)
    params = {"engine": "redis", "target": private_redis, "tool": "redis-benchmark", "clients": [4],
              "step_seconds": 30, "data": "scale=3000", "key_prefix": "bench:cancel:"}
    seen, on_event, control = _run(workbench, ssh_host, params)
    seen["cancel"] = True
    port = private_redis.rsplit(":", 1)[1]

    def watch(host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and "tools" not in seen:
            seen["tools"] = _tools_running("redis-benchmark", f"-p {port}")
        on_event(host, event)

    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), control, None, watch)

    assert (outcome.status, outcome.error) == ("cancelled", "")
    assert len(seen["keys"]) == 3000 and all(k.startswith(b"bench:cancel:") for k in seen["keys"])
    assert seen["tools"]                            # redis-benchmark was loading the server when the cancel came
    assert _keys(private_redis) == []
    assert _tools_running("redis-benchmark", f"-p {port}") == []
    events = workbench.store.runs.events(outcome.run_id)
    pid, run_dir = _agent(events)
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []
    assert [e["message"] for e in events if e["type"] == "warning" and "could not" in e["message"]] == []
