"""Several dbload clients against one target: each host's parameters, the start spread from the stored
events, the TOTAL run's figures and the summary's words."""
from __future__ import annotations

import pytest

from app.engine.dbload_multi import DbMultiOutcome, DbMultiRequest, plan, step_spreads, total_results
from app.engine.dbload_totals import dbload_total
from app.engine.orchestrator import RunRequestError
from app.summary.dbload_multi import dbload_multi_text
from app.summary.dbload_series import DbLoad, DbStep
from remote.agent import bench_dbload, dbload_together

PARAMS = {"engine": "postgresql", "target": "10.0.0.5:5432", "clients": "1,2", "step_seconds": 3}


def test_client_zero_makes_the_database_and_the_others_reuse_it() -> None:
    hosts = plan(DbMultiRequest(("a", "b", "c"), PARAMS), "ab12")
    assert [h["reuse_database"] for h in hosts] == [False, True, True]
    assert {h["database"] for h in hosts} == {"benchbay_dbload_mab12"}
    assert [h["client_index"] for h in hosts] == [0, 1, 2]
    assert all(h["wait_for_start"] for h in hosts)


def test_a_given_database_to_reuse_is_reused_by_every_client() -> None:
    hosts = plan(DbMultiRequest(("a", "b"), dict(PARAMS, database="shop", reuse_database="yes")), "g")
    assert [(h["database"], h["reuse_database"]) for h in hosts] == [("shop", True), ("shop", True)]


def test_mysql_clients_share_the_scratch_database_and_redis_clients_one_key_prefix() -> None:
    mysql = plan(DbMultiRequest(("a", "b"), dict(PARAMS, engine="mysql", target="10.0.0.5")), "cd34")
    assert [(h["database"], h["reuse_database"]) for h in mysql] == [("benchbay_dbload_mcd34", False),
                                                                    ("benchbay_dbload_mcd34", True)]
    redis = plan(DbMultiRequest(("a", "b", "c"), dict(PARAMS, engine="redis", target="10.0.0.5")), "ef56")
    assert [(h["key_prefix"], h["reuse_database"]) for h in redis] == [("benchbay:mef56:", False),
                                                                      ("benchbay:mef56:", True),
                                                                      ("benchbay:mef56:", True)]
    assert all(bench_dbload.validate(h)["wait_for_start"] for h in redis)   # the agent takes them as they are
    given = plan(DbMultiRequest(("a", "b"), dict(PARAMS, engine="redis", key_prefix="shop:")), "g")
    assert {h["key_prefix"] for h in given} == {"shop:"}


def test_redis_reuse_needs_the_prefix_of_the_keys_to_load() -> None:
    with pytest.raises(ValueError, match="reuse_database=yes for Redis needs key_prefix"):
        bench_dbload.validate(dict(PARAMS, engine="redis", reuse_database="yes"))


@pytest.mark.parametrize(("hosts", "params", "words"), [
    (("a",), PARAMS, "at least two"),
    (("a", "a"), PARAMS, "named twice"),
    (("a", "b"), dict(PARAMS, client_index=1), "set by the workbench"),
    (("a", "b"), dict(PARAMS, engine="mysql", workload="tpcc"), "workload for sysbench must be"),
])
def test_wrong_requests_say_what_is_wrong(hosts, params, words) -> None:
    with pytest.raises(RunRequestError, match=words):
        plan(DbMultiRequest(hosts, params), "g")


def test_one_host_runs_as_before_without_waiting() -> None:
    params = bench_dbload.validate(dict(PARAMS))
    assert params["wait_for_start"] is False
    assert dbload_together.wait_until(None, params, 0.0, 0) == {}   # no sleep, no event


def test_steps_are_planned_one_step_and_gap_apart() -> None:
    params = bench_dbload.validate(dict(PARAMS, step_gap=4))
    first = dbload_together.planned_start(params, 100.0, 0)
    assert first == 100.0 + dbload_together.FIRST_STEP_S
    assert dbload_together.planned_start(params, 100.0, 1) - first == 3 + 4


def test_start_spread_counts_only_steps_every_client_began() -> None:
    events = {"a": [{"type": "dbload_step_start", "step": 1, "t": 10.0}, {"type": "dbload_step_start", "step": 2,
                                                                          "t": 20.0}],
              "b": [{"type": "dbload_step_start", "step": 1, "t": 10.25}, {"type": "dbload_tick", "t": 11.0}]}
    assert step_spreads(events) == {1: 0.25}


def test_total_run_figures_are_the_clients_sums_and_name_the_knee() -> None:
    a = DbLoad((DbStep(1, 1, 100.0, (100.0, 102.0)), DbStep(2, 2, 200.0, (200.0, 190.0))))
    b = DbLoad((DbStep(1, 1, 90.0, (90.0, 92.0)), DbStep(2, 2, 180.0, (180.0,))))
    outcome = DbMultiOutcome("g", ("a", "b"), [None, None], total=dbload_total({"a": a, "b": b}),
                             spreads={1: 0.01, 2: 0.02}, cpu={1: {"a": 0.2, "b": 0.3}, 2: {"a": 0.95, "b": 0.4}})
    results = total_results(outcome, "10.0.0.5:5432")
    ops = {r.metadata["step"]: r for r in results if r.metric == "ops_per_s"}
    assert ops[1].metadata["per_second"] == [190.0, 194.0] and ops[1].metadata["clients"] == 2
    assert ops[2].metadata["per_second"] == [380.0, 190.0] and ops[2].metadata["short_seconds"] == {"b": 1}
    assert ops[2].metadata["start_spread_s"] == 0.02
    assert ops[1].metadata["client_limit"] == "" and ops[2].metadata["client_limit"] == "a had 95 % of its CPUs busy"
    knee = next(r for r in results if r.metric == "knee_clients")
    assert knee.metadata["knee"] is None and knee.value == 4   # 285 is over 1.1 x 192: no knee
    text = dbload_multi_text(outcome)
    assert "no knee within the sweep" in text and "20.0 ms" in text and "b reported 1 second fewer" in text
    assert text.count("may be the client's limit") == 1
