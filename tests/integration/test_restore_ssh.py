"""The restore test on an SSH test host through the run engine, against the PostgreSQL the host reaches locally.

The test sshd hosts are this machine and log in as the current user, who reaches PostgreSQL over its
local socket (peer auth): the databases and files checked here are the ones the host's agent made.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.processes import processes_using, running
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration

SCRATCH = re.compile(r"^benchbay_([a-z0-9]+)_(src|j1|jn)$")


def _psql(sql: str) -> subprocess.CompletedProcess:
    return subprocess.run(["psql", "-X", "-At", "-d", "postgres", "-c", sql], capture_output=True, text=True,
                          timeout=30)


def _scratch_databases(run_dir: str = "") -> set[str]:
    """The restore test's scratch databases (psql -l); with run_dir, only that run's.

    The suite's other tests and other runs share this server: their databases are not this run's leftovers.
    """
    listing = subprocess.run(["psql", "-X", "-At", "-l"], capture_output=True, text=True, timeout=30, check=True)
    names = {line.split("|", 1)[0] for line in listing.stdout.splitlines()}
    return {n for n in names if (m := SCRATCH.match(n)) and (not run_dir or m.group(1) == _tag(run_dir))}


def _tag(run_dir: str) -> str:
    """The part of a run's scratch database names that says which run made them, as the agent makes it."""
    return re.sub(r"[^a-z0-9]", "", os.path.basename(run_dir.rstrip("/")).lower())[-16:]


@pytest.fixture()
def peer_pg() -> None:
    """The login user reaches PostgreSQL over the local socket: skip locally without it, fail under CI."""
    why = ""
    if not shutil.which("psql") or not shutil.which("pg_restore"):
        why = "PostgreSQL client tools not installed"
    else:
        probe = _psql("SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user")
        if probe.returncode != 0 or probe.stdout.strip() != "t":
            why = f"local PostgreSQL not usable with CREATEDB by the current user: {probe.stderr.strip()}"
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def _agent(events: list[dict]) -> tuple[int, str]:
    started = next(e for e in events if e["type"] == "started")
    start = next(e for e in events if e["type"] == "start" and e["seq"] is not None)
    return start["pid"], started["run_dir"]


def test_restore_over_ssh_records_times_and_leaves_nothing(workbench, ssh_host, peer_pg, tmp_path: Path) -> None:
    name = _add(workbench, ssh_host)
    work = tmp_path / "work"
    work.mkdir()
    request = RunRequest(name, "restore", {"size_mb": 8, "jobs": 2, "test_dir": str(work)}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    detail = workbench.store.runs.get(outcome.run_id)
    assert detail.run.status == "done" and detail.run.host_name == name
    res = {r.metric: r for r in detail.results}
    for metric in ("restore_j1", "restore_jN"):
        assert res[f"{metric}.total_s"].value > 0 and res[f"{metric}.total_s"].unit == "s"
        assert res[f"{metric}.data_s"].value > 0 and res[f"{metric}.post_data_s"].value > 0
        assert res[f"{metric}.rows_per_s"].value > 0
    assert res["restore_jN.total_s"].metadata["jobs"] == 2
    assert res["db_bytes"].metadata["kind"] == "postgresql" and res["db_bytes"].metadata["server_version"]
    events = workbench.store.runs.events(outcome.run_id)
    assert [e["phase"] for e in events if e["type"] == "phase_start"] == ["generate", "dump", "restore_j1",
                                                                            "restore_jn"]
    _, run_dir = _agent(events)
    assert _scratch_databases(run_dir) == set()   # no scratch database of this run left (psql -l)
    assert list(work.iterdir()) == []             # nor the dump
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_cancel_in_the_middle_of_a_restore_over_ssh(workbench, ssh_host, peer_pg, tmp_path: Path) -> None:
    name = _add(workbench, ssh_host)
    work = tmp_path / "work"
    work.mkdir()
    control = RunControl()
    during: dict[str, object] = {}

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "started":
            during["run_dir"] = event["run_dir"]
        if event["type"] == "progress" and event.get("phase") == "restore_j1" and "files" not in during:
            # the dump is written, pg_restore fills a scratch database: what a cancel must take away
            during["files"] = [p.name for p in work.rglob("*")]
            during["databases"] = _scratch_databases(str(during["run_dir"]))
            control.cancel()

    request = RunRequest(name, "restore", {"size_mb": 64, "jobs": 2, "test_dir": str(work)}, interval=0.5)
    started = time.monotonic()
    outcome = execute_run(workbench, request, control, None, on_event)

    assert time.monotonic() - started < 120
    assert outcome.status == "cancelled"
    assert "source.dump" in during["files"] and during["databases"]
    assert workbench.store.runs.get(outcome.run_id).run.status == "cancelled"
    events = workbench.store.runs.events(outcome.run_id)
    agent = [e for e in events if e["seq"] is not None]
    assert agent[-1]["type"] == "done" and agent[-1]["status"] == "cancelled"
    pid, run_dir = _agent(events)
    assert f"benchbay_{_tag(run_dir)}_j1" in during["databases"]   # the scratch database the cancel hit
    assert not running(pid)
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []
    assert processes_using(str(work)) == []   # pg_restore and psql went with the agent
    # the agent's own account: nothing it could not undo (the drop's psql killed said "could not remove: drop ...")
    assert [e["message"] for e in agent if e["type"] == "warning" and "could not" in e["message"]] == []
    assert _scratch_databases(run_dir) == set()
    assert list(work.iterdir()) == []
