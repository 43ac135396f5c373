"""Several dbload clients against one target: each host's parameters, the start spread from the stored
events, the TOTAL run's figures and the summary's words."""
from __future__ import annotations

import pytest

from app.engine.dbload_multi import DbMultiOutcome, DbMultiRequest, plan, step_spreads, total_results
from app.engine.dbload_totals import dbload_total
from app.engine.orchestrator import RunRequestError
from app.summary.dbload_multi import dbload_multi_text
from app.summary.dbload_series import DbLoad, DbStep
from remote.agent import bench_dbload, client_sync, dbload_together

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
    assert ops[1].metadata["client_limit"] == ""
    assert ops[2].metadata["client_limit"] == "a's load tool used 95 % of the CPU it could use"
    knee = next(r for r in results if r.metric == "knee_clients")
    assert knee.metadata["knee"] is None and knee.value == 4   # 285 is over 1.1 x 192: no knee
    text = dbload_multi_text(outcome)
    assert "no knee within the sweep" in text and "20.0 ms" in text and "b reported 1 second fewer" in text
    assert text.count("may be the client's limit") == 1


def _tree(tmp_path, cgroup_line: str, quota_dir: str, quota_file: str, quota: str, stat: str) -> tuple[str, str]:
    proc, root = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "stat").write_text("cpu  100 0 100 700 100 0 0 0 0 0\n")
    (proc / "self" / "cgroup").write_text(cgroup_line + "\n")
    held = root / quota_dir
    (held / "session-7").mkdir(parents=True)      # the agent runs in a child of the limited group
    (held / quota_file).write_text(quota + "\n")
    (held / "cpu.stat").write_text(stat)
    return str(proc), str(root)


@pytest.mark.parametrize(("line", "directory", "quota_file", "quota"), [
    ("4:cpu,cpuacct:/half/session-7", "cpu,cpuacct/half", "cpu.cfs_quota_us", "50000"),   # cgroup v1
    ("0::/half/session-7", "half", "cpu.max", "50000 100000"),                             # cgroup v2
])
def test_a_client_held_at_its_cpu_quota_counts_as_busy(tmp_path, line, directory, quota_file, quota) -> None:
    proc, root = _tree(tmp_path, line, directory, quota_file, quota, "nr_periods 100\nnr_throttled 10\n")
    before = client_sync.host_cpu(proc, root)
    assert before == (200, 1000, 100, 10)
    stat = tmp_path / "cgroup" / directory / "cpu.stat"
    stat.write_text("nr_periods 200\nnr_throttled 100\nthrottled_time 5\n")   # throttled in 90 of 100 periods
    (tmp_path / "proc" / "stat").write_text("cpu  150 0 150 1400 100 0 0 0 0 0\n")   # the machine: 1/8 busy
    after = client_sync.host_cpu(proc, root)
    assert client_sync.cpu_busy(before, after) == 0.9


def test_without_a_quota_the_machines_cpus_say_how_busy_it_was(tmp_path) -> None:
    proc, root = _tree(tmp_path, "0::/free/session-7", "free", "cpu.max", "max 100000", "nr_periods 0\n")
    assert client_sync.host_cpu(proc, root) == (200, 1000)
    assert client_sync.cpu_busy((200, 1000), (500, 1400)) == 0.75
