"""The dbload test on an SSH test host through the run engine, against the real PostgreSQL (pgbench) and
MariaDB (sysbench) of this machine: the stored figures are those the tools printed, and nothing is left.

The sshd test hosts are this machine: the host's agent runs pgbench / sysbench against 127.0.0.1.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import threading
import time

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures import mariadb
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.fixtures.processes import processes_using, running
from tests.fixtures.sshd import SshTestHost
from tests.integration.test_restore import local_pg, password_roles  # noqa: F401 - fixtures used here too

pytestmark = pytest.mark.integration

PG_TARGET = "127.0.0.1:5432"
PROGRESS = re.compile(r"^progress: [0-9.]+ s, ([0-9.]+) tps, lat ([0-9.]+) ms")
SYSBENCH_LINE = re.compile(r"^\[ *\d+s \] thds: \d+ tps: ([0-9.]+) qps: [0-9.]+ "
                           r"\(r/w/o: ([0-9.]+)/([0-9.]+)/([0-9.]+)\) lat \(ms,99%\): ([0-9.]+)")


def _need(tool: str, package: str) -> None:
    if not shutil.which(tool):
        message = f"{tool} is not installed (Debian package {package})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _pg_databases(prefix: str) -> set[str]:
    listing = subprocess.run(["psql", "-X", "-At", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c",
                              f"SELECT datname FROM pg_database WHERE starts_with(datname, '{prefix}')"],
                             capture_output=True, text=True, timeout=30, check=True)
    return set(listing.stdout.split())


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def _agent(events: list[dict]) -> tuple[int, str]:
    started = next(e for e in events if e["type"] == "started")
    start = next(e for e in events if e["type"] == "start" and e["seq"] is not None)
    return start["pid"], started["run_dir"]


def _steps(results) -> dict[int, dict[str, object]]:
    out: dict[int, dict[str, object]] = {}
    for r in results:
        if r.test == "dbload" and r.metric != "knee_clients":
            out.setdefault(r.metadata["step"], {})[r.metric] = r
    return out


@pytest.fixture()
def pg_tcp() -> None:
    _need("pgbench", "postgresql-contrib")
    probe = subprocess.run(["psql", "-X", "-At", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-c",
                            "select 1"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        message = f"PostgreSQL does not take postgres over TCP on {PG_TARGET}: {probe.stderr.strip()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def test_pgbench_sweep_over_ssh_stores_what_pgbench_printed_and_leaves_nothing(workbench, ssh_host,
                                                                             pg_tcp) -> None:
    name = _add(workbench, ssh_host)
    database = scratch_name(PG_PREFIX)
    params = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": "1,2", "step_seconds": 3,
              "database": database}
    seen: dict[str, object] = {}

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and "databases" not in seen:
            seen["databases"] = _pg_databases(database)

    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl(), None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    assert seen["databases"] == {database}        # the load ran in the scratch database the test made
    detail = workbench.store.runs.get(outcome.run_id)
    steps = _steps(detail.results)
    assert sorted(steps) == [1, 2]
    events = workbench.store.runs.events(outcome.run_id)
    ticks = [e for e in events if e["type"] == "dbload_tick"]
    for step, figures in steps.items():
        ops = figures["ops_per_s"]
        printed = ops.metadata["tool_output"]
        tps = [float(m.group(1)) for m in map(PROGRESS.match, printed) if m]
        assert tps and ops.metadata["per_second"] == tps            # each second as pgbench printed it
        assert ops.value == statistics.median(tps)
        total = next(float(line.split()[2]) for line in printed if line.startswith("tps = "))
        assert ops.metadata["tool_total"] == total                  # the step's total as pgbench printed it
        processed = next(int(line.rsplit(" ", 1)[1]) for line in printed
                         if line.startswith("number of transactions actually processed"))
        assert ops.metadata["logged_transactions"] == processed     # the percentiles read every transaction
        assert ops.metadata["per_second_lat_avg_ms"] == [float(m.group(2)) for m in map(PROGRESS.match, printed) if m]
        assert ops.metadata["engine"].startswith("pgbench ") and ops.metadata["server"].startswith("PostgreSQL ")
        step_ticks = [t for t in ticks if t["step"] == step]
        assert [t["ops"]["txn"] for t in step_ticks] == tps           # the live ticks carry the same figures
        assert [t["second"] for t in step_ticks] == list(range(1, len(tps) + 1))
        assert figures["txn_p99_ms"].metadata["p99_per_second"] == [t["lat_ms"]["txn"]["p99"] for t in step_ticks]
        p50, p99, p999 = (figures[f"txn_{p}_ms"].value for p in ("p50", "p99", "p999"))
        assert 0 < p50 <= p99 <= p999
        assert figures["errors"].value == 0
    knee = next(r for r in detail.results if r.metric == "knee_clients")
    assert knee.metadata["rule"].startswith("throughput under 1.1x") and knee.value in (1, 2)
    pid, run_dir = _agent(events)
    assert _pg_databases(database) == set()
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_cancel_during_a_pgbench_step_drops_the_scratch_database(workbench, ssh_host, pg_tcp) -> None:
    name = _add(workbench, ssh_host)
    control = RunControl()
    during: dict[str, object] = {}

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "started":
            during["run_dir"] = event["run_dir"]
        if event["type"] == "dbload_tick" and "databases" not in during:
            during["databases"] = _pg_databases("benchbay_dbload_")
            control.cancel()

    params = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": [4], "step_seconds": 30}
    started = time.monotonic()
    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), control, None, on_event)

    assert outcome.status == "cancelled" and time.monotonic() - started < 120
    events = workbench.store.runs.events(outcome.run_id)
    pid, run_dir = _agent(events)
    tag = re.sub(r"[^a-z0-9]", "", os.path.basename(run_dir.rstrip("/")).lower())[-16:]
    assert f"benchbay_dbload_{tag}" in during["databases"]      # pgbench was loading it when the cancel came
    assert f"benchbay_dbload_{tag}" not in _pg_databases("benchbay_dbload_")
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []
    agent = [e for e in events if e["seq"] is not None]
    assert [e["message"] for e in agent if e["type"] == "warning" and "could not" in e["message"]] == []


def test_sysbench_with_a_password_stores_what_sysbench_printed(workbench, ssh_host, mariadb_login) -> None:
    _need("sysbench", "sysbench")
    name = _add(workbench, ssh_host)
    password, database = mariadb_login["password"], mariadb_login["database"]
    params = {"engine": "mysql", "target": "127.0.0.1:3306", "workload": "oltp_point_select", "data": "scale=2000",
              "clients": [1, 2], "step_seconds": 3, "user": mariadb_login["user"], "password": password,
              "database": database}
    in_ps: list[str] = []
    during: list[set[str]] = []

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick":
            ps = subprocess.run(["ps", "-eww", "-o", "args="], capture_output=True, text=True).stdout
            in_ps.extend(line for line in ps.splitlines() if password in line)
            if not during:
                during.append(mariadb.databases(database))

    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl(), None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    assert during == [{database}] and in_ps == []     # the load ran and no command line showed the password
    detail = workbench.store.runs.get(outcome.run_id)
    events = workbench.store.runs.events(outcome.run_id)
    start = next(e for e in events if e["type"] == "start")
    assert "password" not in start["params"]
    stored = json.dumps(events, default=str) + json.dumps([r.metadata for r in detail.results], default=str)
    assert password not in stored                        # nor in the stored run
    steps = _steps(detail.results)
    assert sorted(steps) == [1, 2]
    ticks = [e for e in events if e["type"] == "dbload_tick"]
    for step, figures in steps.items():
        ops = figures["ops_per_s"]
        printed = ops.metadata["tool_output"]
        lines = [m for m in map(SYSBENCH_LINE.match, printed) if m]
        assert lines and ops.metadata["per_second"] == [float(m.group(1)) for m in lines]
        assert ops.metadata["per_second_by_op"]["read"] == [float(m.group(2)) for m in lines]
        total = next(line for line in printed if line.strip().startswith("transactions:"))
        assert ops.metadata["tool_total"] == float(re.search(r"\(([0-9.]+) per sec\.\)", total).group(1))
        p99 = next(line for line in printed if line.strip().startswith("99th percentile:"))
        assert figures["txn_p99_ms"].value == float(p99.split(":")[1])
        assert figures["txn_p99_ms"].metadata["p99_per_second"] == [float(m.group(5)) for m in lines]
        assert [t["ops"]["txn"] for t in ticks if t["step"] == step] == ops.metadata["per_second"]
        assert ops.metadata["engine"].startswith("sysbench ") and "MariaDB" in ops.metadata["server"]
    assert mariadb.databases(database) == set()


def test_the_command_line_runs_shows_and_compares_database_load(cli_env, ssh_host, pg_tcp, mariadb_login, capsys,
                                                                  monkeypatch) -> None:
    _need("sysbench", "sysbench")
    from app.cli import main
    from tests.fixtures.sshd import ssh_keygen_fingerprint

    assert main(["host", "add", "db-client", "--address", ssh_host.address, "--port", str(ssh_host.port),
                 "--user", ssh_host.user, "--key", str(ssh_host.client_key_path)]) == 0
    assert main(["host", "trust", "db-client", "--fingerprint", ssh_keygen_fingerprint(ssh_host.host_key_path)]) == 0
    capsys.readouterr()
    assert main(["run", "db-client", "--test", "dbload", "--set", "engine=postgresql", "--set", f"target={PG_TARGET}",
                 "--set", "data=scale=1", "--set", "clients=1,2", "--set", "step_seconds=3",
                 "--set", f"database={scratch_name(PG_PREFIX)}"]) == 0, capsys.readouterr().err
    pg_out = capsys.readouterr().out
    # the password from stdin (no terminal), never from the command line
    monkeypatch.setattr("sys.stdin", io.StringIO(mariadb_login["password"] + "\n"))
    assert main(["run", "db-client", "--test", "dbload", "--set", "engine=mysql", "--set", "target=127.0.0.1:3306",
                 "--set", "workload=oltp_point_select", "--set", "data=scale=1000", "--set", "clients=2",
                 "--set", "step_seconds=3", "--set", f"user={mariadb_login['user']}",
                 "--set", f"database={mariadb_login['database']}", "--db-password"]) == 0, capsys.readouterr().err
    my_out = capsys.readouterr().out
    for out, engine in ((pg_out, "pgbench "), (my_out, "sysbench ")):
        assert f"engine {engine}" in out and "ops/s (median)" in out and "txn p99 ms" in out and "knee" in out
        assert "variation %" in out and "tool's total" in out
    assert "MariaDB" in my_out and "PostgreSQL" in pg_out
    assert mariadb_login["password"] not in pg_out + my_out

    assert main(["runs", "list", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    ids = sorted(r["id"] for r in runs if r["test"] == "dbload")
    assert len(ids) == 2
    assert main(["runs", "show", str(ids[0])]) == 0
    shown = capsys.readouterr().out
    assert "ops/s (median)" in shown and "pgbench " in shown
    assert main(["compare", "--json", *map(str, ids)]) == 0
    compared = json.loads(capsys.readouterr().out)
    text = json.dumps(compared)
    assert "dbload:best.ops_per_s" in text and "dbload:best.txn_p99_ms" in text


def test_cancel_during_a_sysbench_step_drops_the_scratch_database(workbench, ssh_host, mariadb_login) -> None:
    _need("sysbench", "sysbench")
    name = _add(workbench, ssh_host)
    control = RunControl()
    database = mariadb_login["database"]
    during: list[set[str]] = []

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick" and not during:
            during.append(mariadb.databases(database))
            control.cancel()

    params = {"engine": "mysql", "target": "127.0.0.1:3306", "workload": "oltp_read_write", "data": "scale=1000",
              "clients": [4], "step_seconds": 30, "user": mariadb_login["user"], "password": mariadb_login["password"],
              "database": database}
    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), control, None, on_event)

    assert outcome.status == "cancelled"
    assert during == [{database}] and mariadb.databases(database) == set()
    pid, run_dir = _agent(workbench.store.runs.events(outcome.run_id))
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_a_wrong_password_fails_in_one_line_that_says_what_to_check(workbench, ssh_host, mariadb_login) -> None:
    _need("sysbench", "sysbench")
    name = _add(workbench, ssh_host)
    params = {"engine": "mysql", "target": "127.0.0.1:3306", "data": "scale=100", "clients": [1], "step_seconds": 2,
              "user": mariadb_login["user"], "password": "not-the-password", "database": mariadb_login["database"]}
    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl())
    assert outcome.status == "failed"
    assert f"cannot log in to MySQL at 127.0.0.1:3306 as {mariadb_login['user']}: Access denied" in outcome.error
    assert "check target, user and password" in outcome.error and "not-the-password" not in outcome.error
    assert "\n" not in outcome.error and mariadb.databases(mariadb_login["database"]) == set()


def test_a_step_the_server_refuses_ends_the_sweep_and_keeps_the_steps_before(workbench, ssh_host, pg_tcp) -> None:
    name = _add(workbench, ssh_host)
    too_many = 200   # over the server's max_connections (100 by default)
    params = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": [1, too_many],
              "max_clients": too_many, "step_seconds": 2, "database": scratch_name(PG_PREFIX)}
    outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    detail = workbench.store.runs.get(outcome.run_id)
    assert sorted(_steps(detail.results)) == [1]
    knee = next(r for r in detail.results if r.metric == "knee_clients")
    assert knee.metadata["steps_run"] == 1 and knee.value == 1
    warnings = [e["message"] for e in workbench.store.runs.events(outcome.run_id) if e["type"] == "warning"]
    assert any(f"pgbench failed with {too_many} clients" in w and "the sweep ends at 1 client" in w
               for w in warnings), warnings
    assert _pg_databases(params["database"]) == set()


def test_pgbench_with_a_password_never_shows_it(workbench, ssh_host, pg_tcp,
                                                password_roles) -> None:  # noqa: F811 - the imported fixture
    name = _add(workbench, ssh_host)
    password, role = password_roles["password"], password_roles["creator"]
    database = scratch_name(PG_PREFIX)
    base = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": [2], "step_seconds": 2,
            "user": role, "database": database}
    refused = execute_run(workbench, RunRequest(name, "dbload", dict(base, password="not-it"), interval=0.5),
                          RunControl())
    assert refused.status == "failed" and "\n" not in refused.error
    assert f"cannot log in to PostgreSQL at 127.0.0.1:5432 as {role}: password authentication failed" in refused.error
    in_ps: list[str] = []

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick":
            ps = subprocess.run(["ps", "-eww", "-o", "args="], capture_output=True, text=True).stdout
            in_ps.extend(line for line in ps.splitlines() if password in line)

    outcome = execute_run(workbench, RunRequest(name, "dbload", dict(base, password=password), interval=0.5),
                          RunControl(), None, on_event)
    assert (outcome.status, outcome.error) == ("done", "")
    events = workbench.store.runs.events(outcome.run_id)
    assert any(e["type"] == "dbload_tick" for e in events) and in_ps == []
    results = workbench.store.runs.get(outcome.run_id).results
    assert password not in json.dumps(events, default=str) + json.dumps([r.metadata for r in results], default=str)
    assert _pg_databases(database) == set()


class _Proxy:
    """A TCP relay to the real server that can be cut: the target going away under the load."""

    def __init__(self, port: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.target = port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                server = socket.create_connection(("127.0.0.1", self.target))
                self.sockets += [client, server]
                for a, b in ((client, server), (server, client)):
                    threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := a.recv(65536):
                b.sendall(data)

    def cut(self) -> None:
        for s in [self.listener, *self.sockets]:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def test_a_target_that_goes_away_ends_the_sweep_and_says_what_is_left(workbench, ssh_host, pg_tcp, pg_admin) -> None:
    name = _add(workbench, ssh_host)
    proxy = _Proxy(5432)
    database = scratch_name(PG_PREFIX)
    params = {"engine": "postgresql", "target": f"127.0.0.1:{proxy.port}", "data": "scale=1", "clients": [2, 4],
              "step_seconds": 6, "database": database}

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "dbload_tick":
            proxy.cut()

    try:
        outcome = execute_run(workbench, RunRequest(name, "dbload", params, interval=0.5), RunControl(), None,
                              on_event)
        warnings = [e["message"] for e in workbench.store.runs.events(outcome.run_id) if e["type"] == "warning"]
        text = " | ".join(warnings) + " | " + outcome.error
        assert "aborted" in text and "the sweep ends at 2 clients" in text, text
        assert f"connection to server at \"127.0.0.1\", port {proxy.port} failed: Connection refused" in text
        # the server is out of reach: the drop cannot happen, and the run says what to remove
        assert f'the scratch database {database} is left on the server' in text
        assert f'remove it with DROP DATABASE "{database}"' in text
        assert _pg_databases(database) == {database}
    finally:
        proxy.cut()
        pg_admin.drop_database(f"postgresql:///{database}")
    pid, run_dir = _agent(workbench.store.runs.events(outcome.run_id))
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []
