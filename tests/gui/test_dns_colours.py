"""Each resolver in one colour of its own, the same in the live charts, the Compare tab's latency distribution
and the PDF, whichever order its seconds came in; the live p50 and p99 charts on a log axis that spans the
decades of what they draw."""
from __future__ import annotations

import math

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.compare.dns import dns_comparison
from app.compare.model import load_inputs
from app.report.pdf_dns import dns_colours
from tests.fixtures.dns_runs import store_dns_runs
from widgets.dashboard import Dashboard

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0
LOCAL, FAR = "10.0.0.2:53", "9.9.9.9:53"    # the stored runs' resolvers (tests/fixtures/dns_runs.py)


def _ticks(order: tuple[str, ...]) -> list[dict]:
    out = []
    for second in range(6):
        for resolver in order:
            slow = resolver == FAR
            out.append({"type": "dns_tick", "resolver": resolver, "pass": "cold", "second": second,
                        "t": T0 + second + 1, "answered": 500, "timeouts": 0, "qps": 500.0,
                        "resolvers": [LOCAL, FAR],
                        "lat_ms": {"p50": 11.0 + second if slow else 0.4, "p90": 20.0,
                                   "p99": 180.0 if slow else 0.9 + second / 10}})
    return out


def _live(qtbot, order: tuple[str, ...]):
    dashboard = Dashboard()
    qtbot.addWidget(dashboard)
    dashboard.resize(1200, 900)
    dashboard.add_host("dns-client")
    dashboard.show()
    qtbot.waitExposed(dashboard)
    ticks = _ticks(order)
    dashboard.add_event("dns-client", ticks[0])
    dashboard.frame()       # the panel and its curves
    for tick in ticks[1:]:
        dashboard.add_event("dns-client", tick)
    QApplication.processEvents()
    dashboard.frame()
    return dashboard.panels["dns-client"].dns, ticks, dashboard.series["dns-client"].t0


def test_a_resolver_has_one_colour_in_live_compare_and_pdf(make_window, workbench, qtbot):
    # the far resolver's seconds first here, the local one's first there: the colours do not follow arrival
    far_first, _ticks_a, _x0 = _live(qtbot, (FAR, LOCAL))
    local_first, _ticks_b, _x0 = _live(qtbot, (LOCAL, FAR))
    live = {r: far_first.plots["p50"].curve(f"{r}|cold").opts["pen"].color().name() for r in (LOCAL, FAR)}
    assert live == {r: local_first.plots["p50"].curve(f"{r}|cold").opts["pen"].color().name() for r in (LOCAL, FAR)}
    assert live[LOCAL] != live[FAR]
    for figure in ("qps", "p99", "timeouts"):
        assert {r: far_first.plots[figure].curve_colour(f"{r}|cold") for r in (LOCAL, FAR)} == live

    ids = store_dns_runs(workbench.store, ("office-gw",))
    window = make_window()
    tab = window.compare
    window.tabs.setCurrentWidget(tab)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(tab.picker.shown_runs()) == len(ids), timeout=20_000)
    tab.picker.select_ids(ids)
    qtbot.mouseClick(tab.picker.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.comparison is not None and bool(tab.view.dns.lines), timeout=20_000)
    chart = tab.view.dns.chart
    for pass_ in ("cold", "warm"):
        assert {r: chart.curves[(r, pass_)].opts["pen"].color().name() for r in (LOCAL, FAR)} == live

    lines = dns_comparison((run.record.id, run.record.host_name, run.results)
                           for run in load_inputs(workbench, ids)).lines
    assert {label: colour.name() for label, colour in dns_colours(lines).items()} == live


def test_live_latencies_on_a_log_axis_spanning_their_decades(qtbot):
    panel, ticks, x0 = _live(qtbot, (LOCAL, FAR))
    for figure in ("p50", "p99"):
        plot = panel.plots[figure]
        assert plot.log_y and plot.plot_item.getAxis("left").logMode
        for resolver in (LOCAL, FAR):   # handed the values themselves (the axis takes their log)
            xs, ys = plot.curve(f"{resolver}|cold").getOriginalDataset()
            assert list(ys) == [t["lat_ms"][figure] for t in ticks if t["resolver"] == resolver]
            assert list(xs) == [t["t"] - x0 for t in ticks if t["resolver"] == resolver]
        low, high = plot.view_box.viewRange()[1]
        values = [t["lat_ms"][figure] for t in ticks]
        # 0.4 ms and 16 ms both inside, on whole decades: 0.1 ms up to 100 ms (p50), 0.1 to 1,000 ms (p99)
        assert low == math.floor(math.log10(min(values))) and high == math.ceil(math.log10(max(values) * 1.05))
        # a label per power of ten, none between (pyqtgraph's own would print 2..9 of a short range over each other)
        major, minor = plot.plot_item.getAxis("left")._tickLevels
        assert [text for _at, text in major] == [f"{10.0 ** k:g}" for k in range(int(low), int(high) + 1)]
        assert minor == []
    assert not panel.plots["qps"].log_y and not panel.plots["timeouts"].log_y
