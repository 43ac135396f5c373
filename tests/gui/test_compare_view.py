"""The comparison view: the table a customer reads, its caveats, the baseline picker, bars and overlays."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from PySide6.QtCore import Qt

from app.compare.model import RunInput, build
from app.compare.overlay import AlignedSeries
from app.gui.compare_choices import comparison_view
from storage.records import ResultSample, RunRecord
from widgets.compare_table import BEST_SHADE
from widgets.compare_view import NO_BASELINE, ComparisonView
from widgets.host_colours import host_colour

pytestmark = pytest.mark.gui

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
GiB = 1 << 30
IOPS, LAT, SYNC, MULTI = "disk:randread_4k.iops", "disk:randread_4k.lat_p99", "disk:syncwrite_4k.iops", "cpu:multi"


def record(run_id: int, host: str, test: str) -> RunRecord:
    return RunRecord(run_id, host, test, "done", {}, T0, T0 + timedelta(minutes=2), "1", "agent", "1", "", (), "")


def facts(model: str) -> dict:
    return {"cpu": {"model": model, "sockets": 1, "cores": 8, "threads": 16}, "memory": {"total_bytes": 16 * GiB},
            "virtualization": "kvm", "disks": [{"name": "vda", "size_bytes": 200_000_000_000, "rotational": False}],
            "test_dir": {"path": "/srv", "device": "/dev/vda1"}}


def disk(iops: float, p99: float, cached: bool = False) -> list[ResultSample]:
    meta = {"engine": "fio", "engine_version": "fio-3.33", "direct": not cached, "cached": cached,
            "file_size": 32 * GiB}
    return [ResultSample("disk", "randread_4k.iops", iops, "IOPS", meta),
            ResultSample("disk", "randread_4k.lat_p99", p99, "ms", meta),
            ResultSample("disk", "syncwrite_4k.iops", 800.0, "IOPS", meta)]


def cpu(multi: float) -> list[ResultSample]:
    meta = {"python": "3.11.2", "zlib": "1.2.13", "openssl": "OpenSSL 3.0.11", "workers": 8}
    return [ResultSample("cpu", "multi", multi, "ops/s", meta)]


RUNS = [RunInput(record(1, "old-server", "disk"), facts("Xeon E5-2620"), disk(5_000, 0.8)),
        RunInput(record(2, "old-server", "cpu"), facts("Xeon E5-2620"), cpu(400.0)),
        RunInput(record(3, "new-server", "disk"), facts("EPYC 7443P"), disk(17_000, 0.2, cached=True)),
        RunInput(record(4, "new-server", "cpu"), facts("EPYC 7443P"), cpu(1_000.0))]


@pytest.fixture
def view(qtbot) -> ComparisonView:
    shown = comparison_view()
    qtbot.addWidget(shown)
    shown.resize(1300, 900)
    shown.show()
    return shown


def test_table_rows_columns_best_ratio_and_caveats(view):
    view.set_comparison(build(RUNS, baseline_run_id=1))
    table = view.table
    assert table.labels == ["old-server", "new-server"]
    assert table.keys == [IOPS, LAT, SYNC, MULTI]
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers[0] == "Server" and headers[1].startswith("Random read 4 KiB\nIOPS")
    assert "lower is better" in table.horizontalHeaderItem(2).toolTip()
    # the test band over the columns, the spec line under the server's name, the baseline marked in words
    assert table.item(0, 1).text() == "Disk" and table.columnSpan(0, 1) == 3 and table.item(0, 4).text() == "CPU"
    old_name = table.item(table.server_row("old-server"), 0).text()
    assert old_name.startswith("old-server") and "baseline" in old_name and "Xeon E5-2620" in old_name
    assert "baseline" not in table.item(table.server_row("new-server"), 0).text()
    # best: highlighted, bold and said in words; its verdict against the baseline, factor and range, beside it
    best = table.figure_item("new-server", IOPS)
    assert best.text().startswith("★ 17,000") and "ahead of old-server by 3.4" in best.text()
    assert best.text().splitlines()[1].endswith(") · best")
    assert best.background().color() == BEST_SHADE and best.font().bold()
    assert best.textAlignment() & Qt.AlignmentFlag.AlignRight
    other = table.figure_item("old-server", IOPS)
    assert "best" not in other.text() and other.background().color() != BEST_SHADE and not other.font().bold()
    # one p99 each: a tail latency's run-to-run range is too wide to name a winner
    assert table.figure("new-server", LAT).startswith("0.200\ncan't tell yet vs old-server (")
    assert "What would settle it: run 2 more repeats on each." in table.figure_item("new-server", LAT).toolTip()
    # ... and in view under the table, not only in a tooltip: a range below 1 must not read as a verdict
    assert view.settle_label.isVisible()
    settle = "new-server (Random read 4 KiB p99, Sync write 4 KiB): run 2 more repeats on each."
    assert settle in view.settle_label.text()
    assert table.figure("new-server", MULTI).splitlines()[1].startswith("ahead of old-server by 2.5")
    assert table.figure("old-server", MULTI).splitlines()[1] == "baseline"
    # the caveat: a tag in the cell, its sentence in the tooltip and in the list that is always shown
    assert "⚠ cached" in best.text() and "Cached I/O" in best.toolTip()
    assert "cached" not in table.figure("new-server", MULTI)
    assert "new-server: Cached I/O (no O_DIRECT)" in view.caveat_text()
    assert view.caveats_label.isVisible()
    summary = view.summary_label.text()
    assert "old-server (baseline) has 5,000 IOPS; new-server: ahead of old-server by 3.4" in summary
    assert "(caveat: cached)" in summary


def test_without_a_baseline_verdicts_are_against_the_leader(view):
    view.set_comparison(build(RUNS))
    assert view.baseline_picker.currentText() == NO_BASELINE
    assert view.table.figure("new-server", IOPS).splitlines()[1] == "leader · best"
    # the other server's verdict is against the leader, with its factor and range
    assert view.table.figure("old-server", IOPS).splitlines()[1].startswith("0.294x of new-server (")


def test_baseline_picker_emits_the_rows_run_id(view, qtbot):
    view.set_comparison(build(RUNS))
    assert [view.baseline_picker.itemText(i) for i in range(view.baseline_picker.count())] == [
        NO_BASELINE, "old-server", "new-server"]
    with qtbot.waitSignal(view.baselineChanged) as picked:
        view.baseline_picker.setCurrentIndex(2)
    assert picked.args == [3]
    view.set_comparison(build(RUNS, baseline_run_id=3))
    assert view.baseline_picker.currentText() == "new-server"
    with qtbot.waitSignal(view.baselineChanged) as picked:
        view.baseline_picker.setCurrentIndex(0)
    assert picked.args == [None]


def test_rebuilding_on_the_baseline_signal_shows_the_ratios(view):
    """The controller rebuilds in the slot itself: the picker is refilled while it is emitting."""
    view.baselineChanged.connect(lambda run_id: view.set_comparison(build(RUNS, baseline_run_id=run_id)))
    view.set_comparison(build(RUNS))
    view.baseline_picker.setCurrentIndex(1)
    assert view.baseline_picker.currentText() == "old-server"
    assert view.table.figure("new-server", IOPS).splitlines()[1].startswith("ahead of old-server by 3.4")
    assert "baseline" in view.table.item(view.table.server_row("old-server"), 0).text()
    view.baseline_picker.setCurrentIndex(0)
    assert view.comparison.baseline is None and view.table.figure("new-server", IOPS).splitlines()[1] == \
        "leader · best"


def test_bar_chart_per_metric_one_bar_per_server(view):
    view.set_comparison(build(RUNS, baseline_run_id=1))
    assert list(view.bars.charts) == [IOPS, LAT, SYNC, MULTI]
    chart = view.bars.charts[IOPS]
    assert chart.labels == ["old-server", "new-server"]
    assert chart.bar_lengths() == [5_000.0, 17_000.0]
    assert chart.best == [False, True]
    assert [label.textItem.toPlainText().strip() for label in chart.value_labels] == ["5,000", "★ 17,000"]
    ticks = chart.getPlotItem().getAxis("left")._tickLevels[0]
    assert [name for _pos, name in ticks] == ["old-server", "new-server"]
    assert "lower is better" in view.bars.charts[LAT].getPlotItem().getAxis("bottom").labelText


def test_a_server_has_one_colour_in_the_bars_and_the_overlay(view):
    """The same colour for a server in every bar chart and in the telemetry overlay (and the PDF)."""
    view.set_comparison(build(RUNS))
    drawn = {}
    for chart in view.bars.charts.values():
        for label, brush in zip(chart.labels, chart.bar_item.opts["brushes"], strict=True):
            drawn.setdefault(label, set()).add(brush.color().name())
    assert drawn == {name: {host_colour(name, ["old-server", "new-server"])} for name in ("old-server", "new-server")}
    assert len({colour for colours in drawn.values() for colour in colours}) == 2
    view.set_overlays([AlignedSeries("old-server", 1, "disk.util", "vda", "%", [0.0, 1.0], [90.0, 95.0]),
                       AlignedSeries("new-server", 3, "disk.util", "vda", "%", [0.0, 1.0], [40.0, 45.0])])
    assert view.overlay.curves[1].opts["pen"].color().name() == next(iter(drawn["old-server"]))
    assert view.overlay.curves[3].opts["pen"].color().name() == next(iter(drawn["new-server"]))


def test_overlay_asks_for_curves_and_draws_one_per_server(view, qtbot):
    with qtbot.waitSignal(view.overlayRequested) as asked:
        view.set_comparison(build(RUNS))
    assert asked.args == ["disk.util", "disk"]
    assert view.overlay.test_picker.isVisible()    # the rows hold two tests
    # a new baseline is the same runs: no reload
    with qtbot.assertNotEmitted(view.overlayRequested):
        view.set_comparison(build(RUNS, baseline_run_id=1))
    curves = [AlignedSeries("old-server", 1, "disk.util", "vda", "%", [-2.0, 0.0, 1.0, 2.0], [1.0, 90.0, 95.0, 93.0]),
              AlignedSeries("new-server", 3, "disk.util", "vda", "%", [-1.0, 0.0, 1.0], [0.0, 40.0, 45.0])]
    view.set_overlays(curves)
    assert sorted(view.overlay.curves) == [1, 3]
    x, y = view.overlay.curves[3].getData()
    assert list(x) == [-1.0, 0.0, 1.0] and list(y) == [0.0, 40.0, 45.0]
    assert view.overlay.legend_labels() == ["old-server (vda)", "new-server (vda)"]
    colours = {view.overlay.curves[i].opts["pen"].color().name() for i in (1, 3)}
    assert len(colours) == 2
    with qtbot.waitSignal(view.overlayRequested) as asked:
        view.overlay.test_picker.setCurrentIndex(1)
    assert asked.args == ["disk.util", "cpu"]
    with qtbot.waitSignal(view.overlayRequested) as asked:
        view.overlay.metric_picker.setCurrentIndex(3)
    assert asked.args == ["load.1", "cpu"]
    view.set_overlays([])
    assert view.overlay.curves == {} and "No telemetry" in view.overlay.status.text()


def test_clear_shows_the_message_and_hides_the_rest(view):
    view.set_comparison(build(RUNS))
    view.clear("Loading 4 runs…")
    assert view.summary_label.text() == "Loading 4 runs…"
    assert view.table.rowCount() == 0 and view.bars.charts == {} and not view.content.isVisible()
    view.set_comparison(build(RUNS[:1]))
    assert view.content.isVisible() and view.table.labels == ["old-server"]
    assert "None" in view.caveat_text()


def test_bar_axis_numbers_have_thousands_separators(view):
    view.set_comparison(build(RUNS, baseline_run_id=1))
    axis = view.bars.charts[IOPS].getPlotItem().getAxis("bottom")
    assert axis.tickStrings([0.0, 50_000.0, 150_000.0], 1.0, 50_000.0) == ["0", "50,000", "150,000"]
    assert axis.tickStrings([0.05, 0.1], 1.0, 0.05) == ["0.05", "0.10"]


def test_how_steady_a_server_was_stands_under_its_headline_figure(view):
    from tests.unit.test_compare_steadiness import runs

    view.set_comparison(build(runs()))
    assert "variation 18.4 % · steal 7.2 %" in view.table.figure("shared-vm", "cpu:multi")
    assert "variation" not in view.table.figure("old-box", "cpu:multi")


def test_a_cancelled_run_is_grey_says_why_and_is_never_starred(view):
    from dataclasses import replace

    from widgets.compare_table import LIGHT_SHADES

    cancelled = RunInput(replace(record(3, "new-server", "disk"), status="cancelled"), facts("EPYC 7443P"),
                         disk(90_000, 0.1))
    view.set_comparison(build([RUNS[0], RUNS[1], cancelled, RUNS[3]]))
    item = view.table.figure_item("new-server", IOPS)
    assert item.text().splitlines() == ["90,000", "not compared: cancelled run", "⚠ cancelled"]
    assert item.foreground().color() == LIGHT_SHADES["partial"] and not item.font().bold()
    assert "Not compared: cancelled run" in item.toolTip()
    # the completed server is the reference; the cancelled run's caveat stays off new-server's CPU figure
    assert view.table.figure("old-server", IOPS).splitlines()[1] == "leader"
    assert "cancelled" not in view.table.figure("new-server", MULTI)
    assert "90,000" not in view.summary_label.text()
