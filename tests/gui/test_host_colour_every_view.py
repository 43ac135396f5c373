"""One colour per host in every view: Live (Grid, Overlay, Overview), Graphs, Compare bars and telemetry, the
results window and the PDF's data, walked in one window with the hosts `local`, db-alpha and db-beta."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from app.gui.run_controller import load_run_results
from app.report.content import gather
from app.summary.results_page import results_page
from remote.hostspec import AUTH_PASSWORD, HostSpec
from tests.fixtures.engine_runs import busy_samples, store_cpu_run
from tests.gui.conftest import charts_made
from widgets.dashboard import MODE_GRID, MODE_OVERLAY
from widgets.dashboard import MODE_OVERVIEW as OVERVIEW
from widgets.host_colours import HOST_PALETTE, set_known_hosts
from widgets.results_view import ResultsView

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0
# the inventory sorted: db-alpha, db-beta, local
EXPECTED = {"db-alpha": HOST_PALETTE[0], "db-beta": HOST_PALETTE[1], "local": HOST_PALETTE[2]}


def pen(item) -> str:
    return item.opts["pen"].color().name()


@pytest.fixture
def inventory_window(workbench, make_window):
    for name, address in (("db-alpha", "127.0.0.2"), ("db-beta", "127.0.0.3")):
        workbench.add_host(HostSpec(name=name, address=address, auth=AUTH_PASSWORD))
    window = make_window()
    yield window
    set_known_hosts(())


def picture_has(pixmap, colour: str) -> bool:
    image = pixmap.toImage()
    wanted = QColor(colour).rgb() & 0xFFFFFF
    return any(image.pixel(x, y) & 0xFFFFFF == wanted for y in range(image.height()) for x in range(image.width()))


def test_every_view_draws_a_host_in_its_one_colour(inventory_window, workbench, qtbot):
    window = inventory_window
    seen: dict[str, dict[str, str]] = {host: {} for host in EXPECTED}

    # Live: local alone first (it used to be blue there, green in Compare), then with db-beta
    window.tabs.setCurrentWidget(window.live.live)
    board = window.live.live.dashboard
    for host in ("local", "db-beta"):
        board.add_host(host)
        board.add_samples(host, busy_samples(30, T0))
    board.set_mode(MODE_GRID)
    board.frame()
    for host in ("local", "db-beta"):
        seen[host]["grid"] = pen(board.panels[host].plots["util"].curve("util"))
        seen[host]["grid header"] = board.panels[host].header.colour
    board.set_mode(MODE_OVERLAY)
    board.frame()
    for host in ("local", "db-beta"):
        seen[host]["overlay"] = pen(board.overlay.plots[0].curve(host))
    board.set_mode(OVERVIEW)
    overview = board.overview
    qtbot.waitUntil(lambda: set(overview.sources) == {"local", "db-beta"}, timeout=10_000)
    for host in ("local", "db-beta"):
        assert picture_has(overview.rows._row_picture(host), EXPECTED[host]), f"overview sparkline of {host}"
        seen[host]["overview"] = EXPECTED[host]

    # Graphs: each host's stored run opened alone
    ids = {host: store_cpu_run(workbench, host, T0, seconds=30, seed=n + 1) for n, host in enumerate(EXPECTED)}
    for host, run_id in ids.items():
        from app.gui.replay import load_stored_run

        stored = load_stored_run(workbench, run_id)
        window.live.graphs.open_runs([stored])
        charts_made(qtbot, window.live.graphs.dashboard)
        seen[host]["graphs"] = pen(window.live.graphs.dashboard.panels[stored.label].plots["util"].curve("util"))

    # Compare: bars and telemetry
    compare = window.compare
    window.tabs.setCurrentWidget(compare)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(compare.picker.shown_runs()) == 3, timeout=20_000)
    compare.picker.select_ids(list(ids.values()))
    qtbot.mouseClick(compare.picker.compare_button, Qt.MouseButton.LeftButton)
    overlay = compare.view.overlay
    qtbot.waitUntil(lambda: len(overlay.curves) == 3 and bool(compare.view.bars.charts), timeout=20_000)
    chart = next(iter(compare.view.bars.charts.values()))
    for label, colour in zip(chart.labels, chart.colours, strict=True):
        seen[label]["compare bars"] = colour
    for host, run_id in ids.items():
        seen[host]["compare telemetry"] = pen(overlay.curves[run_id])

    # the results window and the PDF's data
    for host, run_id in ids.items():
        loaded = load_run_results(workbench, run_id)
        view = ResultsView()
        qtbot.addWidget(view)
        view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
        seen[host]["results"] = pen(view.sweep_curve)
    set_known_hosts(())   # the report reads the inventory from the store, as the command line does
    report = gather(workbench, list(ids.values()))
    for host in ids:
        seen[host]["pdf"] = report.colour(host)

    for host, colours in seen.items():
        assert colours and set(colours.values()) == {EXPECTED[host]}, f"{host}: {colours}"
