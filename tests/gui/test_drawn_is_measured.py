"""What a chart draws is what was measured: the arrays handed to the plot items against the stored samples.

For each kind of chart (whole run, replay, live Grid and Overlay with and without a monitor hand-over,
Compare telemetry with a `local` run) the test takes what setData received (getOriginalDataset) and what
is on screen after downsampling (getData) and checks: every time is a sample's time on the host's clock
(axis origin + x), every value is the stored value at that time (downsampling may keep extremes, never
invent a value or a zero), and every chart of a view shows the same time range, with the data in it.
"""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.compare.overlay import pick
from app.gui.replay import ReplayView, load_stored_run
from tests.fixtures.engine_runs import TEST_START_S, busy_samples, store_cpu_run
from tests.gui.conftest import charts_made
from widgets.dashboard import MODE_GRID, MODE_OVERLAY, Dashboard
from widgets.host_series import HostSeries

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0

# grid plot curve -> the HostSeries buffer it draws
PANEL_CURVES = {("util", "util"): "disk.util", ("queue", "aqu"): "disk.aqu-sz", ("iops", "r"): "disk.r/s",
                ("iops", "w"): "disk.w/s", ("load", "1"): "load.1", ("load", "5"): "load.5",
                ("load", "15"): "load.15", ("mem", "dirty"): "mem.dirty"}


def stored_curve(samples, key: str, device: str | None = None) -> dict[float, float]:
    """host time -> value of one dashboard metric, computed from the samples as the engine recorded them."""
    series = HostSeries("x", t0=0.0)
    series.add_samples(samples)
    t, v = series.buffer(key, device).view()
    return {round(float(a), 6): float(b) for a, b in zip(t, v, strict=True)}


def handed(item) -> tuple[np.ndarray, np.ndarray]:
    x, y = item.getOriginalDataset()
    return (np.asarray(x, dtype=float), np.asarray(y, dtype=float)) if x is not None else (np.array([]), np.array([]))


def assert_drawn_from(item, origin: float, truth: dict[float, float], what: str) -> None:
    """Every pair handed to the item, and every point it shows, is a stored sample on the host's clock."""
    x, y = handed(item)
    assert len(x), f"{what}: nothing drawn"
    times = np.round(x + origin, 6)
    strangers = [float(t) for t in times if float(t) not in truth]
    assert not strangers, f"{what}: drawn at times no sample has: {strangers[:5]} (of {len(times)})"
    wrong = [(float(t), float(v), truth[float(t)]) for t, v in zip(times, y, strict=True)
             if not np.isclose(v, truth[float(t)])]
    assert not wrong, f"{what}: (time, drawn, stored) {wrong[:5]}"
    shown_x, shown_y = item.getData()
    if shown_y is not None and len(shown_y):
        values = np.array(sorted(truth.values()))
        invented = [float(v) for v in shown_y if not np.isclose(values, v).any()]
        assert not invented, f"{what}: values on screen that were never measured: {invented[:5]}"


def assert_same_window(plots, first: float, last: float, what: str) -> None:
    """Every chart of the view shows the same seconds, and they hold the data."""
    ranges = {tuple(round(v, 6) for v in p.getViewBox().viewRange()[0]) for p in plots}
    assert len(ranges) == 1, f"{what}: charts show different times: {ranges}"
    low, high = next(iter(ranges))
    assert low <= first + 1e-6 and high >= last - 1e-6, f"{what}: shows {low}..{high}, data is {first}..{last}"
    assert high - low <= 2 * (last - first) + 60, f"{what}: the data is a sliver of {low}..{high}"


def check_grid(board: Dashboard, label: str, samples, what: str) -> None:
    panel = board.panels[label]
    series = board.series[label]
    for (plot_key, curve_key), key in PANEL_CURVES.items():
        plot = panel.plots[plot_key]
        origin = plot.time_axis.origin if plot.time_axis.origin is not None else series.t0
        assert origin == pytest.approx(series.t0)
        assert_drawn_from(plot.curve(curve_key), series.t0, stored_curve(samples, key, series.device),
                          f"{what}: {label} {plot_key}/{curve_key}")
    cpu = panel.plots["cpu"]
    for layer, key in (("user", "stack.user"), ("steal", "stack.steal")):
        assert_drawn_from(cpu.curve(layer), series.t0, stored_curve(samples, key), f"{what}: {label} cpu {layer}")


# -- stored runs: Open graphs and Replay -------------------------------------------------------------------


def open_from_runs_tab(window, qtbot, run_id: int):
    window.refresh()
    pane = window.live.runs_pane
    qtbot.waitUntil(lambda: pane.table.model().rowCount() >= 1, timeout=20_000)
    window.tabs.setCurrentWidget(pane)
    pane.table.selectRow(0)
    qtbot.waitUntil(lambda: pane.selected_ids() == [run_id])
    qtbot.mouseClick(pane.open_button, Qt.MouseButton.LeftButton)
    graphs = window.live.graphs
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is graphs, timeout=20_000)
    return graphs


def test_open_graphs_draws_the_stored_samples_at_once_without_zeros(window, workbench, qtbot):
    """Case 1: a run stored by the engine (telemetry plus per-interval rates) opens with every sample drawn,
    load and CPU where the samples put them, and every chart showing the whole run."""
    run_id = store_cpu_run(workbench, "local", T0, seconds=40)
    samples = busy_samples(40, T0)
    graphs = open_from_runs_tab(window, qtbot, run_id)
    label = f"local #{run_id}"
    board = graphs.dashboard
    def drawn() -> bool:
        return (label in board.panels.built and board.panels[label].complete
                and len(handed(board.panels[label].plots["load"].curve("1"))[0]) > 0)

    qtbot.waitUntil(drawn, timeout=20_000)
    charts_made(qtbot, board)
    board.frame()
    check_grid(board, label, samples, "Open graphs")
    plots = list(board.panels[label].plots.values())
    series = board.series[label]
    assert_same_window(plots, samples[0].t - series.t0, samples[-1].t - series.t0, "Open graphs")


def test_replay_draws_what_was_measured_up_to_the_position(view_and_run, qtbot):
    view, stored, samples = view_and_run
    view.open_runs([stored], replay=True, speed=60)
    charts_made(qtbot, view.dashboard)
    view.clock.pause()
    view.clock.seek(20.0)   # back from where the replay was: the charts are made again
    charts_made(qtbot, view.dashboard)
    board = view.dashboard
    board.frame()
    label = stored.label
    check_grid(board, label, [s for s in samples if s.t <= T0 + 20.0 + 1e-6], "Replay at 20 s")
    view.clock.show_all()
    board.frame()
    check_grid(board, label, samples, "Replay, whole run")
    series = board.series[label]
    assert_same_window(list(board.panels[label].plots.values()), samples[0].t - series.t0,
                       samples[-1].t - series.t0, "Whole run")


@pytest.fixture
def view_and_run(workbench, qtbot):
    run_id = store_cpu_run(workbench, "db-beta", T0, seconds=40)
    stored = load_stored_run(workbench, run_id)
    replay = ReplayView()
    qtbot.addWidget(replay)
    replay.resize(1200, 900)
    replay.show()
    qtbot.waitExposed(replay)
    yield replay, stored, busy_samples(40, T0)
    replay.stop()


# -- live: Grid and Overlay, with and without a monitor hand-over -------------------------------------------


@pytest.fixture
def board(qtbot):
    dashboard = Dashboard(window=None)
    qtbot.addWidget(dashboard)
    dashboard.resize(1200, 900)
    dashboard.show()
    qtbot.waitExposed(dashboard)
    return dashboard


def feed(board: Dashboard, host: str, samples, clock: list[float]) -> None:
    """Samples as the run workers deliver them: one at a time, each about 0.3 s after its host time."""
    for sample in samples:
        clock[0] = sample.t + 0.3
        board.add_sample(host, sample)


def live_session(board: Dashboard, hosts: dict[str, tuple[float, int]], monitor_first: str | None):
    """Feed hosts as a live session does. hosts: name -> (host time of its first sample's start, samples).

    The workbench's clock (board.now) runs with the hosts' clocks, as NTP keeps them."""
    clock = [0.0]
    board.session_clock.now = lambda: clock[0]
    made = {name: busy_samples(count, start, seed=n + 1) for n, (name, (start, count)) in enumerate(hosts.items())}
    for name in hosts:
        board.add_host(name)
    events = sorted(((s.t, name, s) for name, samples in made.items() for s in samples), key=lambda e: e[0])
    for _t, name, sample in events:
        feed(board, name, [sample], clock)
    return made


def check_overlay(board: Dashboard, made, what: str) -> None:
    board.set_mode(MODE_OVERLAY)
    board.frame()
    overlay = board.overlay
    for index, plot in enumerate(overlay.plots):
        key = overlay.metric_key(index)
        origin = plot.time_axis.origin
        assert origin is not None, f"{what}: the overlay has no clock axis"
        for host, samples in made.items():
            series = board.series[host]
            assert_drawn_from(plot.curve(host), origin, stored_curve(samples, key, series.device),
                              f"{what}: overlay {key} of {host}")
    first = min(s.t for samples in made.values() for s in samples) - overlay.plots[0].time_axis.origin
    last = max(s.t for samples in made.values() for s in samples) - overlay.plots[0].time_axis.origin
    assert_same_window(overlay.plots, first, last, f"{what} overlay")


def test_live_two_hosts_started_together_are_drawn_on_their_clocks(board):
    made = live_session(board, {"local": (T0, 60), "db-beta": (T0 + 0.4, 60)}, None)
    board.set_mode(MODE_GRID)
    board.frame()
    for host, samples in made.items():
        check_grid(board, host, samples, "Live grid")
    check_overlay(board, made, "Live")


def test_overlay_after_a_monitor_hand_over_puts_each_host_at_its_own_time(board):
    """Case 2: db-alpha is monitored for 45 s, then a test starts on db-alpha and db-beta. db-beta's curves
    begin where its run did, 45 s after db-alpha's monitor began, not at the overlay's start."""
    made = live_session(board, {"db-alpha": (T0, 120), "db-beta": (T0 + 45.0, 75)}, "db-alpha")
    check_overlay(board, made, "Hand-over")
    board.set_mode(MODE_GRID)
    board.frame()
    for host, samples in made.items():
        check_grid(board, host, samples, "Hand-over grid")
    alpha, beta = board.series["db-alpha"], board.series["db-beta"]
    # one moment, one x: the hosts' charts line up
    assert beta.host["load.1"].first_t == pytest.approx(made["db-beta"][0].t - alpha.t0)


def test_overlay_with_local_after_a_hand_over(board):
    made = live_session(board, {"local": (T0, 90), "db-beta": (T0 + 30.0, 60)}, "local")
    check_overlay(board, made, "Hand-over with local")


# -- Compare: telemetry during the tests, with a local run ---------------------------------------------------


def test_compare_telemetry_with_a_local_run_draws_each_run_on_its_own_clock(window, workbench, qtbot):
    """Case 3: a `local` run and a remote run whose clock is 3.5 h behind the workbench's, its events
    stored on the workbench's clock with the host's time beside: each curve is its run's stored series,
    placed from its own test start; the axis spans the tests, not the hours between the clocks."""
    local = store_cpu_run(workbench, "local", T0, seconds=40, seed=1)
    remote = store_cpu_run(workbench, "db-beta", T0 - 12_600.0, seconds=40, seed=2, workbench_offset=-12_600.0,
                           events_on_workbench_clock=True)
    compare = window.compare
    window.tabs.setCurrentWidget(compare)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(compare.picker.shown_runs()) == 2, timeout=20_000)
    compare.picker.select_ids([local, remote])
    qtbot.mouseClick(compare.picker.compare_button, Qt.MouseButton.LeftButton)
    overlay = compare.view.overlay
    qtbot.waitUntil(lambda: len(overlay.curves) == 2, timeout=20_000)
    for name in ("cpu.busy", "load.1", "disk.util"):
        overlay.metric_picker.setCurrentIndex(overlay.metric_picker.findData(name))
        qtbot.waitUntil(lambda: len(overlay.curves) == 2 and overlay.status.text() == "", timeout=20_000)
        spans = []
        for run_id in (local, remote):
            curve = pick(workbench.run_series(run_id), name)
            truth = {round(t - TEST_START_S, 6): v for t, v in zip(curve.t, curve.values, strict=True)}
            assert_drawn_from(overlay.curves[run_id], 0.0, truth, f"Compare {name} run {run_id}")
            spans += [min(truth), max(truth)]
        assert_same_window([overlay.plot.getPlotItem()], min(spans), max(spans), f"Compare {name}")


# -- the disk the disk graphs show -------------------------------------------------------------------------

TEST_DIR_FACTS = {"test_dir": {"path": "/tmp", "device": "/dev/vda1", "disk": "vda", "fstype": "ext4"}}


def test_live_disk_graphs_open_on_the_disk_holding_the_test_directory(board):
    """Case 5: on `local` a loop device is busier than the disk the test writes to; the disk graphs show the
    test's disk (its facts name it), and a disk the user picks stays."""
    clock = [0.0]
    board.session_clock.now = lambda: clock[0]
    samples = busy_samples(30, T0, disks=("loop1", "vda"))   # loop1 carries the busy wave
    board.add_host("local")
    feed(board, "local", samples[:1], clock)
    board.add_event("local", {"seq": 2, "t": T0 + 1.2, "type": "facts", "facts": TEST_DIR_FACTS})
    feed(board, "local", samples[1:], clock)
    board.set_mode(MODE_GRID)
    board.frame()
    panel = board.panels["local"]
    assert board.series["local"].device == "vda" and panel.header.device_combo.currentText() == "vda"
    assert_drawn_from(panel.plots["util"].curve("util"), board.series["local"].t0,
                      stored_curve(samples, "disk.util", "vda"), "Live util of the test's disk")
    board.set_device("local", "loop1")
    feed(board, "local", busy_samples(5, T0 + 30, disks=("loop1", "vda")), clock)
    assert board.series["local"].device == "loop1"


def test_stored_graphs_open_on_the_disk_holding_the_test_directory(workbench, qtbot):
    from tests.fixtures.engine_runs import cpu_test_events, store_engine_run

    samples = busy_samples(30, T0, disks=("loop1", "vda"))
    run_id = store_engine_run(workbench, "local", "cpu", samples, cpu_test_events(T0 + 2.0, 20.0),
                              facts=TEST_DIR_FACTS)
    stored = load_stored_run(workbench, run_id)
    assert stored.disk == "vda"
    view = ReplayView()
    qtbot.addWidget(view)
    view.resize(1200, 900)
    view.show()
    view.open_runs([stored])
    charts_made(qtbot, view.dashboard)
    board = view.dashboard
    board.frame()
    assert board.series[stored.label].device == "vda"
    assert_drawn_from(board.panels[stored.label].plots["util"].curve("util"), stored.t0,
                      stored_curve(samples, "disk.util", "vda"), "Stored util of the test's disk")
    view.stop()


# -- results: the figures' charts ----------------------------------------------------------------------------


def test_results_charts_draw_the_stored_figures(workbench, qtbot):
    """The sweep curve and the latency bars of a disk run are its stored results, nothing else."""
    import math

    import pyqtgraph as pg

    from app.gui.run_controller import load_run_results
    from app.summary.results_page import results_page
    from tests.fixtures.engine_runs import store_engine_run
    from tests.gui.test_results_view import disk_samples
    from widgets.results_view import ResultsView

    figures = disk_samples()
    events = [{"seq": i + 1, "t": T0 + 5.0 + i, "type": "result", "test": r.test, "metric": r.metric,
               "value": r.value, "unit": r.unit, "metadata": r.metadata} for i, r in enumerate(figures)]
    run_id = store_engine_run(workbench, "db-beta", "disk", busy_samples(30, T0), events)
    stored = {r.metric: r.value for r in workbench.find_run(run_id).results}
    loaded = load_run_results(workbench, run_id)
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    x, y = handed(view.sweep_curve)
    sweep = {w: stored[f"sweep_randread_4k_w{w}.iops"] for w in (1, 4, 16)}
    assert list(x) == pytest.approx([math.log2(w) for w in sweep]) and list(y) == pytest.approx(list(sweep.values()))
    assert view.latency_plots, "no latency charts"
    for key, plot in view.latency_plots.items():
        bars = [i for i in plot.getPlotItem().items if isinstance(i, pg.BarGraphItem)]
        # bars on a log scale: each bar's top is log10 of a stored figure (an unmeasured one draws no bar)
        bottom = float(bars[0].opts["y0"])
        tops = [10.0 ** float(t) for t in bars[0].opts["y1"] if float(t) > bottom]
        stored_latency = {v for m, v in stored.items() if m.startswith(f"{key}.") and not m.endswith(("iops", "mbps"))}
        assert tops and all(any(math.isclose(t, v, rel_tol=1e-9) for v in stored_latency) for t in tops), (key, tops)
        assert set(view.latency_data[key][1]) <= stored_latency | {0.0}
        assert len(tops) == sum(1 for v in view.latency_data[key][1] if v > 0)   # every measured one shows


def test_the_pdf_draws_the_compare_telemetry_the_window_draws(workbench):
    """The report's telemetry curves (what its line charts are handed) are the same stored samples, placed the
    same way, for a local run beside a host whose events are on another clock."""
    from app.report.content import gather

    local = store_cpu_run(workbench, "local", T0, seconds=40, seed=1)
    remote = store_cpu_run(workbench, "db-beta", T0 - 12_600.0, seconds=40, seed=2, workbench_offset=-12_600.0,
                           events_on_workbench_clock=True)
    report = gather(workbench, [local, remote])
    drawn = {(o.name, s.run_id): s for o in report.overlays for s in o.series}
    for name in ("cpu.busy", "load.1"):
        for run_id in (local, remote):
            curve = pick(workbench.run_series(run_id), name)
            series = drawn[(name, run_id)]
            assert series.t == pytest.approx([t - TEST_START_S for t in curve.t]) and series.values == curve.values
