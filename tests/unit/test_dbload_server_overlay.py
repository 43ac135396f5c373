"""A database load's "during the test" telemetry is its database server's, where the server was watched: the
curves are the server's stored samples on the load's axis, labelled "database server NAME"; the load client's
own are still there, labelled as the client's. The same in Compare and in the PDF's charts."""
from __future__ import annotations

from app.compare.dbload_server import overlay_curves
from app.compare.model import build, load_inputs
from app.report.content import gather
from tests.fixtures.dbload_runs import BARE, dbload_results, store_dbload_run, store_two_dbload_servers_watched


def _stored(workbench, run_id: int, name: str) -> tuple[list[float], list[float]]:
    series = next(s for s in workbench.run_series(run_id) if s.name == name)
    return list(series.t), list(series.values)


def _comparison(workbench, run_ids: list[int]):
    return build(load_inputs(workbench, run_ids))


def test_the_servers_cpu_is_drawn_from_its_stored_samples_on_the_loads_axis(workbench) -> None:
    runs = store_two_dbload_servers_watched(workbench.store)
    comparison = _comparison(workbench, [load for load, _m in runs.values()])
    curves = {c.label: c for c in overlay_curves(workbench, comparison, "cpu.busy")}
    assert set(curves) == {"bare-metal: database server pg-metal", "cloud-vm: database server pg-cloud"}
    for (label, (load, monitor)), server in zip(runs.items(), ("pg-metal", "pg-cloud"), strict=True):
        t, idle = _stored(workbench, monitor, "cpu.idle")
        curve = curves[f"{label}: database server {server}"]
        assert curve.values == [100.0 - v for v in idle]
        assert curve.t == [x - 2.0 for x in t]     # the server's t0 was 2 s before the first step
        assert curve.run_id == load                # in its row's colour
    steal = {c.label: c.values for c in overlay_curves(workbench, comparison, "cpu.steal")}
    assert steal["cloud-vm: database server pg-cloud"] == _stored(workbench, runs["cloud-vm"][1], "cpu.steal")[1]


def test_the_load_clients_own_curves_stay_available_labelled_as_the_clients(workbench) -> None:
    runs = store_two_dbload_servers_watched(workbench.store)
    comparison = _comparison(workbench, [load for load, _m in runs.values()])
    curves = {c.label: c for c in overlay_curves(workbench, comparison, "client.load.1")}
    assert set(curves) == {"bare-metal: load client", "cloud-vm: load client"}
    for label, (load, _monitor) in runs.items():
        t, values = _stored(workbench, load, "load.1")
        assert curves[f"{label}: load client"].values == values
        assert curves[f"{label}: load client"].t == [x - 1.0 for x in t]   # the client's t0: 1 s before


def test_a_run_without_its_servers_telemetry_shows_its_clients_labelled_so(workbench) -> None:
    from storage.records import SeriesData

    run = store_dbload_run(workbench.store, "db-client", dbload_results(BARE, False, knee=4))
    workbench.store.runs.add_series(run, [SeriesData("cpu.idle", "", "%", [1.0, 2.0], [70.0, 60.0])])
    [curve] = overlay_curves(workbench, _comparison(workbench, [run]), "cpu.busy")
    assert (curve.label, curve.values) == ("db-client: load client", [30.0, 40.0])


def test_the_pdfs_charts_are_the_servers_then_the_clients(workbench) -> None:
    runs = store_two_dbload_servers_watched(workbench.store)
    data = gather(workbench, [load for load, _m in runs.values()])
    charts = {o.name: o for o in data.overlays if o.test == "dbload" and not o.name.startswith("dbload.")}
    assert [o.name for o in data.overlays if o.name in charts] == [
        "disk.util", "cpu.busy", "cpu.steal", "load.1", "client.cpu.busy", "client.load.1"]
    assert charts["cpu.busy"].title.endswith("— database server")
    assert charts["client.cpu.busy"].title.endswith("— load client")
    disk = {s.label: s for s in charts["disk.util"].series}
    assert disk["cloud-vm: database server pg-cloud"].values == _stored(workbench, runs["cloud-vm"][1],
                                                                       "disk.util")[1]
    assert disk["cloud-vm: database server pg-cloud"].device == "vda"
    # each server's curves in its row's colour
    assert data.colour("cloud-vm: database server pg-cloud") == data.colour("cloud-vm")
