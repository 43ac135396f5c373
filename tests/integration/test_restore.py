"""The restore test through the real run engine on `local` against the local PostgreSQL."""
from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from remote.run_session import RunSession

pytestmark = pytest.mark.integration



HBA_LOCK = "/run/lock/benchbay-test-pg-hba.lock"


def _left_by(events: list[dict]) -> str:
    """The scratch databases a run left (named after its run directory: other test runs on this
    PostgreSQL have their own)."""
    run_dir = next(e["run_dir"] for e in events if e["type"] == "started")
    tag = re.sub(r"[^a-z0-9]", "", os.path.basename(run_dir.rstrip("/")).lower())[-16:]
    return _psql(f"SELECT datname FROM pg_database WHERE datname ~ '^benchbay_{tag}_(src|j1|jn)$'").stdout.strip()


def _psql(sql: str) -> subprocess.CompletedProcess:
    return subprocess.run(["psql", "-X", "-At", "-d", "postgres", "-c", sql], capture_output=True, text=True,
                          timeout=30)


@pytest.fixture(scope="module")
def local_pg() -> None:
    """PostgreSQL on the local socket for the current user: skip locally without it, fail under CI."""
    why = ""
    if not shutil.which("psql") or not shutil.which("pg_restore"):
        why = "PostgreSQL client tools not installed"
    else:
        probe = _psql("SELECT 1")
        if probe.returncode != 0:
            why = f"local PostgreSQL not usable: {probe.stderr.strip()}"
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def _results(workbench, run_id: int) -> dict:
    return {r.metric: r for r in workbench.store.runs.get(run_id).results}


def _work(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    return work


def test_restore_times_both_passes_and_leaves_nothing(workbench, local_pg, tmp_path) -> None:
    work = _work(tmp_path)
    request = RunRequest("local", "restore", {"size_mb": 8, "jobs": 2, "test_dir": str(work)}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    results = _results(workbench, outcome.run_id)
    for metric in ("restore_j1", "restore_jN"):
        for part in ("total_s", "pre_data_s", "data_s", "post_data_s"):
            assert results[f"{metric}.{part}"].value > 0 and results[f"{metric}.{part}"].unit == "s"
        total = results[f"{metric}.total_s"].value
        assert total >= results[f"{metric}.data_s"].value + results[f"{metric}.post_data_s"].value - 0.01
        assert results[f"{metric}.mbps_dump"].metadata["denominator"] == "dump bytes"
        assert results[f"{metric}.mbps_db"].metadata["denominator"] == "restored database size"
        assert results[f"{metric}.rows_per_s"].value > 0
    assert results["restore_jN.total_s"].metadata["jobs"] == 2
    assert results["restore_j1.total_s"].metadata["jobs"] == 1
    assert results["dump_bytes"].value > 100_000 and results["db_bytes"].value > 1_000_000
    meta = results["db_bytes"].metadata
    assert meta["kind"] == "postgresql" and meta["server_version"]
    for key in ("fsync", "synchronous_commit", "wal_level", "maintenance_work_mem", "shared_buffers"):
        assert meta[key], key
    assert meta["durable"] == (meta["fsync"] == "on")

    events = workbench.store.runs.events(outcome.run_id)
    phases = [e["phase"] for e in events if e["type"] == "phase_start"]
    assert phases == ["generate", "dump", "restore_j1", "restore_jn"]
    assert _left_by(events) == ""
    assert list(work.iterdir()) == []          # the dump and its directory are gone


def test_a_refused_login_fails_the_run_with_one_line(workbench, local_pg, tmp_path) -> None:
    work = _work(tmp_path)
    params = {"size_mb": 8, "dsn": "host=127.0.0.1 user=benchbay_no_such_role dbname=postgres",
              "test_dir": str(work)}
    outcome = execute_run(workbench, RunRequest("local", "restore", params, interval=0.5), RunControl())

    assert outcome.status == "failed"
    assert "\n" not in outcome.error and "PostgreSQL refused the login" in outcome.error
    assert "benchbay_no_such_role" in outcome.error or "password" in outcome.error
    assert not _results(workbench, outcome.run_id)
    stored = workbench.store.runs.get(outcome.run_id)
    assert stored is not None and stored.run.status == "failed"
    assert list(work.iterdir()) == []


def test_without_the_tools_a_file_level_restore_runs(workbench, tmp_path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    work = _work(tmp_path)
    params = {"size_mb": 8, "pg_bindir": str(empty), "test_dir": str(work)}
    outcome = execute_run(workbench, RunRequest("local", "restore", params, interval=0.5), RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    results = _results(workbench, outcome.run_id)
    assert {"file_restore.total_s", "file_restore.extract_s", "file_restore.sync_s", "file_restore.mbps",
            "file_restore.files_per_s", "file_restore.archive_bytes"} <= set(results)
    assert all(r.metadata["kind"] == "file" for r in results.values())
    assert results["file_restore.mbps"].metadata["denominator"] == "extracted bytes"
    assert results["file_restore.files_per_s"].value > 0
    warnings = [e["message"] for e in workbench.store.runs.events(outcome.run_id) if e["type"] == "warning"]
    assert any("file-level restore" in w for w in warnings)
    assert list(work.iterdir()) == []


@pytest.fixture
def password_roles(local_pg):
    """Two login roles with a password, one with CREATEDB and one without, that must log in over TCP with
    scram-sha-256: a pg_hba.conf line for them goes first, and the file is put back and reloaded after."""
    # pg_hba.conf is the server's, one for every test run on this machine: one edits it at a time
    Path(HBA_LOCK).parent.mkdir(parents=True, exist_ok=True)
    lock = open(HBA_LOCK, "ab")  # noqa: SIM115 - held until the file is put back
    fcntl.flock(lock, fcntl.LOCK_EX)
    hba = Path(_psql("SHOW hba_file").stdout.strip())
    original = hba.read_text()
    tag = secrets.token_hex(4)
    creator, plain = f"benchbay_pw_{tag}", f"benchbay_norights_{tag}"
    password = "pw-" + secrets.token_urlsafe(12)
    sql = (f"SET password_encryption = 'scram-sha-256';\n"
           f"CREATE ROLE {creator} LOGIN CREATEDB PASSWORD '{password}';\n"
           f"CREATE ROLE {plain} LOGIN PASSWORD '{password}';\n")
    created = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-f", "-"], input=sql,
                             capture_output=True, text=True, timeout=30)
    assert created.returncode == 0, created.stderr
    try:
        hba.write_text(f"host all {creator},{plain} 127.0.0.1/32 scram-sha-256\n" + original)
        assert _psql("SELECT pg_reload_conf()").returncode == 0
        yield {"creator": creator, "plain": plain, "password": password}
    finally:
        hba.write_text(original)
        _psql("SELECT pg_reload_conf()")
        for role in (creator, plain):
            _psql(f"DROP ROLE IF EXISTS {role}")
        lock.close()


def _dsn(role: str) -> str:
    return f"host=127.0.0.1 port=5432 user={role} dbname=postgres"


def test_a_password_travels_through_the_fifo_never_to_disk_or_ps(workbench, password_roles, tmp_path) -> None:
    password = password_roles["password"]
    params = {"size_mb": 4, "jobs": 2, "dsn": _dsn(password_roles["creator"]), "password": password,
              "test_dir": str(_work(tmp_path))}
    transport = workbench.connect("local")
    session = RunSession(transport, "restore", params, interval=0.5)
    try:
        session.start()
        spec = json.loads(transport.get_bytes(f"{session.run_dir}/spec.json"))
        assert "password" not in spec["params"] and spec["secrets"] == "secrets.fifo"
        assert spec["params"]["dsn"] == _dsn(password_roles["creator"])
        seen_in_ps = []
        while not session.finished:
            session.poll()
            ps = subprocess.run(["ps", "-eww", "-o", "args="], capture_output=True, text=True).stdout
            seen_in_ps += [line for line in ps.splitlines() if password in line]
            time.sleep(0.2)
        files = subprocess.run(["grep", "-rl", "-D", "skip", password, session.run_dir], capture_output=True, text=True)
        session.finish()
    finally:
        session.close()
        transport.close()
    assert session.status == "done", session.error
    assert seen_in_ps == [] and files.stdout == ""
    results = {e["metric"] for e in session.events if e["type"] == "result"}
    assert {"restore_j1.total_s", "restore_jN.total_s"} <= results
    start = next(e for e in session.events if e["type"] == "start")
    assert "password" not in start["params"]
    assert _left_by(session.events) == ""


def test_a_wrong_password_fails_quickly_with_one_line(workbench, password_roles, tmp_path) -> None:
    work = _work(tmp_path)
    params = {"size_mb": 4, "dsn": _dsn(password_roles["creator"]), "password": "not-the-password",
              "test_dir": str(work)}
    started = time.monotonic()
    outcome = execute_run(workbench, RunRequest("local", "restore", params, interval=0.5), RunControl())

    assert time.monotonic() - started < 20
    assert outcome.status == "failed" and "\n" not in outcome.error
    assert f'password authentication failed for user "{password_roles["creator"]}"' in outcome.error
    assert "check the user in the DSN and the password" in outcome.error
    stored = workbench.store.runs.get(outcome.run_id)
    assert stored.run.parameters["params"]["password"] == "***"
    assert "not-the-password" not in json.dumps(workbench.store.runs.events(outcome.run_id))
    assert list(work.iterdir()) == []


def test_a_role_without_createdb_fails_with_one_line(workbench, password_roles, tmp_path) -> None:
    role = password_roles["plain"]
    params = {"size_mb": 4, "dsn": _dsn(role), "password": password_roles["password"],
              "test_dir": str(_work(tmp_path))}
    outcome = execute_run(workbench, RunRequest("local", "restore", params, interval=0.5), RunControl())

    assert outcome.status == "failed" and "\n" not in outcome.error
    assert f'role "{role}" may not create databases; grant it CREATEDB' in outcome.error


def test_the_password_reaches_the_agent_over_ssh(workbench, password_roles, ssh_host, tmp_path) -> None:
    workbench.add_host(ssh_host.spec())
    workbench.known_hosts.add(ssh_host.host_id, ssh_host.host_key())
    params = {"size_mb": 4, "jobs": 2, "dsn": _dsn(password_roles["creator"]), "password": password_roles["password"]}
    outcome = execute_run(workbench, RunRequest(ssh_host.name, "restore", params, interval=0.5), RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    assert "restore_jN.total_s" in _results(workbench, outcome.run_id)
    assert workbench.store.runs.get(outcome.run_id).run.parameters["params"]["password"] == "***"
