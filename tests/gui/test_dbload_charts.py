"""Database load charts draw exactly what they are given: the live ticks as they came, and a stored run's
per-second lists (throughput, each operation's p99, the sweep with its knee) one line per server."""
from __future__ import annotations

import pytest

from app.compare.dbload import DbLoadRun, curves_of
from app.summary.dbload_series import dbload_of
from tests.fixtures.dbload_runs import BARE, CLOUD, dbload_results
from widgets.dashboard import Dashboard
from widgets.dbload_charts import DbLoadCharts
from widgets.host_colours import host_colour

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0


def _tick(n: int, step: int, clients: int) -> dict:
    return {"type": "dbload_tick", "step": step, "clients": clients, "second": n % 5 + 1, "t": T0 + n,
            "ops": {"read": 100 * clients + n, "write": 40 * clients}, "errors": 1 if n == 7 else 0, "retries": 0,
            "lat_ms": {"read": {"p50": 1.0, "p99": 2.0 + n / 10}, "write": {"p50": 2.0, "p99": 5.0 + n / 10}},
            "engine": "sysbench 1.0.20"}


def test_live_ticks_are_drawn_as_they_came_with_the_step_named(qtbot) -> None:
    dashboard = Dashboard()
    qtbot.addWidget(dashboard)
    dashboard.resize(1200, 900)
    dashboard.add_host("db-client")
    # the agent's plan names its steps: "step 3 of 6" counts them
    dashboard.add_event("db-client", {"type": "plan", "t": T0, "phases": [{"phase": "load"}] + [
        {"phase": f"step{i}", "label": f"{c} clients"} for i, c in enumerate((1, 2, 4, 8, 16, 32), start=1)]})
    ticks = [_tick(n, n // 5 + 1, (1, 2, 4)[n // 5]) for n in range(1, 13)]
    for tick in ticks:
        dashboard.add_event("db-client", tick)
    dashboard.show()
    qtbot.waitExposed(dashboard)
    dashboard.frame()
    panel = dashboard.panels["db-client"].dbload
    assert panel is not None
    assert panel.step_label.text().endswith("4 clients, step 3 of 6, second 3")
    assert "3 errors" not in panel.now_label.text() and "1 error" in panel.now_label.text()
    x0 = dashboard.series["db-client"].t0
    xs, reads = panel.ops_plot.curve("read").getData()
    assert list(reads) == [t["ops"]["read"] for t in ticks]
    assert list(xs) == [t["t"] - x0 for t in ticks]
    _xs, totals = panel.ops_plot.curve("total").getData()
    assert list(totals) == [t["ops"]["read"] + t["ops"]["write"] for t in ticks]
    _xs, p99 = panel.p99_plot.curve("write").getData()
    assert list(p99) == [t["lat_ms"]["write"]["p99"] for t in ticks]
    _xs, errors = panel.errors_plot.curve("errors").getData()
    assert list(errors) == [t["errors"] for t in ticks]


def test_sysbench_transactions_are_the_total_and_its_queries_beside_them(qtbot) -> None:
    dashboard = Dashboard()
    qtbot.addWidget(dashboard)
    dashboard.add_host("mysql-client")
    dashboard.set_dbload_steps("mysql-client", 4)    # from the run's clients list, before the plan comes
    ticks = [dict(_tick(n, 1, 8), ops={"read": 1400 + n, "write": 400, "other": 200, "txn": 100 + n})
             for n in range(1, 6)]
    for tick in ticks:
        dashboard.add_event("mysql-client", tick)
    dashboard.show()
    qtbot.waitExposed(dashboard)
    dashboard.frame()
    panel = dashboard.panels["mysql-client"].dbload
    assert panel.ops_plot.curve_keys() == ["txn"] and panel.ops_plot.title == "Transactions per second"
    assert list(panel.ops_plot.curve("txn").getData()[1]) == [t["ops"]["txn"] for t in ticks]
    # the queries inside the transactions (10-20x as many) on their own chart
    assert panel.queries_plot.isVisibleTo(panel) and panel.queries_plot.curve_keys() == ["read", "write", "other"]
    assert list(panel.queries_plot.curve("read").getData()[1]) == [t["ops"]["read"] for t in ticks]
    assert panel.now_label.text().startswith("105 txn/s")
    assert panel.step_label.text().endswith("8 clients, step 1 of 4, second 1")


def test_stored_runs_one_line_per_server_and_the_knee_ringed(qtbot) -> None:
    charts = DbLoadCharts()
    qtbot.addWidget(charts)
    bare = dbload_results(BARE, False, knee=4)
    cloud = dbload_results(CLOUD, True, knee=4)
    runs = [curves_of(DbLoadRun("bare-metal", 1, dbload_of(bare))), curves_of(DbLoadRun("cloud-vm", 2,
                                                                                        dbload_of(cloud)))]
    charts.set_runs(runs)
    assert charts.isVisibleTo(charts.parentWidget() or charts)
    for label, results in (("bare-metal", bare), ("cloud-vm", cloud)):
        _xs, drawn = charts.drawn(charts.throughput_items[label])
        assert drawn == [v for r in results if r.metric == "ops_per_s" for v in r.metadata["per_second"]]
        _xs, p99 = charts.drawn(charts.p99_items[label])
        assert p99 == [v for r in results if r.metric == "txn_p99_ms" for v in r.metadata["p99_per_second"]]
        _xs, sweep = charts.drawn(charts.sweep_items[label])
        assert sweep == [r.value for r in results if r.metric == "ops_per_s"]
        assert charts.throughput_items[label].opts["pen"].color().name() == host_colour(label, ["bare-metal",
                                                                                                 "cloud-vm"])
    ring = charts.knee_items["cloud-vm"].getData()
    assert (list(ring[0]), list(ring[1])) == ([3.0], [[r.value for r in cloud if r.metric == "ops_per_s"][3]])
    assert "best at 4 clients; knee at 8 clients" in charts.caption.text()


def test_one_run_draws_each_operation_and_the_total() -> None:
    results = dbload_results(BARE, False, ops=("read", "write"), knee=None)
    charts = DbLoadCharts()
    charts.set_runs([curves_of(DbLoadRun("db-01", 1, dbload_of(results)))])
    assert set(charts.throughput_items) == {"read", "write", "total"}
    assert set(charts.p99_items) == {"read", "write"}
    _xs, reads = charts.drawn(charts.throughput_items["read"])
    assert reads == [v for r in results if r.metric == "ops_per_s" for v in r.metadata["per_second_by_op"]["read"]]
    assert "no knee within the sweep" in charts.caption.text()
    assert charts.queries_plot.isHidden()
    charts.deleteLater()


def test_sysbench_stored_transactions_and_their_queries_apart() -> None:
    results = dbload_results(BARE, False, engine="sysbench 1.0.20", knee=4, sysbench=True)
    charts = DbLoadCharts()
    charts.set_runs([curves_of(DbLoadRun("db-01", 1, dbload_of(results)))])
    assert set(charts.throughput_items) == {"total"} and set(charts.queries_items) == {"read", "write", "other"}
    assert charts.drawn(charts.throughput_items["total"])[1] == [v for r in results if r.metric == "ops_per_s"
                                                                 for v in r.metadata["per_second"]]
    assert not charts.queries_plot.isHidden()
    charts.deleteLater()


def test_compare_tab_draws_each_servers_stored_seconds(make_window, workbench, qtbot) -> None:
    from PySide6.QtCore import Qt

    from tests.fixtures.dbload_runs import store_two_dbload_servers

    ids = store_two_dbload_servers(workbench.store)
    window = make_window()
    tab = window.compare
    window.tabs.setCurrentWidget(tab)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(tab.picker.shown_runs()) == 2, timeout=20_000)
    tab.picker.select_ids(list(ids.values()))
    qtbot.mouseClick(tab.picker.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.comparison is not None and len(tab.comparison.rows) == 2, timeout=20_000)
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=20_000)
    charts = tab.view.dbload
    assert charts.isVisibleTo(tab.view) and set(charts.throughput_items) == {"bare-metal", "cloud-vm"}
    for label, run_id in ids.items():
        stored = workbench.run_detail(run_id).results
        assert charts.drawn(charts.throughput_items[label])[1] == [
            v for r in stored if r.metric == "ops_per_s" for v in r.metadata["per_second"]]
    assert "455" in tab.view.table.figure("bare-metal", "dbload:best.ops_per_s")


def test_the_overlay_shows_each_hosts_load_in_its_colour(qtbot) -> None:
    from widgets.dashboard import MODE_OVERLAY

    dashboard = Dashboard(mode=MODE_OVERLAY)
    qtbot.addWidget(dashboard)
    for host in ("db-a", "db-b"):
        dashboard.add_host(host)
    ticks = {host: [_tick(n, 0, 1 + index) for n in range(1, 6)] for index, host in enumerate(("db-a", "db-b"))}
    for n in range(5):
        for host in ticks:
            dashboard.add_event(host, ticks[host][n])
    overlay = dashboard.overlay
    index = 0
    overlay.set_metric(index, "dbload.ops.total")
    dashboard.show()
    qtbot.waitExposed(dashboard)
    dashboard.frame()
    plot = overlay.plots[index]
    for host, sent in ticks.items():
        _xs, drawn = plot.curve(host).getData()
        assert list(drawn) == [t["ops"]["read"] + t["ops"]["write"] for t in sent]
    overlay.set_metric(index, "dbload.p99.max")
    dashboard.frame()
    _xs, slowest = overlay.plots[index].curve("db-b").getData()
    assert list(slowest) == [max(t["lat_ms"][op]["p99"] for op in ("read", "write")) for t in ticks["db-b"]]


def test_compare_draws_the_database_servers_telemetry_and_the_clients_on_request(make_window, workbench,
                                                                                qtbot) -> None:
    from PySide6.QtCore import Qt

    from tests.fixtures.dbload_runs import store_two_dbload_servers_watched

    runs = store_two_dbload_servers_watched(workbench.store)
    window = make_window()
    tab = window.compare
    window.tabs.setCurrentWidget(tab)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(tab.picker.shown_runs()) == 4, timeout=20_000)   # the loads and their monitors
    tab.picker.select_ids([load for load, _m in runs.values()])
    qtbot.mouseClick(tab.picker.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.comparison is not None and len(tab.comparison.rows) == 2, timeout=20_000)
    overlay = tab.view.overlay

    def show(name: str) -> None:
        overlay.metric_picker.setCurrentIndex(overlay.metric_picker.findData(name))
        qtbot.waitUntil(lambda: window.pool.active_count() == 0 and len(overlay.curves) == 2, timeout=20_000)

    show("cpu.busy")
    assert [label for label, _c in overlay.legend] == ["bare-metal: database server pg-metal",
                                                       "cloud-vm: database server pg-cloud"]
    for load, monitor in runs.values():
        idle = next(s for s in workbench.run_series(monitor) if s.name == "cpu.idle")
        xs, ys = overlay.curves[load].getData()
        assert list(ys) == [100.0 - v for v in idle.values] and list(xs) == [t - 2.0 for t in idle.t]
    show("client.load.1")
    assert [label for label, _c in overlay.legend] == ["bare-metal: load client", "cloud-vm: load client"]
    for load, _monitor in runs.values():
        stored = next(s for s in workbench.run_series(load) if s.name == "load.1")
        assert list(overlay.curves[load].getData()[1]) == stored.values


def _row_fills(panel, plots) -> None:
    """The charts shown side by side from the panel's left edge to its right, with only the grid's spacing
    between them."""
    boxes = sorted((plot.geometry() for plot in plots), key=lambda box: box.left())
    assert boxes[0].left() <= 1 and boxes[-1].right() >= panel.width() - 2, boxes
    for left, right in zip(boxes, boxes[1:], strict=False):
        assert 0 <= right.left() - left.right() - 1 <= 8, boxes


@pytest.mark.parametrize("sysbench", [False, True])
def test_a_hidden_queries_chart_takes_no_room_in_a_clients_panel(qtbot, sysbench: bool) -> None:
    from widgets.dbload_live import DbLoadPanel, DbLoadSeries
    from widgets.live_plot import PlotGroup

    series = DbLoadSeries()
    panel = DbLoadPanel(series, PlotGroup(), "#3778c2")
    qtbot.addWidget(panel)
    for n in range(1, 4):
        tick = _tick(n, 1, 2)
        series.add_tick(dict(tick, ops={"read": 1400, "write": 400, "txn": 100}) if sysbench else tick, float(n))
    panel.update_from_series()
    panel.resize(1200, 260)
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: panel.errors_plot.geometry().right() > 0)
    shown = [panel.ops_plot, panel.p99_plot, panel.errors_plot]
    if sysbench:
        shown.insert(1, panel.queries_plot)
    assert [plot for plot in panel.plots.values() if plot.isVisibleTo(panel)] == shown
    _row_fills(panel, shown)
    # the operations and p99 charts share the width as their stretches say: neither takes a hidden chart's room
    assert abs(panel.ops_plot.width() - panel.p99_plot.width()) <= 2
