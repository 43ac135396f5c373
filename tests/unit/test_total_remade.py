"""A several-client run whose workbench stayed but lost the link to one client stores a TOTAL without that
client's figures (failed: "did not finish"). Once the client is collected, the TOTAL is made again with every
client, keeps the clock offsets measured at the start, says what it replaces, and the first one goes; the
clients' runs stay. A TOTAL made with every client as it is, or by a version that did not record the
clients' statuses, stands."""
from __future__ import annotations

from app.engine import dbload_regroup, shared_regroup
from app.engine.dbload_multi import DbMultiOutcome, DbMultiRequest, store_total
from app.engine.orchestrator import RunOutcome
from remote.clock_offset import ClockOffset
from storage.records import RunStatus
from tests.fixtures.dbload_runs import BARE, CLOUD, dbload_results, per_second_by_step
from tests.fixtures.shared_sweeps import collect, store_sweep


def _dbload_client(store, host: str, index: int) -> int:
    params = {"engine": "postgresql", "target": "10.0.0.5:5432", "tool": "pgbench", "group": "g9",
              "wait_for_start": True, "client_index": index, "client_name": f"c{index + 1}-{host}",
              "database": "benchbay_dbload_mg9"}
    return store.runs.create(host, "dbload", {"interval": 1.0, "params": params}, agent_version="0.4.1")


def _warnings(workbench, run_id: int) -> list[str]:
    return [e["message"] for e in workbench.run_events(run_id) if e["type"] == "warning"]


def test_a_load_total_made_while_a_client_was_lost_is_made_again_once_it_is_collected(workbench) -> None:
    store = workbench.store
    first, second = _dbload_client(store, "c1", 0), _dbload_client(store, "c2", 1)
    store.runs.add_results(first, dbload_results(BARE, jumpy=False))
    store.runs.finish(first, RunStatus.DONE)
    store.runs.mark_lost_link(second, "c2: the link was lost")
    # the workbench that ran them stays and stores their TOTAL, c2 still out of reach
    params = store.runs.get(first).run.parameters["params"]
    outcome = DbMultiOutcome("g9", ("c1", "c2"), [RunOutcome(first, "c1", RunStatus.DONE, "", 0),
                                                  RunOutcome(second, "c2", RunStatus.LOST_LINK, "link lost", 0)],
                             database="benchbay_dbload_mg9")
    outcome.offsets = {"c1": ClockOffset("c1", 0.0, 0.001, 0.002, 5), "c2": ClockOffset("c2", 0.25, 0.001, 0.002, 5)}
    store_total(workbench, DbMultiRequest(("c1", "c2"), params, 1.0), params, outcome)
    old = outcome.total_run_id
    assert store.runs.get(old).run.status == RunStatus.FAILED.value
    assert dbload_regroup.rebuild_total(workbench, first) is None     # c2 still lost: the TOTAL stands
    # c2 collected later: its figures stored, its run done
    store.runs.add_results(second, dbload_results(CLOUD, jumpy=False))
    store.runs.finish(second, RunStatus.DONE)
    total = dbload_regroup.rebuild_total(workbench, second)
    assert total is not None and total != old
    assert store.runs.get(old) is None                                # replaced
    assert store.runs.get(first) is not None and store.runs.get(second) is not None
    detail = store.runs.get(total)
    assert detail.run.status == RunStatus.DONE.value and detail.run.parameters["members"] == [first, second]
    a, b = per_second_by_step(store.runs.get(first).results), per_second_by_step(store.runs.get(second).results)
    sums = per_second_by_step(detail.results)
    assert sums and all(values == [x + y for x, y in zip(a[s], b[s], strict=True)] for s, values in sums.items())
    assert any(f"replaces run {old}, made while a client's link was lost" in w for w in _warnings(workbench, total))
    assert not any("offsets measured at the start were lost" in w for w in _warnings(workbench, total))
    [made] = [e for e in workbench.run_events(total) if e["type"] == "dbload_total"]
    assert made["offsets"]["c2"]["offset_s"] == 0.25                  # the start's offsets, kept
    assert dbload_regroup.rebuild_total(workbench, first) is None     # once


def test_a_sweep_total_made_while_a_client_was_lost_is_made_again_once_it_is_collected(workbench) -> None:
    whole = store_sweep(workbench, "/mnt/efs", 900.0)                 # the same sweep, never lost, for reference
    want = {r.metric: r.value for r in workbench.find_run(whole.total_run_id).results if r.metric.endswith(".ops")}
    workbench.delete_run(whole.total_run_id)
    for run in whole.outcomes:
        workbench.delete_run(run.run_id)

    outcome = store_sweep(workbench, "/mnt/efs", 900.0, lost=("nfs-b",))
    old = outcome.total_run_id
    first, second = (run.run_id for run in outcome.outcomes)
    assert workbench.find_run(old).run.status == RunStatus.FAILED.value
    assert shared_regroup.rebuild_total(workbench, first) is None     # nfs-b still lost
    collect(workbench, second, 900.0, clock=-0.025)
    total = shared_regroup.rebuild_total(workbench, second)
    assert total is not None and total != old and workbench.find_run(old) is None
    detail = workbench.find_run(total)
    assert detail.run.status == RunStatus.DONE.value, detail.run.error
    assert {r.metric: r.value for r in detail.results if r.metric.endswith(".ops")} == want
    assert any(f"replaces run {old}" in w for w in _warnings(workbench, total))
    [made] = [e for e in workbench.run_events(total) if e["type"] == "shared_total"]
    assert made["offsets"]["nfs-b"]["offset_s"] == -0.025 and made["offsets"]["nfs-b"]["rtt_s"] == 0.004
    assert shared_regroup.rebuild_total(workbench, first) is None     # once


def test_a_total_that_did_not_record_its_clients_statuses_stands(workbench, monkeypatch) -> None:
    from app.engine import shared_run

    monkeypatch.setattr(shared_run, "member_status", lambda _outcomes: {})   # as an earlier version stored it
    outcome = store_sweep(workbench, "/mnt/efs", 900.0, lost=("nfs-b",))
    old = outcome.total_run_id
    second = outcome.outcomes[1].run_id
    collect(workbench, second, 900.0, clock=-0.025)
    assert shared_regroup.rebuild_total(workbench, second) is None
    assert workbench.find_run(old) is not None
