"""The dbload test from two client hosts (two sshd test hosts) against this machine's one PostgreSQL:
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
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.fixtures.sshd import public_key
from tests.integration.test_dbload_ssh import PG_TARGET, _pg_databases, pg_tcp  # noqa: F401 - fixture

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
    assert [s["clients"] for s in report["steps"]] == [2, 4]     # 1 and 2 connections on each of two hosts
    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        members = {row["host"]: row["run_id"] for row in report["runs"]}
        assert all(row["status"] == "done" for row in report["runs"]), report["runs"]
        per_client = {}
        starts: dict[int, list[float]] = {}
        for host, run_id in members.items():
            detail = bench.find_run(run_id)
            per_client[host] = {r.metadata["step"]: r.metadata["per_second"] for r in detail.results
                                if r.metric == "ops_per_s"}
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
