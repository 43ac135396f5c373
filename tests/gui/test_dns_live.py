"""A dns run's live charts draw exactly the ticks the agent sent: queries answered, p50 and p99 latency and
timeouts per second, one curve per resolver and pass (cold solid, warm dashed), each resolver in a colour of its
own that a later resolver never moves; stored ticks draw the same in a stored run's graphs; nothing is cut off
at 1280x720."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication

from app.gui.replay import ReplayView, load_stored_run
from app.gui.window_state import fit_default_size, keep_inside_screen
from remote.telemetry.sample import samples_to_series
from tests.fixtures.telemetry import synthetic_samples
from tests.gui.clipping import cut_off_texts, off_screen
from widgets.dashboard import Dashboard

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0
LOCAL, FAR = "127.0.0.53:53", "10.0.0.2:53"


def dns_tick(resolver: str, pass_name: str, second: int, t: float) -> dict:
    """One second as bench_dns sends it; the far resolver's cold second 2 lost every answer (no latencies)."""
    far = resolver == FAR
    lost = far and pass_name == "cold" and second == 2
    answered = 0 if lost else (300 if far else 900) + 7 * second + (400 if pass_name == "warm" else 0)
    lat = ({"p50": None, "p90": None, "p99": None} if lost else
           {"p50": round((11.0 if far else 0.8) + second / 10, 3), "p90": 20.0,
            "p99": round((40.0 if far else 3.0) + second, 3)})
    return {"type": "dns_tick", "resolver": resolver, "pass": pass_name, "second": second, "t": t,
            "answered": answered, "timeouts": 25 if lost else second % 2, "qps": float(answered), "lat_ms": lat}


def sequential_run(start: float = T0) -> list[dict]:
    """Cold: the local resolver 5 s, then the far one 5 s; then the warm pass likewise."""
    ticks, t = [], start
    for pass_name in ("cold", "warm"):
        for resolver in (LOCAL, FAR):
            for second in range(5):
                t += 1.0
                ticks.append(dns_tick(resolver, pass_name, second, t))
    return ticks


def drawn(plot, curve: str) -> tuple[list[float], list[float]]:
    """What the plot item was handed (its setData arrays, before clipping to the view)."""
    xs, ys = plot.curve(curve).getOriginalDataset()
    return ([], []) if xs is None else (list(xs), list(ys))


def sent(ticks: list[dict], resolver: str, pass_name: str, value, x0: float) -> tuple[list[float], list[float]]:
    lane = [(t["t"] - x0, value(t)) for t in ticks if t["resolver"] == resolver and t["pass"] == pass_name]
    lane = [(x, v) for x, v in lane if v is not None]
    return [x for x, _v in lane], [v for _x, v in lane]


def test_each_resolver_and_pass_draws_the_seconds_it_sent(qtbot) -> None:
    dashboard = Dashboard()
    qtbot.addWidget(dashboard)
    dashboard.resize(1200, 900)
    dashboard.add_host("dns-client")
    dashboard.show()
    qtbot.waitExposed(dashboard)
    ticks = sequential_run()
    dashboard.add_event("dns-client", ticks[0])
    dashboard.frame()
    panel = dashboard.panels["dns-client"].dns
    assert panel is not None
    local_colour = panel.plots["qps"].curve_colour(f"{LOCAL}|cold")
    for tick in ticks[1:]:
        dashboard.add_event("dns-client", tick)
    QApplication.processEvents()
    dashboard.frame()
    x0 = dashboard.series["dns-client"].t0
    figures = {"qps": lambda t: t["qps"], "p50": lambda t: t["lat_ms"]["p50"], "p99": lambda t: t["lat_ms"]["p99"],
               "timeouts": lambda t: t["timeouts"]}
    for figure, value in figures.items():
        plot = panel.plots[figure]
        assert plot.curve_keys() == [f"{LOCAL}|cold", f"{FAR}|cold", f"{LOCAL}|warm", f"{FAR}|warm"]
        for resolver in (LOCAL, FAR):
            for pass_name in ("cold", "warm"):
                assert drawn(plot, f"{resolver}|{pass_name}") == sent(ticks, resolver, pass_name, value, x0)
    # the second that lost every answer has no latency point (not a zero): the far cold p50 skips it
    assert len(drawn(panel.plots["p50"], f"{FAR}|cold")[1]) == 4
    assert 25.0 in drawn(panel.plots["timeouts"], f"{FAR}|cold")[1]
    # a resolver keeps the colour it came with; the two differ; warm is dashed, cold solid
    qps = panel.plots["qps"]
    assert qps.curve_colour(f"{LOCAL}|cold") == local_colour == qps.curve_colour(f"{LOCAL}|warm")
    assert qps.curve_colour(f"{FAR}|cold") != local_colour
    assert qps.curve(f"{LOCAL}|cold").opts["pen"].style() == Qt.PenStyle.SolidLine
    assert qps.curve(f"{LOCAL}|warm").opts["pen"].style() == Qt.PenStyle.DashLine
    # one line per resolver: its newest second and its timeouts so far
    far_line = panel.resolver_labels[FAR].full_line
    assert "warm: 728 q/s, p50 11.4 ms, p99 44.0 ms, 2 timeouts so far" in far_line
    assert "cold ━ solid, warm ╍ dashed" in panel.title_label.text()
    assert panel.columns == 4      # one host on a wide window: the four charts in one row


def test_dnsperf_seconds_draw_queries_only(qtbot) -> None:
    dashboard = Dashboard()
    qtbot.addWidget(dashboard)
    dashboard.add_host("dns-client")
    dashboard.show()
    qtbot.waitExposed(dashboard)
    ticks = [{"type": "dns_tick", "resolver": LOCAL, "pass": "max", "second": n, "t": T0 + n, "answered": 20000 + n,
              "timeouts": None, "qps": 20000.0 + n, "lat_ms": {"p50": None, "p90": None, "p99": None}}
             for n in range(1, 6)]
    for tick in ticks:
        dashboard.add_event("dns-client", tick)
    QApplication.processEvents()
    dashboard.frame()
    panel = dashboard.panels["dns-client"].dns
    assert drawn(panel.plots["qps"], f"{LOCAL}|max")[1] == [t["qps"] for t in ticks]
    # no latencies, no timeouts in that mode: no empty charts that would read as zero
    assert [f for f, plot in panel.plots.items() if plot.isVisibleTo(panel)] == ["qps"]
    assert "max: 20,005 q/s" in panel.resolver_labels[LOCAL].full_line


def test_a_stored_dns_run_draws_its_ticks_in_its_graphs(workbench, qtbot) -> None:
    samples = synthetic_samples(30, t0=T0)
    ticks = sequential_run()
    runs = workbench.store.runs
    run_id = runs.create("dns-client", "dns", {"resolvers": f"{LOCAL},{FAR}"})
    runs.add_series(run_id, samples_to_series(samples, T0))
    runs.add_events(run_id, [dict(tick, seq=index) for index, tick in enumerate(ticks, start=1)] + [
        {"seq": None, "t": T0 + 31.0, "type": "telemetry", "t0": T0, "interval": 1.0, "samples": 30}])
    runs.finish(run_id, "done", engine="agent")
    view = ReplayView()
    qtbot.addWidget(view)
    view.resize(1200, 900)
    view.show()
    qtbot.waitExposed(view)
    view.open_runs([load_stored_run(workbench, run_id)])
    label = f"dns-client #{run_id}"
    qtbot.waitUntil(lambda: label in view.dashboard.panels.built and view.dashboard.panels[label].dns is not None
                    and len(view.dashboard.series[label].dns.lanes) == 4, timeout=20_000)
    panel = view.dashboard.panels[label].dns
    qtbot.waitUntil(lambda: len(drawn(panel.plots["p99"], f"{FAR}|warm")[0]) == 5, timeout=20_000)
    for resolver in (LOCAL, FAR):
        # the series' t = 0 is the run's T0: a tick is drawn at its host time less T0
        assert drawn(panel.plots["p99"], f"{resolver}|warm") == sent(ticks, resolver, "warm",
                                                                     lambda t: t["lat_ms"]["p99"], T0)
    view.stop()


def test_nothing_cut_off_at_1280x720_with_two_hosts_running_dns(make_window, qtbot) -> None:
    screen = QRect(0, 0, 1280, 720)
    window = make_window()
    fit_default_size(window, screen)
    keep_inside_screen(window, screen)
    dashboard = window.live.live.dashboard
    for index, host in enumerate(("dns-a", "dns-b")):
        dashboard.add_samples(host, synthetic_samples(30, t0=T0 + 0.4 * index, seed=index + 1))
        for tick in sequential_run(T0 + 5):
            dashboard.add_event(host, tick)
    window.tabs.setCurrentWidget(window.live.live)
    for _ in range(4):
        dashboard.frame()
        QApplication.processEvents()
    panel = dashboard.panels["dns-a"].dns
    assert panel is not None and panel.isVisibleTo(window)
    # beside another host the four charts take two rows: each keeps room for its axes and its title
    assert panel.columns == 2 and min(plot.width() for plot in panel.plots.values()) >= 200
    assert not off_screen(window, screen)
    assert cut_off_texts(window) == []
