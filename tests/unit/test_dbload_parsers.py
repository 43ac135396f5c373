"""The dbload test's readers of pgbench and sysbench output, on output captured from the real tools
(pgbench 15.20 against PostgreSQL 15, sysbench 1.0.20 against MariaDB 10.11), its parameters, its knee rule
and its one-line messages for what is missing."""
from __future__ import annotations

from pathlib import Path

import pytest

from remote.agent import bench_dbload, benches, dbload_pgbench, dbload_stats, dbload_sysbench

DATA = Path(__file__).parent / "data" / "dbload"


def _progress(name: str) -> list[dict]:
    lines = (DATA / name).read_text().splitlines()
    return [p for p in map(dbload_pgbench.parse_progress, lines) if p]


def _log(*names: str) -> list[tuple[float, float | None]]:
    return [e for name in names for e in map(dbload_pgbench.parse_log_line, (DATA / name).read_text().splitlines())
            if e]


def test_pgbench_progress_lines_are_read_as_printed() -> None:
    progress = _progress("pgbench_tpcb.err")
    assert [p["tps"] for p in progress] == [141.4, 199.7, 232.7]
    assert [p["lat_ms"] for p in progress] == [13.82, 10.064, 8.508]
    assert [p["t"] for p in progress] == [1795682800.484, 1795682801.481, 1795682802.482]
    assert all(p["failed"] == 0 for p in progress)
    rate = _progress("pgbench_rate.err")
    assert [(p["tps"], p["lag_ms"]) for p in rate] == [(53.0, 1.004), (36.0, 1.038)]


def test_pgbench_summary_is_read_as_printed() -> None:
    summary = dbload_pgbench.parse_summary((DATA / "pgbench_tpcb.out").read_text())
    assert summary["tps"] == 192.087274 and summary["processed"] == 575 and summary["failed"] == 0
    assert summary["lat_avg_ms"] == 10.368


def test_the_log_holds_every_transaction_and_each_interval_matches_its_progress_line() -> None:
    progress = _progress("pgbench_tpcb.err")
    entries = _log("pgbench_tpcb.log.0", "pgbench_tpcb.log.1")
    assert len(entries) == 575           # "number of transactions actually processed: 575"
    ticks = dbload_pgbench.interval_ticks(progress, entries, 0, len(progress))
    assert [t["ops"]["txn"] for t in ticks] == [141.4, 199.7, 232.7]
    for index in range(1, len(progress)):
        begin, end = progress[index - 1]["t"], progress[index]["t"]
        binned = sum(1 for done, _lat in entries if begin < done <= end)
        # pgbench's rate is the interval's count over its length (printed to the millisecond)
        assert abs(binned - progress[index]["tps"] * (end - begin)) <= 1.0
    first = ticks[0]["lat_ms"]["txn"]
    inside = sorted(lat for done, lat in entries if done <= progress[0]["t"])
    assert first["p50"] == round(inside[(len(inside) + 1) // 2 - 1] / 1000.0, 3)
    assert first["p50"] <= first["p99"] <= first["p999"] == round(inside[-1] / 1000.0, 3)


def test_a_rate_limited_log_line_is_read_with_its_schedule_lag() -> None:
    done, latency = dbload_pgbench.parse_log_line("0 1 6547 0 1795682802 696207 4905")
    assert (done, latency) == (1795682802.696207, 6547.0)
    assert dbload_pgbench.parse_log_line("0 7 failed 0 1795682802 696207") == (1795682802.696207, None)


def test_sysbench_intervals_totals_and_histogram_are_read_as_printed() -> None:
    text = (DATA / "sysbench_oltp_read_write.txt").read_text()
    intervals = [p for p in map(dbload_sysbench.parse_interval, text.splitlines()) if p]
    assert [(p["second"], p["tps"], p["r"], p["w"], p["o"], p["lat"]) for p in intervals] == [
        (1, 3.98, 83.66, 16.93, 9.96, 569.67), (2, 15.01, 210.20, 67.07, 30.03, 404.61),
        (3, 17.93, 251.01, 68.73, 35.86, 314.45)]
    totals = dbload_sysbench.parse_totals(text)
    assert totals["transactions"] == (39, 12.62) and totals["queries"] == (780, 252.31)
    assert totals["lat_p99_ms"] == 569.67 and totals["ignored_errors"] == 0 and totals["reconnects"] == 0
    buckets = dbload_sysbench.parse_histogram(text)
    assert sum(count for _value, count in buckets) == 39     # every transaction is in the histogram
    # the histogram's p99 is the one sysbench printed: p50 and p99.9 come from the same buckets
    assert round(dbload_sysbench.histogram_percentiles(buckets)["p99"], 2) == totals["lat_p99_ms"]


@pytest.mark.parametrize(("throughputs", "p99s", "limit", "knee", "rule"), [
    ([100.0, 200.0, 400.0], [1, 1, 1], None, None, "throughput under 1.1x the previous best"),
    ([100.0, 200.0, 210.0, 400.0], [1, 1, 1, 1], None, 3, "throughput under 1.1x the previous best"),
    ([100.0, 90.0], [1, 1], None, 2, "throughput under 1.1x the previous best"),
    ([100.0, 200.0, 400.0], [5, 150, 250], 200.0, 3, "p99 over 200 ms"),
])
def test_the_knee_is_the_first_step_under_1_1x_the_best_before_or_over_the_p99_limit(throughputs, p99s, limit, knee,
                                                                                     rule) -> None:
    found = dbload_stats.knee(throughputs, p99s, limit)
    assert found["knee"] == knee and found["rule"].startswith(rule)


def test_step_throughput_is_the_median_of_the_per_second_totals_and_cv_their_variation() -> None:
    ticks = [{"ops": {"read": 10.0, "txn": v}} for v in (100.0, 300.0, 200.0, 400.0)]
    assert dbload_stats.step_throughput({"per_second": ticks, "total_op": "txn"}) == 250.0
    redis = [{"ops": {"get": 90.0, "set": 10.0}}, {"ops": {"get": 45.0, "set": 5.0}}]
    assert dbload_stats.step_throughput({"per_second": redis, "total_op": None}) == 75.0
    assert dbload_stats.cv([100.0, 100.0]) == 0.0 and dbload_stats.cv([50.0, 150.0]) == 0.7071


def test_defaults_and_bad_parameters() -> None:
    checked = benches.validate("dbload", {"engine": "mysql", "target": "10.0.0.5", "clients": "1,4"})
    assert checked["workload"] == "oltp_read_write" and checked["clients"] == [1, 4] and checked["user"] == "root"
    assert benches.validate("dbload", checked) == checked
    assert bench_dbload.resolved(checked)["port"] == 3306
    assert bench_dbload.resolved(benches.validate("dbload", {"target": "[::1]:6000"}))["host"] == "::1"
    for params, words in (({"engine": "oracle"}, "engine must be"), ({"target": "a:b:c"}, "target must be"),
                          ({"clients": "1,x"}, "clients must be"), ({"clients": [1, 99], "max_clients": 8}, "1-8"),
                          ({"workload": "oltp_read_write"}, "workload for pgbench"),
                          ({"engine": "mysql", "tool": "pgbench"}, "does not load mysql"),
                          ({"reuse_database": "yes"}, "needs database=NAME"),
                          ({"database": "x; drop"}, "plain name"), ({"data": "3xram"}, "data must be"),
                          ({"password": "a\nb"}, "one line")):
        with pytest.raises(ValueError, match=words):
            benches.validate("dbload", params)


def test_a_remote_target_needs_its_ram_for_a_ram_sized_data_set() -> None:
    params = bench_dbload.resolved(benches.validate("dbload", {"target": "10.0.0.5", "data": "2xram"}))
    with pytest.raises(dbload_pgbench.DbLoadError, match="target_ram_mb"):
        bench_dbload.pg_scale(params)
    params["target_ram_mb"] = 1024
    assert bench_dbload.pg_scale(params) == 128    # 2 GB of pgbench data at 16 MB per scale unit


def test_a_missing_tool_is_one_line_naming_the_package(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(dbload_pgbench.shutil, "which", lambda _name: None)
    monkeypatch.setattr(dbload_sysbench.shutil, "which", lambda _name: None)
    ctx = type("Ctx", (), {"run_dir": str(tmp_path)})()
    pg = bench_dbload.resolved(benches.validate("dbload", {}))
    with pytest.raises(dbload_pgbench.DbLoadError, match="install the Debian package postgresql-contrib"):
        bench_dbload.make_engine(ctx, pg)
    my = bench_dbload.resolved(benches.validate("dbload", {"engine": "mysql"}))
    with pytest.raises(dbload_pgbench.DbLoadError, match="install the Debian package sysbench$"):
        bench_dbload.make_engine(ctx, my)


def test_the_workbench_sizes_the_data_from_the_target_hosts_ram() -> None:
    from types import SimpleNamespace

    from app.engine.dbload_target import with_target_ram
    from app.engine.orchestrator import RunRequest

    class Inventory:
        def list_hosts(self) -> list:
            return [SimpleNamespace(name="local", address="localhost"), SimpleNamespace(name="db1", address="10.0.0.5")]

        def latest_facts(self, name: str) -> dict | None:
            return {"memory": {"total_bytes": 8 << 30}} if name == "db1" else None

    def sized(params: dict) -> dict:
        request = RunRequest("client", "dbload", params)
        return with_target_ram(Inventory(), request, benches.validate("dbload", params))[1]

    assert sized({"target": "10.0.0.5:5432"})["target_ram_mb"] == 8192          # the inventory's facts
    assert sized({"target": "db1"})["target_ram_mb"] == 8192                    # by name too
    assert sized({"target": "10.0.0.9"})["target_ram_mb"] == 0                  # unknown: the run will ask
    assert sized({"target": "10.0.0.5", "target_ram_mb": 1024})["target_ram_mb"] == 1024   # given wins
    assert sized({"target": "127.0.0.1"})["target_ram_mb"] == 0                 # the client host's own
    assert sized({"target": "10.0.0.5", "data": "scale=3"})["target_ram_mb"] == 0
    assert sized({"target": "10.0.0.77", "target_host": "db1"})["target_ram_mb"] == 8192   # the server named
