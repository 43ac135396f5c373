"""Database load runs compared and reported: the best step's throughput and each operation's p99 with their
verdicts, the steadiness line, and the curves of the PDF equal to the stored per-second lists."""
from __future__ import annotations

import pytest

from app.compare.dbload import curves_of, dbload_runs
from app.compare.metrics import figures
from app.report.content import gather
from app.summary.dbload_series import dbload_of
from storage.records import ResultSample
from tests.fixtures.dbload_runs import BARE, CLIENTS, STEP_SECONDS, dbload_results, store_two_dbload_servers


@pytest.fixture
def two(workbench):
    return workbench, store_two_dbload_servers(workbench.store)


def _stored(results, metric: str, key: str) -> list[list[float]]:
    return [r.metadata[key] for r in results if r.metric == metric]


def test_the_steps_and_their_time_line_are_the_stored_seconds() -> None:
    results = dbload_results(BARE, False, ops=("read", "write"), knee=4)
    load = dbload_of(results)
    assert [s.clients for s in load.steps] == list(CLIENTS)
    xs, ys = load.throughput_line()
    assert ys == [v for per in _stored(results, "ops_per_s", "per_second") for v in per]
    assert xs == [float(i + 1) for i in range(len(CLIENTS) * STEP_SECONDS)]     # steps one after the other
    assert load.p99_line("write")[1] == [v for per in _stored(results, "write_p99_ms", "p99_per_second")
                                         for v in per]
    assert load.knee_text() == "knee at 8 clients (throughput under 1.1x the previous best)"


def test_no_knee_is_said_and_a_run_without_dbload_results_has_none() -> None:
    results = dbload_results(BARE, False, knee=None)
    assert dbload_of(results).knee_text() == "no knee within the sweep"
    assert dbload_of([ResultSample("cpu", "multi", 1.0, "ops/s", {})]) is None


def test_the_best_step_is_compared_and_p99_only_at_the_same_clients(two) -> None:
    bench, ids = two
    data = gather(bench, list(ids.values()))
    rows = {row.label: row for row in data.comparison.rows}
    best = rows["bare-metal"].cells["dbload:best.ops_per_s"]
    assert best.value == 455.0 and best.note == "8 clients" and best.kind == "reference"
    assert best.steadiness == "variation 1.5 % · 0 errors · knee at 8 clients · pgbench 15.19"
    cloud = rows["cloud-vm"].cells["dbload:best.ops_per_s"]
    assert "3 errors" in cloud.steadiness and "knee at 8 clients" in cloud.steadiness and cloud.note == "4 clients"
    assert cloud.kind in ("behind", "cant_tell")          # its seconds jumped between 50 and 600
    p99 = rows["bare-metal"].cells["dbload:best.txn_p99_ms"]
    assert p99.note.startswith("p50 ") and " · p99.9 " in p99.note
    # a tail at 4 clients against one at 8 is not judged
    assert "compare the same client count" in rows["cloud-vm"].cells["dbload:best.txn_p99_ms"].verdict


def test_lower_p99_leads_at_the_same_clients() -> None:
    fast = figures(dbload_results((100.0, 200.0, 300.0, 400.0), False, knee=None, p99_base=2.0))
    slow = figures(dbload_results((100.0, 200.0, 300.0, 400.0), False, knee=None, p99_base=8.0))
    assert fast["dbload:best.txn_p99_ms"].workers == slow["dbload:best.txn_p99_ms"].workers == 8
    assert fast["dbload:best.txn_p99_ms"].value * 4 == pytest.approx(slow["dbload:best.txn_p99_ms"].value)


def test_the_report_draws_one_line_per_server_from_the_stored_seconds(two) -> None:
    bench, ids = two
    data = gather(bench, list(ids.values()))
    found = {o.name: o for o in data.overlays if o.test == "dbload"}
    assert list(found) == ["dbload.ops", "dbload.p99.txn"]
    for series in found["dbload.ops"].series:
        stored = bench.run_detail(series.run_id).results
        assert series.values == [v for per in _stored(stored, "ops_per_s", "per_second") for v in per]
    assert [s.label for s in found["dbload.p99.txn"].series] == ["bare-metal", "cloud-vm"]
    assert [run.label for run in data.dbload] == ["bare-metal", "cloud-vm"]


def test_the_charts_data_is_the_stored_sweep(two) -> None:
    bench, ids = two
    data = gather(bench, list(ids.values()))
    results = {run_id: bench.run_detail(run_id).results for run_id in ids.values()}
    [bare, cloud] = [curves_of(run) for run in dbload_runs(data.comparison, results)]
    assert bare.sweep.clients == CLIENTS and bare.sweep.knee_clients == 8 and cloud.sweep.knee_clients == 8
    assert list(bare.sweep.ops) == [r.value for r in results[ids["bare-metal"]] if r.metric == "ops_per_s"]
    assert [x for x, _label in bare.steps] == [0.0, 10.0, 20.0, 30.0]


def test_the_results_window_gets_the_runs_curves() -> None:
    from types import SimpleNamespace

    from app.summary.results_page import results_page

    results = dbload_results(BARE, False, engine="sysbench 1.0.20", workload="oltp_read_write", knee=4, errors=2,
                             sysbench=True)
    page = results_page(SimpleNamespace(id=7, host_name="db-01", test="dbload", status="done"), results)
    assert page.dbload is not None and page.dbload.sweep.knee_clients == 8 and page.dbload.engine == "sysbench 1.0.20"
    assert page.dbload.by_op["write"][1] == [v for r in results if r.metric == "ops_per_s"
                                             for v in r.metadata["per_second_by_op"]["write"]]
    assert page.dbload.throughput[1] == page.dbload.by_op["txn"][1]    # sysbench's total is its transactions


def test_another_tool_version_is_a_caveat_beside_the_load_figures(workbench) -> None:
    from tests.fixtures.dbload_runs import CLOUD, store_dbload_run

    old = store_dbload_run(workbench.store, "db-old", dbload_results(BARE, False, engine="pgbench 15.19", knee=4))
    new = store_dbload_run(workbench.store, "db-new", dbload_results(CLOUD, False, engine="pgbench 16.4", knee=3))
    comparison = gather(workbench, [old, new]).comparison
    [caveat] = [c for c in comparison.between if c.tag == "tools differ"]
    assert "pgbench 15.19 on db-old; pgbench 16.4 on db-new" in caveat.text
    assert "dbload:best.ops_per_s" in caveat.keys


def test_throughput_per_price_when_the_servers_have_prices(two) -> None:
    from storage.records import HostPrice

    bench, ids = two
    prices = {"bare-metal": HostPrice(91.0, "EUR"), "cloud-vm": HostPrice(187.0, "EUR")}
    comparison = gather(bench, list(ids.values()), prices=prices).comparison
    best = "dbload:best.ops_per_s"
    [column] = [m for m in comparison.metrics if m.key.startswith(best) and m.key != best]
    cells = dict((row.label, cell.value) for row, cell in comparison.column(column.key))
    assert cells["bare-metal"] == pytest.approx(455.0 / 91.0) and cells["cloud-vm"] == pytest.approx(340.0 / 187.0)
