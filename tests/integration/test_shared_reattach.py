"""A workbench killed (SIGKILL) during a shared-storage sweep from two client hosts (two sshd test hosts, one
directory both see): `benchbay runs attach` collects each client run, and once the last is stored their TOTAL
run is made as a sweep never left would have it: every second the clients' sum, every step, the knee named,
and a word that the clients' clock offsets measured at the start were lost with the workbench. Nothing is
left on the hosts."""
from __future__ import annotations

from pathlib import Path

import pytest

from storage.db import open_store
from tests.fixtures.lost_runs import add_host, benchbay, kill_then_attach_clients, stopped_after  # noqa: F401 - stopped_after: a fixture
from tests.fixtures.processes import processes_using

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("stopped_after")]

STEPS = 2   # 1 client, then 2 (one thread each)


def _sweeping(store) -> list | None:
    """Both client runs, once the first host sends its first second of load."""
    runs = [run for run in store.runs.running() if run.test == "shared-storage" and run.remote is not None]
    if len(runs) < 2:
        return None
    runs = sorted(runs, key=lambda run: run.parameters["params"]["client_index"])
    events = Path(runs[0].remote.run_dir) / "events.jsonl"
    return runs if events.exists() and b'"shared_tick"' in events.read_bytes() else None


def _per_second(results, series) -> dict[str, list[float]]:
    """step -> op/s each second of the run's own count (a client's, or the TOTAL's sum)."""
    steps = {r.metric[:-len(".ops")] for r in results if r.metric.endswith(".ops")}
    return {step: list(s.values) for step in steps for s in series
            if s.name == f"rate.{step}.ops" and s.device == ""}


def test_the_total_of_a_sweep_whose_workbench_was_killed_is_made_once_both_clients_are_collected(
        cli_env, ssh_hosts, tmp_path: Path) -> None:
    names = [add_host(host) for host in ssh_hosts]
    shared = tmp_path / "shared"
    shared.mkdir()
    proc = benchbay("run", *names, "--test", "shared-storage", "--dir", str(shared), "--clients", "1,2",
                    "--threads", "1", "--interval", "0.5", "--set", "runtime=4", "--set", "gap=1",
                    "--set", "bs=4096", "--set", "file_size=1M")
    runs, said = kill_then_attach_clients(cli_env, proc, "the first client's first second of load", _sweeping)
    assert "TOTAL" not in said[0] and "their TOTAL is run" in said[1], said
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        clients = [store.runs.get(run.id) for run in runs]
        client_series = [store.runs.series(run.id) for run in runs]
        [total] = [run for run in store.runs.list(test="shared-storage") if run.host_name.startswith("TOTAL ")]
        detail = store.runs.get(total.id)
        total_series = store.runs.series(total.id)
        events = store.runs.events(total.id)
    finally:
        store.close()
    assert [c.run.status for c in clients] == ["done", "done"], [c.run.error for c in clients]
    assert said[1].rstrip().endswith(f"their TOTAL is run {total.id}")
    assert detail.run.status == "done", detail.run.error
    assert detail.run.parameters["members"] == [run.id for run in runs]
    first, second = (_per_second(c.results, s) for c, s in zip(clients, client_series, strict=True))
    sums = _per_second(detail.results, total_series)
    assert len(sums) == STEPS and set(sums) <= set(first) | set(second)
    clients_in = {r.metric[:-len(".ops")]: r.metadata["clients"] for r in detail.results if r.metric.endswith(".ops")}
    for step, values in sums.items():   # each second the clients' sum (a client not in the step adds nothing)
        parts = [c[step] for c in (first, second) if step in c]
        assert len(parts) == clients_in[step], (step, clients_in)
        assert values == pytest.approx([sum(p[i] for p in parts if i < len(p))
                                        for i in range(max(len(p) for p in parts))]), step
        assert all(v > 0 for v in values), (step, values)
    assert any(r.metric == "sweep.best_ops" for r in detail.results)
    # how far apart the clients started: placed with the offsets measured when each was collected
    spreads = [r for r in detail.results if r.metric.endswith(".start_spread")]
    assert spreads and all(0 <= r.value < 1000 for r in spreads), spreads
    assert any(e["type"] == "warning" and "clock offsets" in e["message"] for e in events)
    span = (detail.run.finished_at - detail.run.started_at).total_seconds()
    assert STEPS * 4 <= span < STEPS * 4 + 1 + 5, span   # the sweep's own time, not the collection's
    for run in runs:
        assert not Path(run.remote.run_dir).exists() and processes_using(run.remote.run_dir) == []
    assert not any(shared.iterdir()), list(shared.iterdir())
