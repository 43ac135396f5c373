"""Live charts with two hosts at 1280 x 720, and the Compare charts, read as a customer reads them: marker
labels that stay put while the window slides, every chart named, r/s and w/s told apart, and a hover
readout on Compare's charts that says what the data says under the pointer."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from app.compare.model import build
from app.compare.overlay import AlignedSeries
from app.gui.compare_choices import comparison_view
from tests.fixtures.telemetry import synthetic_samples
from tests.gui.clipping import cut_off_texts
from tests.gui.test_compare_view import IOPS, RUNS
from widgets.crosshair import format_value
from widgets.dashboard import Dashboard
from widgets.host_panel import Y_LABELS
from widgets.marker_key import SEPARATOR
from widgets.marker_strip import label_forms

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0
HOSTS = ("db-ssd-raid10", "cloud-vm-07")
PHASES = ((0.5, "Writing the test file"), (30.5, "Random read 4 KiB"), (60.5, "Random read 1 MiB"),
          (90.5, "Sync write 4 KiB"), (95.5, "Random read 4 KiB, 1 worker"), (97.5, "Random read 4 KiB, 2 workers"),
          (150.5, "Random write 4 KiB"), (290.5, "Mixed read/write 70/30"))


@pytest.fixture
def board(qtbot):
    dashboard = Dashboard()
    qtbot.addWidget(dashboard)
    dashboard.resize(1000, 700)   # the Live tab of a 1280 x 720 window, host list beside it
    dashboard.show()
    qtbot.waitExposed(dashboard)
    return dashboard


def run_until(dashboard: Dashboard, start: int, seconds: int) -> None:
    """The hosts' samples from `start` s to `start + seconds` s of the run, and the phases begun by then."""
    for index, host in enumerate(HOSTS):
        dashboard.add_samples(host, synthetic_samples(seconds, t0=T0 + start, seed=index + 1 + start))
        for seq, (t, label) in enumerate(PHASES, start=2):
            if start <= t < start + seconds:
                dashboard.add_event(host, {"seq": seq, "t": T0 + t, "type": "phase_start", "label": label})
    for _ in range(8):   # the x window moves a few plots per frame
        QApplication.processEvents()
        dashboard.frame()


def shown_labels(dashboard: Dashboard) -> dict[tuple[str, str, str], str]:
    """(host, chart, the tag's first phase) -> the label the strip shows for it."""
    out = {}
    for host, panel in dashboard.panels.items():
        for key, plot in panel.plots.items():
            for tag in plot.marker_strip.tags():
                out[(host, key, tag.markers[0].label)] = tag.text
    return out


def test_marker_labels_stay_the_same_while_the_window_slides(board):
    run_until(board, 0, 295)   # the newest phase began 5 s ago, at the right edge
    before = shown_labels(board)
    assert before[(HOSTS[0], "iops", "Mixed read/write 70/30")], "the newest phase is named"
    run_until(board, 295, 90)   # 90 s later: the window slid, the first phases left it
    after = shown_labels(board)
    assert (HOSTS[0], "iops", "Writing the test file") not in after
    common = before.keys() & after.keys()
    assert len(common) >= 8
    changed = {key: (before[key], after[key]) for key in common if before[key] != after[key]}
    assert not changed, f"labels changed as time passed: {changed}"
    for text in after.values():
        assert "…" not in text, f"a cut label: {text}"
    assert any(text.startswith("Sync write 4 KiB") for text in after.values()), "a phase with room is named whole"


def test_every_chart_is_named_with_its_unit_at_1280_with_two_hosts(board):
    run_until(board, 0, 120)
    for panel in board.panels.values():
        for key, plot in panel.plots.items():
            axis = plot.plot_item.getAxis("left")
            assert axis.labelText == Y_LABELS[key]
            assert axis.label.isVisible(), key
            # the name runs along the axis, whole, inside the chart's widget
            assert axis.label.boundingRect().width() <= axis.geometry().height(), f"{key}'s name is cut"
            box = axis.label.mapRectToScene(axis.label.boundingRect())
            margin = axis.label.document().documentMargin()   # the text lies inside its box's margin
            assert box.left() + margin >= 0 and box.right() <= plot.plot_item.vb.sceneBoundingRect().left() + 1
            # and the tick values keep their room beside it
            assert axis.geometry().width() >= 44 if plot.y_fixed is None else axis.geometry().width() >= 40
    titles = {key: plot.plot_item.getAxis("left").labelText for key, plot in board.panels[HOSTS[0]].plots.items()}
    assert titles["await"] == "Latency (ms)" and titles["cpu"] == "CPU %" and titles["load"] == "Load"


def test_reads_and_writes_are_drawn_with_different_pens(board):
    run_until(board, 0, 60)
    panel = board.panels[HOSTS[0]]
    for key in ("iops", "mbs", "await"):
        plot = panel.plots[key]
        read, write = plot.curve("r").opts["pen"], plot.curve("w").opts["pen"]
        assert read.style() == Qt.PenStyle.SolidLine and write.style() == Qt.PenStyle.DashLine, key
        assert read.color().name() == panel.colour, "the read curve keeps the host's colour"
        html = plot.plot_item.titleLabel.text
        assert "╍" in html, f"{key}'s legend marks the dashed curve"
    # another host joins: the colours may move, the dashes stay
    board.add_samples("aaa-first", synthetic_samples(10, t0=T0))
    board.frame()
    write = panel.plots["iops"].curve("w").opts["pen"]
    assert write.style() == Qt.PenStyle.DashLine


def move_mouse(plot, scene_pos: QPointF) -> None:
    """The pointer at scene_pos, as the chart's scene reports it (the scene drops moves closer together
    than a frame, so the test hands them over as reported)."""
    plot.scene().sigMouseMoved.emit(scene_pos)
    QApplication.processEvents()


@pytest.fixture
def compare(qtbot):
    shown = comparison_view()
    qtbot.addWidget(shown)
    shown.resize(1300, 900)
    shown.show()
    qtbot.waitExposed(shown)
    shown.set_comparison(build(RUNS))
    return shown


def test_compare_overlay_reads_every_server_under_the_pointer(compare, qtbot):
    old_t = [float(i) for i in range(61)]
    old_v = [50.0 + (i % 7) * 3.5 for i in range(61)]
    new_t = [float(i) for i in range(31)]
    new_v = [10.0 + (i % 5) * 1.25 for i in range(31)]
    compare.set_overlays([AlignedSeries("old-server", 1, "disk.util", "vda", "%", old_t, old_v),
                          AlignedSeries("new-server", 3, "disk.util", "vda", "%", new_t, new_v)])
    overlay = compare.overlay
    overlay.plot.ensurePolished()
    qtbot.waitUntil(lambda: overlay.plot.isVisible() and overlay.plot.width() > 100)
    box = overlay.plot.getPlotItem().getViewBox()
    move_mouse(overlay.plot, box.mapViewToScene(QPointF(20.2, 30.0)))
    text = overlay.readout.text
    assert text.startswith("0:20"), text
    assert f"old-server (vda) {format_value(old_v[20])}" in text
    assert f"new-server (vda) {format_value(new_v[20])}" in text
    # past the end of new-server's test: it has no value there, not its last one
    move_mouse(overlay.plot, box.mapViewToScene(QPointF(45.0, 30.0)))
    assert f"old-server (vda) {format_value(old_v[45])}" in overlay.readout.text
    assert "new-server (vda) –" in overlay.readout.text
    # off the data: the title and legend come back
    data = box.sceneBoundingRect()
    move_mouse(overlay.plot, QPointF(data.left() - 10, data.center().y()))
    assert overlay.readout.text == ""
    assert "old-server (vda)" in overlay.plot.getPlotItem().titleLabel.text


def test_compare_bars_read_the_server_and_value_under_the_pointer(compare):
    chart = compare.bars.charts[IOPS]
    box = chart.getPlotItem().getViewBox()
    for row, (server, value) in enumerate(zip(chart.labels, chart.values, strict=True)):
        move_mouse(chart, box.mapViewToScene(QPointF(value / 2, row + 0.1)))
        assert chart.readout.text == f"{server}   IOPS {format_value(value)}"
    data = box.sceneBoundingRect()
    move_mouse(chart, QPointF(data.center().x(), data.bottom() + 10))
    assert chart.readout.text == ""
    assert chart.metric.label in chart.getPlotItem().titleLabel.text


def test_overlay_charts_are_named_with_their_unit_as_grid_charts_are(board):
    run_until(board, 0, 120)
    board.set_mode("overlay")
    for _ in range(4):
        QApplication.processEvents()
        board.frame()
    overlay = board.overlay
    wanted = {"disk.util": "%util", "disk.iops": "IOPS", "disk.MB/s": "MB/s", "disk.aqu-sz": "aqu-sz",
              "cpu.busy": "CPU busy %", "load.1": "Load (1 min)"}
    for index, plot in enumerate(overlay.plots):
        axis = plot.plot_item.getAxis("left")
        assert axis.labelText == wanted[overlay.metric_key(index)]
        assert axis.label.isVisible(), overlay.metric_key(index)
        assert axis.label.boundingRect().width() <= axis.geometry().height(), f"{axis.labelText} is cut"
        box = axis.label.mapRectToScene(axis.label.boundingRect())
        assert box.right() <= plot.plot_item.vb.sceneBoundingRect().left() + 1, "the name runs over the data"
    # the same words as the host's own chart of that metric in Grid
    grid = board.panels[HOSTS[0]].plots
    assert overlay.plots[1].plot_item.getAxis("left").labelText == grid["iops"].plot_item.getAxis("left").labelText
    # another metric picked: the axis says what is drawn now
    overlay.set_metric(1, "disk.w_await")
    QApplication.processEvents()
    assert overlay.plots[1].plot_item.getAxis("left").labelText == "Write latency (ms)"


def numbered_tags(plots) -> list[tuple[str, list[str]]]:
    """(the tag's text, its markers' labels) of every tag that shows numbers rather than a name."""
    return [(tag.text, [m.label for m in tag.markers]) for plot in plots for tag in plot.marker_strip.tags()
            if tag.numbered()]


def key_entries(key) -> dict[int, str]:
    """The key's "3 Rand read 4 K" entries as {3: "Rand read 4 K"}."""
    assert key.text().startswith("Markers: ")
    entries = {}
    for part in key.text().removeprefix("Markers: ").split(SEPARATOR):
        number, name = part.split(" ", 1)
        entries[int(number)] = name
    return entries


@pytest.mark.parametrize("mode", ["grid", "overlay"])
def test_numbered_marker_tags_are_spelled_out_under_the_charts_uncut_at_1280(board, qtbot, mode):
    window = QWidget()   # the Live tab of a 1280 x 720 window: the host list takes the rest
    layout = QVBoxLayout(window)
    layout.addWidget(board)
    try:
        check_marker_key(board, window, mode)
    finally:
        board.setParent(None)   # the board's fixture closes it
        window.deleteLater()


def check_marker_key(board, window, mode) -> None:
    window.resize(1000, 620)
    window.show()
    board.set_mode(mode)
    run_until(board, 0, 120)
    QApplication.processEvents()
    views = ([(panel.marker_key, panel.plots.values()) for panel in board.panels.values()] if mode == "grid"
             else [(board.overlay.marker_key, board.overlay.plots)])
    for key, plots in views:
        tags = numbered_tags(plots)
        assert tags, "at this width close phases show numbers (the test needs some)"
        assert key.isVisible()
        entries = key_entries(key)
        for text, labels in tags:
            first, _dash, last = text.partition("–")
            numbers = range(int(first), int(last or first) + 1)
            assert [entries[n] for n in numbers] == [label_forms(label)[:2][-1] for label in labels], text
        assert "Random read 4 KiB, 1 worker" in key.toolTip()   # the full names on hover
    QApplication.processEvents()
    cut = [problem for problem in cut_off_texts(window) if "markerKey" in problem]
    assert not cut, cut
    # inside the window (Grid: inside what its scroll bar reaches), not under its bottom edge
    room = board.grid_container if mode == "grid" else window
    for key, _plots in views:
        bottom = key.mapTo(room, key.rect().bottomLeft()).y()
        assert key.height() >= key.heightForWidth(key.width()) and bottom <= room.height()
