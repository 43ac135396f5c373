"""The dbload test from two client hosts (two sshd test hosts) against this machine's one PostgreSQL (and
its MariaDB, and a Redis of the test's own):
every step starts on both together, the stored totals are the sums of the clients' seconds, the knee (or
"no knee") is named, and nothing is left: no scratch database, no pgbench, no agent."""
from __future__ import annotations

import json
import os
import pwd

import pytest

from app.cli import main
from app.engine.dbload_multi import DbMultiRequest, run_dbload_multi
from app.engine.orchestrator import RunControl
from app.workbench import Workbench
from remote.hostkeys import KnownHosts, host_key_id
from tests.fixtures import mariadb
from tests.fixtures.dbload_runs import per_second_by_step
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.fixtures.sshd import public_key
from tests.integration.test_dbload_redis import private_redis  # noqa: F401 - fixture
from tests.integration.test_dbload_redis_ssh import _keys
from tests.integration.test_dbload_ssh import PG_TARGET, _add, _need, _pg_databases, pg_tcp  # noqa: F401 - fixture

pytestmark = pytest.mark.integration


def _add_hosts(cli_env, sshd_session, hosts) -> list[str]:
    known = KnownHosts(cli_env["home"] / "known_hosts", cli_env["user_known_hosts"])
    user = pwd.getpwuid(os.getuid()).pw_name
    for host in hosts:
        server = host.server
        assert main(["host", "add", server.name, "--address", server.address, "--port", str(server.port),
                     "--user", user, "--key", str(sshd_session.client_key)]) == 0
        known.add(host_key_id(server.address, server.port), public_key(server.host_key_path))
    return [h.server.name for h in hosts]


def _pgbench_on(database: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"pgbench" and database.encode() in argv:
            pids.append(int(entry))
    return pids


@pytest.mark.usefixtures("pg_tcp")
def test_two_clients_load_one_postgresql_together(cli_env, sshd_session, ssh_hosts, capsys) -> None:
    names = _add_hosts(cli_env, sshd_session, ssh_hosts)
    database = scratch_name(PG_PREFIX)
    capsys.readouterr()
    code = main(["run", *names, "--test", "dbload", "--set", "engine=postgresql", "--set", f"target={PG_TARGET}",
                 "--set", "data=scale=1", "--set", "clients=1,2", "--set", "step_seconds=3",
                 "--set", "step_gap=3", "--set", f"database={database}", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    report = json.loads(out)
    assert report["database"] == database
    assert report["target"] is None        # a loopback target names no inventory host: no server to watch
    assert [s["clients"] for s in report["steps"]] == [2, 4]     # 1 and 2 connections on each of two hosts
    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        members = {row["host"]: row["run_id"] for row in report["runs"]}
        assert all(row["status"] == "done" for row in report["runs"]), report["runs"]
        per_client = {}
        starts: dict[int, list[float]] = {}
        for host, run_id in members.items():
            detail = bench.find_run(run_id)
            per_client[host] = per_second_by_step(detail.results)
            for event in bench.run_events(run_id):   # each client's step starts, on the workbench's clock
                if event["type"] == "dbload_step_start":
                    starts.setdefault(event["step"], []).append(event["t"])
        spreads = {step: max(t) - min(t) for step, t in starts.items()}
        assert sorted(spreads) == [1, 2] and all(len(t) == 2 for t in starts.values())
        assert all(spread < 0.5 for spread in spreads.values()), spreads   # started together
        total = bench.find_run(report["total_run_id"])
        assert total.run.status == "done", total.run.error
        stored = {r.metadata["step"]: r for r in total.results if r.metric == "ops_per_s"}
        for step in (1, 2):
            clients = [per_client[h][step] for h in names]
            longest = max(len(c) for c in clients)
            expected = [sum(c[i] for c in clients if i < len(c)) for i in range(longest)]
            assert stored[step].metadata["per_second"] == pytest.approx(expected, abs=1e-9)   # the sum, per second
            assert sum(expected) > 0
            assert stored[step].metadata["start_spread_s"] == pytest.approx(spreads[step], abs=1e-6)
            assert sum(stored[step].metadata["shares"].values()) == pytest.approx(1.0)
            busy = stored[step].metadata["client_cpu_busy"]    # each client's CPUs over the step, as it measured
            assert set(busy) == set(names) and all(0.0 <= b <= 1.0 for b in busy.values()), busy
            waited = stored[step].metadata["client_cpu_wait"]  # and how long its tool waited for a CPU
            assert set(waited) == set(names) and all(0.0 <= w <= 1.0 for w in waited.values()), waited
        knee = next(r for r in total.results if r.metric == "knee_clients")
        assert knee.metadata["knee_text"] == report["knee_text"]
        assert report["knee_text"] == "no knee within the sweep" or report["knee_text"].startswith("knee at ")
    finally:
        bench.close()
    assert _pg_databases(database) == set()                      # client 0 dropped the scratch database
    assert not _pgbench_on(database)
    for step, spread in sorted(spreads.items()):
        print(f"step {step}: start spread {spread * 1e3:.1f} ms; total {stored[step].value:.0f} txn/s "
              f"({stored[step].metadata['shares_text']})")
    print(report["knee_text"])


@pytest.mark.usefixtures("pg_tcp")
def test_a_cancel_during_the_first_step_leaves_no_database_and_no_pgbench(workbench, ssh_hosts) -> None:
    names = []
    for host in ssh_hosts:
        workbench.add_host(host.spec())
        workbench.known_hosts.add(host.host_id, host.host_key())
        names.append(host.name)
    database = scratch_name(PG_PREFIX)
    params = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": "1,2", "step_seconds": 30,
              "database": database}
    control = RunControl()
    seen: dict[str, set[str]] = {}

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and not seen:
            seen["ticking"] = {host}
            seen["databases"] = _pg_databases(database)
            control.cancel()

    outcome = run_dbload_multi(workbench, DbMultiRequest(tuple(names), params, 0.5), control, on_event)
    assert seen["databases"] == {database}           # the load had begun in the shared scratch database
    assert all(o.status == "cancelled" for o in outcome.outcomes), outcome.outcomes
    assert _pg_databases(database) == set()
    assert not _pgbench_on(database)


def _check_totals(workbench, outcome) -> dict[int, list[float]]:
    """Both clients' runs done, the TOTAL run's seconds the sums of theirs, a knee or "no knee" named."""
    assert not outcome.error, outcome.error
    assert all(o.status == "done" for o in outcome.outcomes), outcome.outcomes
    per_client = [per_second_by_step(workbench.find_run(o.run_id).results) for o in outcome.outcomes]
    total = workbench.find_run(outcome.total_run_id)
    assert total.run.status == "done", total.run.error
    stored = per_second_by_step(total.results)
    assert sorted(stored) == [1, 2]
    for step, seconds in stored.items():
        clients = [c[step] for c in per_client]
        expected = [sum(c[i] for c in clients if i < len(c)) for i in range(max(map(len, clients)))]
        assert seconds == pytest.approx(expected, abs=1e-9) and sum(expected) > 0
    knee = next(r for r in total.results if r.metric == "knee_clients").metadata["knee_text"]
    assert knee == "no knee within the sweep" or knee.startswith("knee at ")
    return stored


def test_two_clients_load_one_mariadb_together_and_the_scratch_database_goes(workbench, ssh_hosts,
                                                                          mariadb_login) -> None:
    _need("sysbench", "sysbench")
    names = [_add(workbench, host) for host in ssh_hosts]
    database = mariadb_login["database"]
    seen: dict[str, set[str]] = {}

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and host not in seen:
            seen[host] = mariadb.databases(database)

    params = {"engine": "mysql", "target": "127.0.0.1:3306", "workload": "oltp_point_select", "data": "scale=1000",
              "clients": "1,2", "step_seconds": 3, "step_gap": 3, "user": mariadb_login["user"],
              "password": mariadb_login["password"], "database": database}
    outcome = run_dbload_multi(workbench, DbMultiRequest(tuple(names), params, 0.5), RunControl(), on_event)
    _check_totals(workbench, outcome)
    assert seen == {names[0]: {database}, names[1]: {database}}   # both loaded the one database client 0 made
    assert mariadb.databases(database) == set()                 # client 0 dropped it once the other was done


def test_two_clients_load_one_redis_together_and_the_keys_go(workbench, ssh_hosts, private_redis) -> None:  # noqa: F811
    names = [_add(workbench, host) for host in ssh_hosts]
    seen: dict[str, set[bytes]] = {}

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and host not in seen:
            seen[host] = {key.rsplit(b":", 1)[0] for key in _keys(private_redis)}

    params = {"engine": "redis", "target": private_redis, "tool": "builtin", "data": "scale=2000", "value_size": 64,
              "clients": "1,2", "step_seconds": 3, "step_gap": 3}
    outcome = run_dbload_multi(workbench, DbMultiRequest(tuple(names), params, 0.5), RunControl(), on_event)
    _check_totals(workbench, outcome)
    prefix = f"benchbay:m{outcome.group}".encode()
    assert seen == {names[0]: {prefix}, names[1]: {prefix}}      # both loaded the keys client 0 wrote
    for result in outcome.outcomes:
        ops = next(r for r in workbench.find_run(result.run_id).results if r.metric == "ops_per_s")
        assert ops.metadata["keyspace"] == 2000                  # the second client found every key to load
    assert _keys(private_redis) == []                            # client 0 deleted them at the end
