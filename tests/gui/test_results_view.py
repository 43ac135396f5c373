"""The results view: a stored disk run and a stored CPU run, as the Runs tab shows them."""
from __future__ import annotations

import math

import pyqtgraph as pg
import pytest

from app.gui.run_controller import load_run_results
from app.summary.results_page import results_page
from storage.records import ResultSample
from widgets.results_view import ResultsView

pytestmark = pytest.mark.gui

LAT = {"lat_mean": 0.112, "lat_p50": 0.098, "lat_p95": 0.21, "lat_p99": 0.48, "lat_p99.9": 1.9}


def disk_samples(cached_job: str = "") -> list[ResultSample]:
    def job(name: str, iops: float, mbps: float, lat: dict, workers: int = 1) -> list[ResultSample]:
        meta = {"engine": "fio", "engine_version": "fio-3.36", "flags": f"fio --name={name} --direct=1",
                "direct": name != cached_job, "cached": name == cached_job, "sync": "none", "workers": workers}
        out = [ResultSample("disk", f"{name}.iops", iops, "IOPS", meta),
               ResultSample("disk", f"{name}.mbps", mbps, "MB/s", meta)]
        out += [ResultSample("disk", f"{name}.{key}", value, "ms", meta) for key, value in lat.items()]
        return out

    samples = job("randread_4k", 8912.4, 36.5, LAT)
    samples += job("syncwrite_4k", 412.0, 1.69, {k: v * 20 for k, v in LAT.items()})
    for workers, iops in ((1, 8900.0), (4, 30100.0), (16, 31000.0)):
        samples += job(f"sweep_randread_4k_w{workers}", iops, iops * 4096 / 1e6, LAT, workers)
    return samples


def store_run(workbench, test: str, samples: list[ResultSample], warnings: tuple[str, ...] = ()) -> int:
    runs = workbench.store.runs
    run_id = runs.create("local", test, {"params": {"preset": "quick"}})
    runs.add_results(run_id, samples)
    runs.add_events(run_id, [{"seq": i + 1, "t": 1.0, "type": "warning", "message": w}
                             for i, w in enumerate(warnings)])
    runs.finish(run_id, "done")
    return run_id


def test_disk_results_table_charts_and_sweep(qtbot, workbench):
    run_id = store_run(workbench, "disk", disk_samples(cached_job="syncwrite_4k"),
                       ("the test file (256 MiB) is smaller than RAM (24 GiB) and direct I/O is off",))
    loaded = load_run_results(workbench, run_id)
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    assert f"Run #{run_id}" in view.title.text()
    assert [view.cell(r, 0) for r in range(view.table.rowCount())] == [
        "Random read 4 KiB", "Sync write 4 KiB", "Sweep: random read 4 KiB, 1 worker",
        "Sweep: random read 4 KiB, 4 workers", "Sweep: random read 4 KiB, 16 workers"]
    assert [view.cell(0, c) for c in range(10)] == ["Random read 4 KiB", "8,912", "36.5", "0.112", "0.098",
                                                    "0.210", "0.480", "1.90", "fio 3.36", "direct"]
    assert view.cell(1, 1) == "412" and view.cell(1, 7) == "38.0" and view.cell(1, 9) == "cached"
    assert view.table.item(0, 8).toolTip() == "fio --name=randread_4k --direct=1"
    warnings = view.warnings_label.text()
    assert not view.warnings_label.isHidden()
    assert "smaller than RAM" in warnings and "Cached I/O" in warnings
    # one latency chart per main job, none for the sweep's jobs
    assert list(view.latency_plots) == ["randread_4k", "syncwrite_4k"]
    bars = [i for i in view.latency_plots["randread_4k"].getPlotItem().items if hasattr(i, "opts")
            and "y1" in i.opts]
    # a log scale: each bar's top is log10 of its percentile, and each bar is labelled with its value
    drawn = [10 ** top for top in bars[0].opts["y1"]]
    assert [round(v, 9) for v in drawn] == [0.112, 0.098, 0.21, 0.48, 1.9]
    texts = [i.textItem.toPlainText() for i in view.latency_plots["randread_4k"].getPlotItem().items
             if isinstance(i, pg.TextItem)]
    assert texts == ["0.112", "0.098", "0.21", "0.48", "1.9"]
    # the sweep: IOPS against log2(workers), flat after 4 workers
    assert view.sweep_data == ([1, 4, 16], [8900.0, 30100.0, 31000.0])
    x, y = view.sweep_curve.getData()
    assert list(x) == [0.0, 2.0, 4.0] and list(y) == [8900.0, 30100.0, 31000.0]
    assert not view.sweep_plot.isHidden() and "about 4 workers" in view.sweep_note.text()
    assert math.isclose(view.sweep_plot.getPlotItem().getAxis("bottom")._tickLevels[0][1][0], 2.0)


def test_cpu_results(qtbot, workbench):
    meta = {"python": "CPython 3.12.3", "zlib": "1.3", "openssl": "OpenSSL 3.0.13", "workers": 1}
    multi = {**meta, "workers": 2}
    samples = [ResultSample("cpu", "single", 3.21, "ops/s", meta), ResultSample("cpu", "multi", 6.02, "ops/s", multi),
               ResultSample("cpu", "scaling", 1.875, "x", multi)]
    for kernel, value in (("zlib_compress", 31.5), ("zlib_decompress", 402.0), ("sha256", 1890.0)):
        samples += [ResultSample("cpu", f"single.{kernel}", value, "MB/s", meta),
                    ResultSample("cpu", f"multi.{kernel}", value * 1.9, "MB/s", multi)]
    loaded = load_run_results(workbench, store_run(workbench, "cpu", samples))
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    assert view.table.horizontalHeaderItem(2).text() == "All cores (2)"
    assert [view.cell(0, c) for c in range(4)] == ["Score", "3.21", "6.02", "ops/s"]
    assert [view.cell(3, c) for c in range(4)] == ["SHA-256", "1,890.0", "3,591.0", "MB/s"]
    assert view.cell(4, 0).startswith("Scaling") and view.cell(4, 2) == "1.88×"
    assert "zlib: 1.3" in view.title.text() and "OpenSSL 3.0.13" in view.title.text()
    assert view.warnings_label.isHidden() and view.sweep_plot.isHidden() and not view.latency_plots


def test_runs_tab_shows_results_of_the_selected_run(window, workbench, qtbot):
    run_id = store_run(workbench, "disk", disk_samples())
    window.refresh()
    qtbot.waitUntil(lambda: window.runs_table.model().rowCount() >= 1, timeout=10_000)
    window.tabs.setCurrentWidget(window.live.runs_pane)
    window.runs_table.selectRow(0)
    pane = window.live.runs_pane
    qtbot.waitUntil(lambda: pane.results.isVisibleTo(pane), timeout=10_000)
    assert f"Run #{run_id}" in pane.results.title.text()
    assert pane.results.cell(0, 1) == "8,912"
    window.runs_table.clearSelection()
    assert not pane.results.isVisibleTo(pane)


def _service_samples(test: str, meta: dict, values: dict[str, float]) -> list[ResultSample]:
    return [ResultSample(test, metric, value, "", meta) for metric, value in values.items()]


def test_mail_storm_results_summary_latency_and_synthetic_badge(qtbot, workbench):
    real = {"synthetic": False, "server": "127.0.0.1:25", "recipient": "sink@benchbay.invalid", "messages": 2000,
            "concurrency": 20, "size": 4096, "mta": "postfix", "mta_version": "3.7.11",
            "queue_dir": "/var/spool/postfix", "queue_tool": "postqueue -j", "poll_s": 5.0, "attempted": 2000,
            "by_stage": {"rcpt": {"4xx": 3}}}
    latency = {f"{stage}_{p}": scale * factor for stage, scale in (("connect", 0.07), ("banner", 253.0),
                                                                   ("data", 9.2))
               for p, factor in (("p50", 1), ("p95", 2), ("p99", 3), ("max", 4))}
    samples = _service_samples("mailstorm", real, {"accepted": 1997, "accepted_per_s": 485.12, "smtp_4xx": 3,
                                                   "queue_max": 40, "drain_s": 0.853, **latency})
    # over time, as the agent records them: accepts per whole second, and the queue polls
    samples = [ResultSample(s.test, s.metric, s.value, s.unit, dict(s.metadata, per_second=[300, 500, 480, 200],
                                                                    series=[[0.0, 0], [5.0, 40], [10.1, 0]]))
               if s.metric in ("accepted_per_s", "queue_max") else s for s in samples]
    loaded = load_run_results(workbench, store_run(workbench, "mailstorm", samples))
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    summary = view.summary_label.text()
    assert "accepted: 1,997 / 2,000 attempted" in summary and "accepted msg/s: 485" in summary
    assert "MTA: postfix 3.7.11" in summary and "refusals: RCPT TO: 3 4xx" in summary
    assert "queue: max 40 messages, drained 0.853 s after the last accept" in summary
    assert [view.cell(r, 0) for r in range(view.table.rowCount())] == ["connect", "banner", "end of DATA"]
    assert [view.cell(1, c) for c in range(5)] == ["banner", "253", "506", "759", "1,012"]
    assert "SYNTHETIC" not in view.title.text()
    assert "Not all messages accepted: 1,997 of 2,000." in view.warnings_label.text()
    assert view.mail_charts.isVisibleTo(view)
    (ax, ay), (qx, qy) = view.mail_charts.curves()
    assert ay == [300, 500, 480, 200] and ax == [0, 1, 2, 3, 4]
    assert (qx, qy) == ([0.0, 5.0, 10.1], [0.0, 40.0, 0.0])
    accepts, queue = view.mail_charts.readouts   # hover reads the second under the pointer
    assert accepts.show_at(1.4) == "1 s   accepted/s 500" and queue.show_at(5.6) == "5 s   in queue 40.0"

    synthetic = {"synthetic": True, "server": "127.0.0.1:25", "reason": "Connection refused", "messages": 2000,
                 "concurrency": 20, "size": 4096, "directory": "/srv"}
    samples = _service_samples("mailstorm", synthetic, {"accepted": 2000, "accepted_per_s": 4329.4,
                                                        "synthetic_fsync_p50": 1.0, "synthetic_fsync_max": 6.2})
    loaded = load_run_results(workbench, store_run(workbench, "mailstorm", samples))
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    assert "SYNTHETIC queue storm (no MTA)" in view.title.text()
    assert view.warnings_label.text().startswith("⚠ SYNTHETIC queue storm (no MTA)")
    assert [view.cell(0, c) for c in range(5)] == ["fsync", "1.00", "—", "—", "6.20"]
    assert not view.mail_charts.isVisibleTo(view)    # no per-second series in these results


def test_restore_results_one_row_per_pass_and_non_durable_badge(qtbot, workbench):
    meta = {"kind": "postgresql", "server_version": "15.20", "fsync": "off", "durable": False,
            "synchronous_commit": "off", "wal_level": "minimal", "maintenance_work_mem": "64MB",
            "shared_buffers": "128MB", "rows": 81055}
    samples = _service_samples("restore", meta, {"dump_bytes": 5127206, "db_bytes": 22953319})
    for metric, jobs, total in (("restore_j1", 1, 2.94), ("restore_jN", 4, 1.2)):
        samples += _service_samples("restore", {**meta, "jobs": jobs},
                                    {f"{metric}.pre_data_s": 0.04, f"{metric}.data_s": 2.0,
                                     f"{metric}.post_data_s": 0.9, f"{metric}.total_s": total,
                                     f"{metric}.mbps_dump": 1.66, f"{metric}.mbps_db": 7.45,
                                     f"{metric}.rows_per_s": 27570.0})
    loaded = load_run_results(workbench, store_run(workbench, "restore", samples))
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    assert view.table.horizontalHeaderItem(5).text() == "MB/s (dump)"
    assert view.table.horizontalHeaderItem(6).text() == "MB/s (db size)"
    assert [view.cell(r, 0) for r in range(view.table.rowCount())] == ["-j 1", "-j 4"]
    assert [view.cell(1, c) for c in range(8)] == ["-j 4", "0.040", "2.00", "0.900", "1.20", "1.66", "7.45",
                                                   "27,570"]
    assert "NON-DURABLE (fsync off)" in view.title.text()
    assert "PostgreSQL 15.20: fsync off, synchronous_commit off, wal_level minimal" in view.summary_label.text()
    assert not view.summary_label.isHidden() and view.latency_title.isHidden()


def test_hovering_the_sweep_reads_the_workers_and_iops_under_the_pointer(qtbot, workbench):
    from PySide6.QtCore import QPointF

    run_id = store_run(workbench, "disk", disk_samples())
    view = ResultsView()
    qtbot.addWidget(view)
    view.resize(1000, 900)
    view.show()
    loaded = load_run_results(workbench, run_id)
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    qtbot.waitExposed(view)
    box = view.sweep_plot.getPlotItem().getViewBox()
    # the pointer just right of the 4-worker point (x = log2(4) = 2)
    view.sweep_readout._moved(box.mapViewToScene(QPointF(2.2, 10_000.0)))
    assert view.sweep_readout.text == "4 workers   IOPS 30,100"
    assert view.sweep_readout.line.isVisible() and view.sweep_readout.line.value() == 2.0
    view.sweep_readout._moved(QPointF(-50.0, -50.0))   # away from the chart: the title again
    assert view.sweep_readout.text == "" and not view.sweep_readout.line.isVisible()


def test_the_charts_follow_a_switch_between_light_and_dark(qtbot, workbench):
    """A results window opened in one theme and kept open while the desktop switches: its charts switch too
    (a dark chart on a light window was the picture before)."""
    from widgets.chart_theme import chart_colours
    from widgets.theme import palette_for

    run_id = store_run(workbench, "disk", disk_samples())
    loaded = load_run_results(workbench, run_id)
    view = ResultsView()
    qtbot.addWidget(view)
    view.setPalette(palette_for("dark"))
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    dark = chart_colours(palette_for("dark")).background
    light = chart_colours(palette_for("light")).background
    assert dark != light

    def backgrounds() -> set[str]:
        plots = [view.sweep_plot, *view.latency_plots.values()]
        return {plot.backgroundBrush().color().name() for plot in plots}

    assert backgrounds() == {pg.mkColor(dark).name()}
    view.setPalette(palette_for("light"))
    assert backgrounds() == {pg.mkColor(light).name()}
    assert list(view.latency_plots) == ["randread_4k", "syncwrite_4k"]   # the same charts, redrawn
