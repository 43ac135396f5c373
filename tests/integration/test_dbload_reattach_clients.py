"""A workbench killed (SIGKILL) during a database load from two client hosts (two sshd test hosts) against one
PostgreSQL: `benchbay runs attach` collects each client run, and once the last is stored their TOTAL run is
made as a run never left would have it: every second the clients' sum, the knee named, and a word that the
clients' clock offsets were lost with the workbench. Nothing is left: no scratch database, no agent."""
from __future__ import annotations

from pathlib import Path

import pytest

from storage.db import open_store
from tests.fixtures.dbload_runs import per_second_by_step
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.lost_runs import add_host, benchbay, kill_then_attach_clients, stopped_after  # noqa: F401 - stopped_after: a fixture
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.fixtures.processes import processes_using
from tests.integration.test_dbload_ssh import PG_TARGET, _pg_databases, pg_tcp  # noqa: F401 - fixture

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("stopped_after", "pg_tcp")]


def _loading(store) -> list | None:
    """Both client runs, once each host sends its first second of load."""
    runs = [run for run in store.runs.running() if run.test == "dbload" and run.remote is not None]
    if len(runs) < 2:
        return None
    for run in runs:
        events = Path(run.remote.run_dir) / "events.jsonl"
        if not (events.exists() and b'"dbload_tick"' in events.read_bytes()):
            return None
    return sorted(runs, key=lambda run: run.parameters["params"]["client_index"])


def test_the_total_of_two_clients_is_made_after_both_are_collected(cli_env, ssh_hosts) -> None:
    names = [add_host(host) for host in ssh_hosts]
    database = scratch_name(PG_PREFIX)
    proc = benchbay("run", *names, "--test", "dbload", "--interval", "0.5", "--set", "engine=postgresql",
                    "--set", f"target={PG_TARGET}", "--set", "data=scale=1", "--set", "clients=1,2",
                    "--set", "step_seconds=3", "--set", "step_gap=2", "--set", f"database={database}")
    runs, said = kill_then_attach_clients(cli_env, proc, "both clients' first second of load", _loading)
    assert "TOTAL" not in said[0] and "their TOTAL is run" in said[1], said
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        clients = [store.runs.get(run.id) for run in runs]
        assert [c.run.status for c in clients] == ["done", "done"], [c.run.error for c in clients]
        [total] = [run for run in store.runs.list(test="dbload") if run.host_name.startswith("TOTAL ")]
        detail = store.runs.get(total.id)
        events = store.runs.events(total.id)
    finally:
        store.close()
    assert said[1].rstrip().endswith(f"their TOTAL is run {total.id}")
    assert detail.run.status == "done" and detail.run.parameters["members"] == [run.id for run in runs]
    first, second, sums = (per_second_by_step(c.results) for c in (*clients, detail))
    assert sorted(sums) == [1, 2]
    for step, values in sums.items():   # each second the two clients' sum (a second one did not report: 0)
        longest = max(len(first[step]), len(second[step]))
        assert values == [sum(c[i] for c in (first[step], second[step]) if i < len(c)) for i in range(longest)]
    assert any(r.metric == "knee_clients" for r in detail.results)
    assert any(e["type"] == "warning" and "clock offsets" in e["message"] for e in events)
    assert _pg_databases(database) == set()
    for run in runs:
        assert not Path(run.remote.run_dir).exists() and processes_using(run.remote.run_dir) == []
