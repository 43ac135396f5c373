"""The live dashboard driven by synthetic samples: what the curves hold is what the hosts sent."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QLabel

from tests.fixtures.telemetry import synthetic_samples
from widgets.dashboard import MODE_GRID, MODE_OVERLAY, Dashboard
from widgets.host_panel import UTIL_HINT
from widgets.live_plot import LivePlot

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0


@pytest.fixture
def dashboard(qtbot):
    board = Dashboard()
    qtbot.addWidget(board)
    board.resize(1200, 900)
    board.show()
    qtbot.waitExposed(board)
    return board


def drawn(plot: LivePlot, key: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = plot.curve(key).getOriginalDataset()
    return (np.asarray(x), np.asarray(y)) if x is not None else (np.array([]), np.array([]))


def test_samples_drive_a_host_panel(dashboard, qtbot):
    samples = synthetic_samples(120, t0=T0)
    for sample in samples:
        dashboard.add_sample("db1", sample)
    qtbot.waitUntil(lambda: len(drawn(dashboard.panels["db1"].plots["util"], "util")[0]) == 120)   # the timer
    plots = dashboard.panels["db1"].plots
    device = dashboard.series["db1"].device
    assert device == "vda"   # the busy disk is chosen while the user has not picked one
    x, util = drawn(plots["util"], "util")
    assert np.allclose(x, [s.t - T0 for s in samples])   # seconds since the run start
    assert np.allclose(util, [s.disks["vda"]["util"] for s in samples])
    _x, w = drawn(plots["iops"], "w")
    assert np.allclose(w, [s.disks["vda"]["w/s"] for s in samples])
    _x, wmb = drawn(plots["mbs"], "w")
    assert np.allclose(wmb, [s.disks["vda"]["wkB/s"] / 1024 for s in samples])
    _x, r_await = drawn(plots["await"], "r")
    assert np.allclose(r_await, [s.disks["vda"]["r_await"] for s in samples])
    _x, load5 = drawn(plots["load"], "5")
    assert np.allclose(load5, [s.load[1] for s in samples])
    _x, dirty = drawn(plots["mem"], "dirty")
    assert np.allclose(dirty, [s.mem["dirty"] / 1024 for s in samples])
    # CPU stacked: each band's top is the sum of the bands below it
    _x, top_of_iowait = drawn(plots["cpu"], "iowait")
    assert np.allclose(top_of_iowait, [s.cpu["user"] + s.cpu["system"] + s.cpu["iowait"] for s in samples])
    assert plots["cpu"].legend_names() == ["user", "system", "iowait", "steal"]
    assert dashboard.panels["db1"].header.status_label.text() == "120 samples"


def test_one_set_data_per_changed_curve_per_frame(dashboard, qtbot):
    samples = synthetic_samples(3, t0=T0)
    dashboard.add_sample("db1", samples[0])
    dashboard.frame()
    curves = sum(len(p.curve_keys()) for p in dashboard.panels["db1"].plots.values())
    dashboard.add_sample("db1", samples[1])
    dashboard.add_sample("db1", samples[2])
    assert dashboard.frame() == curves      # two samples since the last frame, one setData each
    assert dashboard.frame() == 0           # nothing new: nothing redrawn


def test_the_window_follows_the_newest_samples(dashboard, qtbot):
    dashboard.add_samples("db1", synthetic_samples(900, t0=T0))
    dashboard.frame()
    plot = dashboard.panels["db1"].plots["iops"]
    x0, x1 = plot.view_box.viewRange()[0]
    assert (x0, x1) == pytest.approx((600.0, 900.0))   # the last 5 minutes
    dashboard.set_window(None)
    dashboard.frame()
    assert plot.view_box.viewRange()[0] == pytest.approx([0.0, 900.0])
    assert dashboard.window_combo.currentText() == "Whole run"


def test_phase_markers_appear_with_labels(dashboard, qtbot):
    dashboard.add_samples("db1", synthetic_samples(200, t0=T0))
    dashboard.add_event("db1", {"seq": 3, "t": T0 + 20, "type": "phase_start", "phase": "warmup", "label": "Warm-up"})
    dashboard.add_event("db1", {"seq": 4, "t": T0 + 60, "type": "phase_end", "phase": "warmup", "label": "Warm-up"})
    dashboard.add_event("db1", {"seq": 5, "t": T0 + 60.2, "type": "phase_start", "phase": "measure",
                                "label": "Measure"})
    dashboard.add_event("db1", {"seq": 6, "t": T0 + 150, "type": "progress", "phase": "measure", "fraction": 0.5,
                                "eta_s": 90, "message": ""})
    dashboard.frame()
    plot = dashboard.panels["db1"].plots["util"]
    # the end of the warm-up and the start of the measurement are one line, labelled with what starts
    assert plot.markers() == [(pytest.approx(20.0), "Warm-up"), (pytest.approx(60.2), "Measure")]
    assert [tag.text for tag in plot.marker_strip.tags()] == ["Warm-up", "Measure"]
    status = dashboard.panels["db1"].header.status_label.text()
    # the phase only: the overall progress and time left are the progress area's, never a second figure
    assert status.startswith("Measure")
    assert "%" not in status and "left" not in status


def test_mail_storm_markers_storm_start_last_accept_queue_drained(dashboard, qtbot):
    """The events a mail storm writes, in the order it writes them: point markers win over phase lines."""
    dashboard.add_samples("mx", synthetic_samples(200, t0=T0))
    for event in (
        {"seq": 3, "t": T0 + 10.0, "type": "phase_start", "phase": "storm", "label": "Storm"},
        {"seq": 4, "t": T0 + 10.1, "type": "marker", "marker": "storm_start", "label": "Storm start"},
        {"seq": 5, "t": T0 + 52.0, "type": "phase_end", "phase": "storm", "label": "Storm"},
        {"seq": 6, "t": T0 + 51.6, "type": "marker", "marker": "last_accept", "label": "Last accept"},
        {"seq": 7, "t": T0 + 52.1, "type": "phase_start", "phase": "drain", "label": "Queue drain"},
        {"seq": 8, "t": T0 + 52.4, "type": "marker", "marker": "queue_drained", "label": "Queue drained"},
        {"seq": 9, "t": T0 + 52.5, "type": "phase_end", "phase": "drain", "label": "Queue drain"},
    ):
        dashboard.add_event("mx", event)
    dashboard.frame()
    plot = dashboard.panels["mx"].plots["util"]
    # a queue drained at the first poll after the last accept: two moments, two lines
    assert plot.markers() == [(pytest.approx(10.1), "Storm start"), (pytest.approx(51.6), "Last accept · Queue drain"),
                              (pytest.approx(52.4), "Queue drained")]
    # 51.6 and 52.4 are a few pixels apart: one tag names both, its tooltip tells them apart
    tags = plot.marker_strip.tags()
    assert [tag.text for tag in tags] == ["Storm start", "Last accept · Queue drain +1"]
    assert "Last accept · Queue drain" in tags[1].toolTip() and "Queue drained" in tags[1].toolTip()


def test_marker_labels_a_few_seconds_apart_do_not_overlap(dashboard, qtbot):
    dashboard.add_samples("mx", synthetic_samples(60, t0=T0))
    for seq, (t, label) in enumerate(((1.0, "Storm start"), (40.0, "Last accept · Queue drain"),
                                      (45.0, "Queue drained")), start=3):
        dashboard.add_event("mx", {"seq": seq, "t": T0 + t, "type": "marker", "marker": label, "label": label})
    dashboard.set_window(None)
    dashboard.frame()
    plot = dashboard.panels["mx"].plots["util"]
    tags = plot.marker_strip.tags()
    assert tags and all(tag.isVisible() for tag in tags)
    boxes = [tag.mapRectToScene(tag.label_rect()) for tag in tags if tag.text]
    assert boxes
    strip = plot.marker_strip.sceneBoundingRect()
    for index, box in enumerate(boxes):
        assert strip.adjusted(-1, -1, 1, 1).contains(box), f"label {index} leaves its strip: {box} / {strip}"
        for other in boxes[index + 1:]:
            assert not box.intersects(other), "two marker labels print over each other"


def test_device_picker_switches_the_shown_device(dashboard, qtbot):
    samples = synthetic_samples(60, t0=T0, disks=("vda", "vg0-data"))
    dashboard.add_samples("db1", samples)
    panel = dashboard.panels["db1"]
    combo = panel.header.device_combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["vda", "vg0-data"]   # dm by its name
    combo.setCurrentIndex(1)
    combo.activated.emit(1)   # what a user's pick sends
    dashboard.frame()
    _x, util = drawn(panel.plots["util"], "util")
    assert np.allclose(util, [s.disks["vg0-data"]["util"] for s in samples])
    assert "vg0-data" in panel.plots["util"].plot_item.titleLabel.text
    # the overlay shows the same disk for this host, and a later busy disk does not take over
    assert dashboard.overlay.headers["db1"].device_combo.currentText() == "vg0-data"
    dashboard.add_samples("db1", synthetic_samples(60, t0=T0 + 60, disks=("vda", "vg0-data")))
    assert dashboard.series["db1"].device == "vg0-data"


def test_util_plot_explains_util(dashboard):
    dashboard.add_sample("db1", synthetic_samples(1, t0=T0)[0])
    dashboard.add_sample("db2", synthetic_samples(1, t0=T0)[0])
    # said once above both hosts, and no tooltip popping up over the chart
    assert dashboard.util_note.text() == UTIL_HINT and dashboard.util_note.isVisible()
    notes = [label for label in dashboard.findChildren(QLabel) if label.text() == UTIL_HINT]
    assert notes == [dashboard.util_note]
    assert all(panel.plots["util"].toolTip() == "" for panel in dashboard.panels.values())
    assert "not saturation on SSDs, NVMe or RAID" in UTIL_HINT
    # in the overlay, the graph showing %util says it in its title line and its tooltip
    dashboard.set_mode(MODE_OVERLAY)
    util_plot = dashboard.overlay.plots[0]
    assert dashboard.overlay.metric_key(0) == "disk.util"
    assert "not saturation" in util_plot.title_text() and util_plot.toolTip() == UTIL_HINT
    dashboard.overlay.set_metric(0, "cpu.busy")
    assert "saturation" not in util_plot.title_text()


def test_overlay_shows_one_curve_per_host(dashboard, qtbot):
    hosts = {"db1": synthetic_samples(100, t0=T0, seed=1), "mail-01": synthetic_samples(80, t0=T0 + 7, seed=2),
             "local": synthetic_samples(90, t0=T0 - 3600, seed=3)}
    dashboard.session_clock.now = lambda: T0 + 200.0   # they all arrive at one moment of the workbench's clock
    for host, samples in hosts.items():
        dashboard.add_samples(host, samples)
    dashboard.set_mode(MODE_OVERLAY)
    assert dashboard.overlay.isVisible() and not dashboard.grid_scroll.isVisible()
    dashboard.frame()
    overlay = dashboard.overlay
    overlay.set_metric(0, "disk.w/s")
    dashboard.frame()
    plot = overlay.plots[0]
    assert plot.curve_keys() == list(hosts)
    assert overlay.legend_names() == list(hosts)   # the host strip: colour mark, name, status, disk
    for host, samples in hosts.items():
        x, w = drawn(plot, host)
        assert np.allclose(w, [s.disks["vda"]["w/s"] for s in samples])
    # all three arrive at once: mail-01 started 7 s after db1 on a clock that agrees, so its curves begin
    # 7 s later; local's clock is an hour behind, and its curves line up with db1's all the same
    assert drawn(plot, "db1")[0][0] == pytest.approx(1.0)
    assert drawn(plot, "mail-01")[0][0] == pytest.approx(8.0)
    assert drawn(plot, "local")[0][0] == pytest.approx(1.0)
    colours = {h: plot.curve(h).opts["pen"].color().name() for h in hosts}
    assert len(set(colours.values())) == 3
    for host, colour in colours.items():
        assert colour in overlay.headers[host].name_label.text() and host in overlay.headers[host].name_label.text()
    # only the shown view spends frames; switching back keeps every sample
    assert dashboard.overlay_group.active and not dashboard.grid_group.active
    dashboard.set_mode(MODE_GRID)
    dashboard.frame()
    assert len(drawn(dashboard.panels["mail-01"].plots["util"], "util")[0]) == 80


def test_status_lines(dashboard):
    dashboard.add_host("db1")
    dashboard.add_event("db1", {"seq": None, "t": T0, "type": "disconnected", "message": "Connection reset"})
    assert dashboard.panels["db1"].header.status_label.text().startswith("reconnecting… Connection reset")
    dashboard.add_event("db1", {"seq": None, "t": T0 + 9, "type": "reconnected", "outage_s": 8.6, "attempts": 3})
    assert dashboard.overlay.headers["db1"].status_label.text() == "reconnected after 9 s"
    dashboard.add_event("db1", {"seq": 9, "t": T0 + 10, "type": "error", "message": "fio died"})
    assert dashboard.panels["db1"].header.status_label.text() == "error: fio died"


def test_clear_forgets_hosts(dashboard):
    dashboard.add_samples("db1", synthetic_samples(5, t0=T0))
    dashboard.set_mode(MODE_OVERLAY)
    dashboard.clear()
    assert dashboard.host_names() == [] and dashboard.overlay.plots[0].curve_keys() == []
    assert dashboard.stack.currentWidget() is dashboard.empty_label
    dashboard.add_samples("mail-01", synthetic_samples(5, t0=T0))
    assert dashboard.overlay.plots[0].curve_keys() == ["mail-01"]
