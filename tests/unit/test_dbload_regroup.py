"""After a killed workbench, a several-client database load gets its TOTAL run once its last client run is
collected: the clients' per-second sums, made once, with the server's telemetry tied and the lost clock
offsets said."""
from __future__ import annotations

from app.engine.dbload_reattach import tie
from app.engine.dbload_regroup import rebuild_total
from storage.records import RunStatus
from tests.fixtures.dbload_runs import BARE, CLOUD, dbload_results, per_second_by_step


def _client(store, host: str, index: int, levels, group: str = "g7") -> int:
    params = {"engine": "postgresql", "target": "10.0.0.5:5432", "tool": "pgbench", "group": group,
              "wait_for_start": True, "client_index": index, "client_name": f"c{index + 1}-{host}",
              "database": f"benchbay_dbload_m{group}"}
    run_id = store.runs.create(host, "dbload", {"interval": 1.0, "params": params}, agent_version="0.4.1")
    store.runs.add_results(run_id, dbload_results(levels, jumpy=False))
    return run_id


def _per_second(workbench, run_id: int) -> dict[int, list[float]]:
    return per_second_by_step(workbench.store.runs.get(run_id).results)


def test_the_total_is_made_once_when_the_last_client_is_stored(workbench) -> None:
    store = workbench.store
    first, second = _client(store, "c1", 0, BARE), _client(store, "c2", 1, CLOUD)
    lone = store.runs.create("c3", "dbload", {"interval": 1.0, "params": {"engine": "postgresql"}},
                             agent_version="0.4.1")
    monitor = store.runs.create("db", "monitor", {"interval": 1.0, "duration": None, "params": {
        "watching": "dbload", "clients": ["c1", "c2"], "group": "g7"}}, agent_version="0.4.1")
    store.runs.finish(first, RunStatus.DONE)
    assert rebuild_total(workbench, first) is None          # c2 is still running: not yet
    store.runs.finish(second, RunStatus.DONE)
    store.runs.finish(monitor, RunStatus.DONE)
    assert tie(workbench, monitor) == [first, second]
    total = rebuild_total(workbench, second)
    assert total is not None
    assert rebuild_total(workbench, first) is None          # once
    assert rebuild_total(workbench, lone) is None           # a lone load has no TOTAL
    detail = store.runs.get(total)
    assert detail.run.host_name == "TOTAL 10.0.0.5:5432 (2 clients)"
    assert detail.run.status == RunStatus.DONE.value
    assert detail.run.parameters["members"] == [first, second]
    # each second of each step is the two clients' sum
    a, b, sums = _per_second(workbench, first), _per_second(workbench, second), _per_second(workbench, total)
    assert sums and set(sums) == set(a)
    for step, values in sums.items():
        assert len(a[step]) == len(b[step]) and values == [x + y for x, y in zip(a[step], b[step], strict=True)]
    assert any(r.metric == "knee_clients" for r in detail.results)
    events = workbench.run_events(total)
    assert any(e["type"] == "warning" and "clock offsets" in e["message"] for e in events)
    [tied] = [e for e in events if e["type"] == "target_telemetry"]
    assert (tied["host"], tied["run_id"]) == ("db", monitor)
    assert "dbload-g7" in detail.run.tags and "dbload-g7" in store.runs.get(first).run.tags


def test_a_client_that_failed_still_counts_as_stored_and_the_total_says_so(workbench) -> None:
    store = workbench.store
    first, second = _client(store, "c1", 0, BARE, "g8"), _client(store, "c2", 1, CLOUD, "g8")
    store.runs.finish(first, RunStatus.DONE)
    store.runs.finish(second, RunStatus.FAILED, error="c2: the target went away")
    total = rebuild_total(workbench, first)
    detail = store.runs.get(total)
    assert detail.run.status == RunStatus.FAILED.value
    assert "did not finish" in detail.run.error
