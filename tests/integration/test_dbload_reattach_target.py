"""A workbench killed (SIGKILL) during a dbload step whose database server is an inventory host (a second sshd
test host, target_host=NAME): the re-attach collects the server's monitor with the load run and ties the two as
a run never left would be — the load run names the monitor, and every step carries the server's means over its
seconds, equal to the stored samples."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.workbench import Workbench
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.lost_runs import add_host, finish, stopped_after, wait_for  # noqa: F401 - stopped_after: a fixture
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.integration.test_dbload_reattach import _start
from tests.integration.test_dbload_ssh import PG_TARGET, _pg_databases, pg_tcp  # noqa: F401 - fixture
from tests.integration.test_dbload_target_telemetry import _check_server_figures

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("stopped_after")]
ROOT = Path(__file__).resolve().parents[2]


def _load_on_host(store):
    """The stored dbload run once it runs on its host (the server's monitor is stored as running too)."""
    running = store.runs.running()
    runs = [run for run in running if run.test == "dbload" and run.remote is not None]
    monitors = [run for run in running if run.test == "monitor" and run.remote is not None]
    return runs[0] if runs and monitors else None


def _bench(cli_env) -> Workbench:
    """A workbench on the test's store, opened once the runs are there (as the next start of Benchbay)."""
    return Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}", ssh_config_path=cli_env["ssh_config"],
                     user_known_hosts=cli_env["user_known_hosts"])


def _start_and_kill(cli_env, client: str, server: str, database: str):
    params = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": "1,2",
              "step_seconds": 3, "database": database, "target_host": server}
    run, proc = _start(cli_env, client, params, on_host=_load_on_host)
    proc.send_signal(signal.SIGKILL)
    assert finish(proc)[0] == -signal.SIGKILL
    return run


def _monitors(workbench) -> list:
    return workbench.list_runs(test="monitor")


@pytest.mark.usefixtures("pg_tcp")
def test_runs_attach_ties_the_servers_telemetry_to_the_load_run(cli_env, ssh_hosts) -> None:
    client, server = (add_host(host) for host in ssh_hosts)
    database = scratch_name(PG_PREFIX)
    run = _start_and_kill(cli_env, client, server, database)
    workbench = _bench(cli_env)
    assert [m.status for m in _monitors(workbench)] == ["running"]    # the server's monitor lost its workbench
    code, _out, err = finish(subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "runs", "attach", str(run.id)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=os.environ.copy()), timeout=300)
    assert code == 0, err
    assert workbench.find_run(run.id).run.status == "done"
    monitor = _check_server_figures(workbench, run.id, run.id, server)   # every step, as if nothing was killed
    assert [m.id for m in _monitors(workbench)] == [monitor]
    back = next(e for e in workbench.run_events(monitor) if e["type"] == "target_telemetry")
    assert back["load_runs"] == [run.id]
    assert _pg_databases(database) == set()
    workbench.close()


@pytest.mark.usefixtures("pg_tcp")
def test_the_next_start_collects_a_finished_load_with_its_servers_telemetry(cli_env, ssh_hosts) -> None:
    client, server = (add_host(host) for host in ssh_hosts)
    database = scratch_name(PG_PREFIX)
    run = _start_and_kill(cli_env, client, server, database)
    workbench = _bench(cli_env)
    # before the load is over, the next start collects neither: the server's monitor waits for its load run
    assert [r.test for r in workbench.orphan_candidates()] == ["dbload"]
    run_dir = Path(run.remote.run_dir)
    wait_for("the load to end on its host", lambda: b'"done"' in (run_dir / "events.jsonl").read_bytes(),
              timeout=180)
    outcomes = workbench.collect_orphans(follow=False)   # what `benchbay run` does at start
    assert [o.status for o in outcomes] == ["done"], outcomes
    monitor = _check_server_figures(workbench, run.id, run.id, server)
    assert [(m.id, m.status) for m in _monitors(workbench)] == [(monitor, "done")]
    assert workbench.orphan_candidates() == []
    assert _pg_databases(database) == set()
    workbench.close()
