"""The many-hosts overview: one row per host, the worst on top, a click opens the host, cheap redraws."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from remote.telemetry.sample import TelemetrySample
from widgets.host_overview import ROW_HEIGHT, HostOverview, worst_first
from widgets.host_series import HostSeries


def host(name: str, util: float, busy: float = 5.0, seconds: int = 30, state: str = "running") -> HostSeries:
    series = HostSeries(name)
    for k in range(seconds):
        series.add_sample(_point(1000.0 + k, util, busy))
    series.state = state
    return series


def _point(t: float, util: float, busy: float) -> TelemetrySample:
    return TelemetrySample(t, 1.0, cpu={"user": busy, "system": 0.0, "idle": 100.0 - busy},
                           disks={"sda": {"util": util, "r/s": util * 10, "w/s": 0.0, "rkB/s": 0.0, "wkB/s": 0.0}})


def test_the_worst_host_is_on_top_failed_first_then_the_busiest(qtbot) -> None:
    hosts = {s.name: s for s in (host("calm", 5), host("busy-disk", 95), host("busy-cpu", 10, busy=80),
                                 host("broken", 0, state="failed"), host("lost", 1, state="reconnecting"))}
    overview = HostOverview()
    qtbot.addWidget(overview)
    overview.set_sources(hosts)
    assert overview.order == ["broken", "lost", "busy-disk", "busy-cpu", "calm"]
    assert overview.summary_label.text() == "5 hosts · 1 failed · 1 reconnecting"

    # the calm host's disk fills up: it moves up at the next revision of the order, not before
    with qtbot.waitSignal(overview.ranking_changed, timeout=3000) as ranked:
        for k in range(15):
            hosts["calm"].add_sample(_point(1030.0 + k, 100.0, 5.0))
    assert ranked.args[0][:3] == ["broken", "lost", "calm"]


def test_clicking_a_row_asks_for_that_host(qtbot) -> None:
    overview = HostOverview()
    qtbot.addWidget(overview)
    overview.resize(1100, 400)
    overview.set_sources({s.name: s for s in (host("a", 90), host("b", 50), host("c", 10))})
    overview.show()
    qtbot.waitExposed(overview)
    with qtbot.waitSignal(overview.host_chosen, timeout=2000) as chosen:
        qtbot.mouseClick(overview.rows, Qt.MouseButton.LeftButton, pos=QPoint(60, ROW_HEIGHT + ROW_HEIGHT // 2))
    assert chosen.args == ["b"]
    assert overview.chosen == "b"


def test_a_frame_draws_only_visible_rows_that_changed(qtbot) -> None:
    hosts = {f"h{i:03d}": host(f"h{i:03d}", util=i % 97) for i in range(100)}
    overview = HostOverview()
    qtbot.addWidget(overview)
    overview.resize(1100, 12 * ROW_HEIGHT + 60)
    overview.set_sources(hosts)
    overview.show()
    qtbot.waitExposed(overview)
    qtbot.waitUntil(lambda: overview.scroll.viewport().height() > 10 * ROW_HEIGHT)   # laid out
    visible = overview.frame(everything=True)
    assert 0 < visible <= 14          # what the window shows, not a hundred rows
    assert overview.frame() == 0      # nothing changed: nothing drawn
    top = overview.order[0]
    hosts[top].add_sample(_point(1030.0, 50.0, 5.0))
    assert overview.frame() == 1      # one host got a sample: one row
    bottom = overview.order[-1]
    hosts[bottom].add_sample(_point(1030.0, 50.0, 5.0))
    assert overview.frame() == 0      # off screen: nothing drawn until scrolled to


def test_no_hosts_says_so_and_a_host_without_samples_waits(qtbot) -> None:
    overview = HostOverview()
    qtbot.addWidget(overview)
    overview.set_sources({})
    assert overview.summary_label.text() == "No hosts yet."
    fresh = HostSeries("new-host")
    fresh.state = "connecting"
    overview.add_source(fresh)
    assert overview.order == ["new-host"]
    assert overview.summary_label.text() == "1 hosts · 1 connecting"
    assert worst_first([fresh]) == ["new-host"]
