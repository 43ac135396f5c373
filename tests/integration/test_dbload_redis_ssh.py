"""The dbload test with engine=redis on an SSH test host through the run engine and the command line, against
a redis-server of the test's own: the built-in generator and redis-benchmark, figures stored per second and
per step, and no key of the test's left after done or cancel.

The sshd test hosts are this machine: the host's agent loads the test's redis-server on 127.0.0.1.
"""
from __future__ import annotations

import contextlib
import json
import os
import statistics

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from remote.agent import resp_wire
from tests.fixtures.processes import processes_using, running
from tests.integration.test_dbload_redis import private_redis  # noqa: F401 - the fixture used here
from tests.integration.test_dbload_ssh import _add, _agent, _steps

pytestmark = pytest.mark.integration

DB = 15


def _keys(target: str) -> list[bytes]:
    """Every key in the test server's database 15 (the server is the test's own: any key there is the run's)."""
    host, port = resp_wire.parse_target(target)
    with resp_wire.Client(host, port, db=DB) as client:
        return client.scan_prefix(b"")


def _run(workbench, host, params: dict, control: RunControl | None = None):
    seen: dict[str, object] = {}
    control = control or RunControl()

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and "keys" not in seen:
            seen["keys"] = _keys(params["target"])
            if seen.get("cancel"):
                control.cancel()

    return seen, on_event, control


@pytest.mark.parametrize("tool", ["builtin", "redis-benchmark"])
def test_redis_sweep_over_ssh_stores_every_second_and_leaves_no_key(workbench, ssh_host, private_redis,  # noqa: F811
                                                                    tool: str) -> None:
    if tool == "redis-benchmark" and not _installed("redis-benchmark"):
        _missing("redis-benchmark is not installed (Debian package redis-tools)")
    name = _add(workbench, ssh_host)
    params = {"engine": "redis", "target": private_redis, "tool": tool, "clients": "1,2", "step_seconds": 3,
              "data": "scale=3000", "value_size": 64, "get_ratio": 0.8}
    seen, on_event, control = _run(workbench, ssh_host, params)

    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), control, None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    # the run's own prefix (benchbay:<run>:) held the keyspace while the load ran, and nothing is left after
    assert len(seen["keys"]) == 3000 and all(k.startswith(b"benchbay:") for k in seen["keys"])
    assert _keys(private_redis) == []
    detail = workbench.store.runs.get(outcome.run_id)
    steps = _steps(detail.results)
    assert sorted(steps) == [1, 2]
    events = workbench.store.runs.events(outcome.run_id)
    ticks = [e for e in events if e["type"] == "dbload_tick"]
    for step, figures in steps.items():
        ops = figures["ops_per_s"]
        step_ticks = [t for t in ticks if t["step"] == step]
        # redis-benchmark runs a number of requests sized from its calibration: on a busy machine it may end
        # before the step's last second (as the Redis side's own test allows)
        assert [t["second"] for t in step_ticks] == list(range(1, len(step_ticks) + 1))
        assert len(step_ticks) == 3 if tool == "builtin" else 1 <= len(step_ticks) <= 3
        totals = [round(t["ops"]["get"] + t["ops"]["set"], 3) for t in step_ticks]
        assert ops.metadata["per_second"] == totals and ops.value == statistics.median(totals) > 0
        assert ops.metadata["per_second_by_op"]["get"] == [t["ops"]["get"] for t in step_ticks]
        assert ops.metadata["server"].startswith("Redis ") and ops.metadata["keyspace"] == 3000
        assert ops.metadata["counts"] == "operations" and ops.metadata["clients"] == step
        # redis-benchmark runs one command per process: one client runs gets only, and sets get no figure
        busy = ("get",) if tool == "redis-benchmark" and step == 1 else ("get", "set")
        assert all(t["ops"]["set"] == 0 for t in step_ticks) if busy == ("get",) else True
        assert not any(k.startswith("set_") for k in figures) if busy == ("get",) else True
        for op in busy:
            p50, p99, p999 = (figures[f"{op}_{p}_ms"].value for p in ("p50", "p99", "p999"))
            assert 0 < p50 <= p99 <= p999
            per_second = figures[f"{op}_p99_ms"].metadata["p99_per_second"]
            assert per_second == [t["lat_ms"][op]["p99"] for t in step_ticks]
        assert figures["errors"].value == 0
        if tool == "builtin":
            assert ops.metadata["engine"] == "builtin RESP" and ops.metadata["tool_total"] is None
            assert all(v is not None and v > 0 for v in figures["get_p99_ms"].metadata["p99_per_second"])
        else:
            assert ops.metadata["engine"].startswith("redis-benchmark ") and ops.metadata["tool_total"] > 0
            # redis-benchmark prints only an average each second: no p99 is made up for it
            assert figures["get_p99_ms"].metadata["p99_per_second"] == [None] * len(step_ticks)
            assert all(t["lat_ms"]["get"]["avg"] > 0 for t in step_ticks)
        assert {t["engine"] for t in step_ticks} == {ops.metadata["engine"]}
    knee = next(r for r in detail.results if r.metric == "knee_clients")
    assert knee.value in (1, 2) and knee.metadata["engine"] == steps[1]["ops_per_s"].metadata["engine"]
    pid, run_dir = _agent(events)
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_cancel_during_a_redis_step_deletes_the_keys(workbench, ssh_host, private_redis) -> None:  # noqa: F811
    name = _add(workbench, ssh_host)
    params = {"engine": "redis", "target": private_redis, "tool": "builtin", "clients": [4], "step_seconds": 30,
              "data": "scale=5000", "key_prefix": "bench:cancel:"}
    seen, on_event, control = _run(workbench, ssh_host, params)
    seen["cancel"] = True

    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), control, None, on_event)

    assert (outcome.status, outcome.error) == ("cancelled", "")
    assert len(seen["keys"]) == 5000 and all(k.startswith(b"bench:cancel:") for k in seen["keys"])
    assert _keys(private_redis) == []
    events = workbench.store.runs.events(outcome.run_id)
    pid, run_dir = _agent(events)
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []
    assert [e["message"] for e in events if e["type"] == "warning" and "could not" in e["message"]] == []


def test_the_command_line_shows_a_redis_run(cli_env, ssh_host, private_redis, capsys) -> None:  # noqa: F811
    from app.cli import main
    from tests.fixtures.sshd import ssh_keygen_fingerprint

    assert main(["host", "add", "redis-client", "--address", ssh_host.address, "--port", str(ssh_host.port),
                 "--user", ssh_host.user, "--key", str(ssh_host.client_key_path)]) == 0
    assert main(["host", "trust", "redis-client", "--fingerprint",
                 ssh_keygen_fingerprint(ssh_host.host_key_path)]) == 0
    capsys.readouterr()
    assert main(["run", "redis-client", "--test", "dbload", "--set", "engine=redis", "--set",
                 f"target={private_redis}", "--set", "tool=builtin", "--set", "data=scale=1000",
                 "--set", "clients=1,2", "--set", "step_seconds=2"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "engine builtin RESP against Redis " in out and "get p99 ms" in out and "set p99 ms" in out
    assert "per-second operations" in out and "knee" in out
    assert main(["runs", "list", "--json"]) == 0
    import json
    run_id = next(r["id"] for r in json.loads(capsys.readouterr().out) if r["test"] == "dbload")
    assert main(["runs", "show", str(run_id)]) == 0
    shown = capsys.readouterr().out
    assert "builtin RESP" in shown and "get p99.9 ms" in shown
    assert _keys(private_redis) == []


def _installed(binary: str) -> bool:
    import shutil

    return shutil.which(binary) is not None


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def test_a_redis_that_goes_away_ends_the_sweep_and_says_how_to_delete_the_keys(workbench, ssh_host,
                                                                              private_redis) -> None:  # noqa: F811
    name = _add(workbench, ssh_host)
    params = {"engine": "redis", "target": private_redis, "tool": "builtin", "clients": "1,2,4", "step_seconds": 3,
              "data": "scale=1000", "key_prefix": "bench:gone:"}
    host, port = resp_wire.parse_target(private_redis)

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and event["step"] == 2 and event["second"] == 1:
            with resp_wire.Client(host, port) as client, contextlib.suppress(OSError, resp_wire.RedisError):
                client.call("SHUTDOWN", "NOSAVE")

    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl(), None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    steps = _steps(workbench.store.runs.get(outcome.run_id).results)
    # the step it went away in runs to its end counting errors; the next cannot connect and ends the sweep
    assert sorted(steps) == [1, 2] and steps[1]["errors"].value == 0 and steps[2]["errors"].value >= 1
    assert steps[2]["ops_per_s"].metadata["per_second"][-1] == 0
    events = workbench.store.runs.events(outcome.run_id)
    warnings = [e["message"] for e in events if e["type"] == "warning"]
    assert any(f"Redis at {private_redis}" in w and "the sweep ends at 2 clients" in w for w in warnings), warnings
    assert any("could not be deleted" in w and "--pattern 'bench:gone:*'" in w for w in warnings), warnings
    pid, run_dir = _agent(events)
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_a_redis_password_goes_over_the_socket_and_is_never_shown(workbench, ssh_host,
                                                                  private_redis) -> None:  # noqa: F811
    name = _add(workbench, ssh_host)
    password = "pw-" + os.urandom(6).hex()
    host, port = resp_wire.parse_target(private_redis)
    with resp_wire.Client(host, port) as client:
        client.call("CONFIG", "SET", "requirepass", password)
    base = {"engine": "redis", "target": private_redis, "clients": [2], "step_seconds": 2, "data": "fits",
            "keyspace": 500}
    refused = execute_run(workbench, RunRequest(name, "dbload", dict(base, password="not-it"), interval=0.5),
                          RunControl())
    assert refused.status == "failed" and "\n" not in refused.error and "not-it" not in refused.error
    assert f"Redis at {private_redis}" in refused.error

    outcome = execute_run(workbench, RunRequest(name, "dbload", dict(base, password=password), interval=0.5),
                          RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    events = workbench.store.runs.events(outcome.run_id)
    results = workbench.store.runs.get(outcome.run_id).results
    ops = next(r for r in results if r.metric == "ops_per_s")
    assert ops.metadata["engine"] == "builtin RESP" and ops.metadata["keyspace"] == 500   # auto: AUTH over the socket
    assert password not in json.dumps(events, default=str) + json.dumps([r.metadata for r in results], default=str)
    with resp_wire.Client(host, port, password=password, db=DB) as client:
        assert client.scan_prefix(b"") == []
