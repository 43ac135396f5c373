"""The database server's own telemetry during a dbload run, when the server is a Benchbay host: the load comes
from sshd test hosts, the server is this machine's PostgreSQL, and this machine is the inventory's "local"
host (target_host=local). Its CPU, load, steal and disks are stored as a monitor run tied to the load run(s),
and each step carries the server's means over its seconds."""
from __future__ import annotations

import pytest

from app.engine.dbload_multi import DbMultiRequest, run_dbload_multi
from app.engine.orchestrator import RunControl, RunRequest, RunRequestError
from app.summary.dbload import dbload_lines
from tests.fixtures.leftovers import scratch_name
from tests.fixtures.postgres import PREFIX as PG_PREFIX
from tests.integration.test_dbload_ssh import PG_TARGET, _add, _pg_databases, pg_tcp  # noqa: F401 - fixture

pytestmark = pytest.mark.integration

PARAMS = {"engine": "postgresql", "target": PG_TARGET, "data": "scale=1", "clients": "1,2", "step_seconds": 3,
          "target_host": "local"}


def _step_windows(events: list[dict]) -> dict[int, tuple[float, float]]:
    starts = {e["phase"]: e["t"] for e in events if e["type"] == "phase_start"}
    return {int(e["phase"][4:]): (starts[e["phase"]], e["t"]) for e in events
            if e["type"] == "phase_end" and e["phase"].startswith("step")}


def _means_from_stored_samples(bench, monitor_run: int, window: tuple[float, float]) -> dict[str, float]:
    """What the server's stored telemetry says of one step: the mean of the samples whose middle lies in it."""
    t0 = next(e["t0"] for e in bench.run_events(monitor_run) if e["type"] == "telemetry")
    series = {(s.name, s.device): s for s in bench.run_series(monitor_run)}
    interval = dict(zip(series[("interval", "")].t, series[("interval", "")].values, strict=True))
    inside = [t for t in series[("cpu.idle", "")].t if window[0] <= t0 + t - interval[t] / 2 <= window[1]]

    def mean(name: str) -> float:
        values = dict(zip(series[(name, "")].t, series[(name, "")].values, strict=True))
        return sum(values[t] for t in inside) / len(inside)

    return {"samples": len(inside), "target_cpu_pct": 100.0 - mean("cpu.idle") - mean("cpu.iowait"),
            "target_iowait_pct": mean("cpu.iowait"), "target_steal_pct": mean("cpu.steal"),
            "target_load1": mean("load.1")}


def _check_server_figures(bench, load_run: int, timing_run: int, server: str = "local") -> int:
    """The load run names the server's monitor run and carries its means per step; the monitor run's id."""
    events = bench.run_events(load_run)
    tie = next(e for e in events if e["type"] == "target_telemetry")
    assert (tie["host"], tie["error"]) == (server, ""), tie
    monitor = bench.find_run(tie["run_id"])
    assert (monitor.run.test, monitor.run.host_name, monitor.run.status) == ("monitor", server, "done")
    windows = _step_windows(bench.run_events(timing_run))
    results = bench.find_run(load_run).results
    figures = {(r.metadata["step"], r.metric): r for r in results if r.metric.startswith("target_")}
    assert {step for step, _m in figures} == set(windows) == {1, 2}
    for step, window in windows.items():
        expected = _means_from_stored_samples(bench, tie["run_id"], window)
        assert expected["samples"] >= 1                          # the server was sampled during every step
        for metric in ("target_cpu_pct", "target_iowait_pct", "target_steal_pct", "target_load1"):
            stored = figures[(step, metric)]
            # stored to 2 decimals: within half a hundredth of the samples' mean (a mean of x.xx5 may round
            # either way, as the sum's order moves its last bits)
            assert stored.value == pytest.approx(expected[metric], abs=0.0051), (step, metric)
            assert stored.metadata["target_run_id"] == tie["run_id"]
            assert stored.metadata["samples"] == expected["samples"]
        assert 0.0 <= figures[(step, "target_cpu_pct")].value <= 100.0
    lines = dbload_lines(results)
    assert any(line.startswith(f"server {server}, step 1 (") and "% busy" in line for line in lines), lines
    return tie["run_id"]


@pytest.mark.usefixtures("pg_tcp")
def test_a_one_client_load_stores_the_servers_telemetry_beside_it(workbench, ssh_host) -> None:
    name = _add(workbench, ssh_host)
    database = scratch_name(PG_PREFIX)
    sampled: set[str] = set()
    outcome = workbench.run(RunRequest(name, "dbload", dict(PARAMS, database=database), interval=0.5),
                            RunControl(), lambda host, _sample: sampled.add(host))
    assert (outcome.status, outcome.error) == ("done", "")
    assert sampled == {name, "local"}      # the client's telemetry and the server's came live, each by its name
    monitor = _check_server_figures(workbench, outcome.run_id, outcome.run_id)
    back = next(e for e in workbench.run_events(monitor) if e["type"] == "target_telemetry")
    assert back["load_runs"] == [outcome.run_id]
    assert _pg_databases(database) == set()


@pytest.mark.usefixtures("pg_tcp")
def test_a_server_reached_over_ssh_is_sampled_over_ssh(workbench, ssh_hosts) -> None:
    client, server = (_add(workbench, host) for host in ssh_hosts)
    database = scratch_name(PG_PREFIX)
    outcome = workbench.run(RunRequest(client, "dbload", dict(PARAMS, target_host=server, database=database),
                                       interval=0.5), RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    monitor = _check_server_figures(workbench, outcome.run_id, outcome.run_id, server)
    assert workbench.find_run(monitor).run.engine == "sampler"     # the server's own sampler, over its SSH
    assert _pg_databases(database) == set()


@pytest.mark.usefixtures("pg_tcp")
def test_two_clients_and_their_total_share_one_record_of_the_server(workbench, ssh_hosts) -> None:
    names = [_add(workbench, host) for host in ssh_hosts]
    database = scratch_name(PG_PREFIX)
    outcome = run_dbload_multi(workbench, DbMultiRequest(tuple(names), dict(PARAMS, step_gap=3, database=database),
                                                         0.5))
    assert not outcome.error and outcome.total_run_id is not None
    members = [o.run_id for o in outcome.outcomes]
    assert outcome.target is not None and outcome.target.error == ""
    monitors = {_check_server_figures(workbench, run, members[0]) for run in [*members, outcome.total_run_id]}
    assert monitors == {outcome.target.run_id}                 # one record of the server for all three runs
    total = workbench.find_run(outcome.total_run_id).results
    connections = {r.metadata["step"]: r.metadata["clients"] for r in total if r.metric == "ops_per_s"}
    assert {r.metadata["step"]: r.metadata["clients"] for r in total if r.metric == "target_cpu_pct"} == connections
    assert _pg_databases(database) == set()


def test_a_target_host_the_inventory_does_not_know_is_refused_before_anything_runs(workbench, ssh_host) -> None:
    name = _add(workbench, ssh_host)
    with pytest.raises(RunRequestError, match="target_host=db-nowhere is not a host of the inventory"):
        workbench.run(RunRequest(name, "dbload", dict(PARAMS, target_host="db-nowhere")), RunControl())
    assert workbench.list_runs() == []

