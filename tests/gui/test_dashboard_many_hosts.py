"""The live dashboard with many hosts: it opens on the overview, a click drills down to the host's
graphs, and the overlay shows only the worst hosts."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from tests.gui.test_host_overview import _point
from widgets.dashboard import Dashboard
from widgets.host_overview import ROW_HEIGHT
from widgets.overview_hook import AUTO_OVERVIEW, MODE_OVERVIEW, TOP_N

HOSTS = AUTO_OVERVIEW   # the fewest hosts that open on the overview


def _dashboard(qtbot) -> Dashboard:
    board = Dashboard()
    qtbot.addWidget(board)
    board.resize(1200, 700)
    board.show()
    qtbot.waitExposed(board)
    for i in range(HOSTS):
        name = f"node{i:02d}"
        board.add_host(name)
        for k in range(12):
            board.add_sample(name, _point(1000.0 + k, util=float(i * 6), busy=5.0))
    board.set_status("node03", "command did not finish", "failed")
    return board


def test_many_hosts_open_on_the_overview_worst_first_and_nothing_else_redraws(qtbot) -> None:
    board = _dashboard(qtbot)
    ranking = board.overview.rank()
    assert board.mode == MODE_OVERVIEW and board.stack.currentWidget() is board.overview
    assert board.overview_button.isChecked()
    assert ranking[0] == "node03"                      # failed first
    assert ranking[1] == f"node{HOSTS - 1:02d}"        # then the busiest disk
    assert not board.grid_group.active and not board.overlay_group.active


def test_clicking_a_host_in_the_overview_shows_its_graphs(qtbot) -> None:
    board = _dashboard(qtbot)
    board.overview.rank()
    qtbot.waitUntil(lambda: board.overview.scroll.viewport().height() > 5 * ROW_HEIGHT)
    name = board.overview.order[2]       # a busy host: far down the grid, which lists hosts as added
    assert name == f"node{HOSTS - 2:02d}"
    qtbot.mouseClick(board.overview.rows, Qt.MouseButton.LeftButton, pos=QPoint(60, 2 * ROW_HEIGHT + ROW_HEIGHT // 2))
    assert board.mode == "grid" and board.grid_group.active
    viewport = board.grid_scroll.viewport()

    def top_in_view(host: str) -> bool:
        y = board.panels[host].mapTo(viewport, QPoint(0, 0)).y()
        return 0 <= y < viewport.height()

    # scrolled down to it, away from the first host (the grid lists hosts in the order they came)
    qtbot.waitUntil(lambda: top_in_view(name) and not top_in_view("node00"))


def test_the_overlay_shows_only_the_worst_hosts_and_says_so(qtbot) -> None:
    board = _dashboard(qtbot)
    ranking = board.overview.rank()
    board.set_mode("overlay")
    overlay = board.overlay
    shown = [host for host, header in overlay.headers.items() if header.isVisibleTo(overlay)]
    assert sorted(shown) == sorted(ranking[:TOP_N])
    curves = [key for key in overlay.plots[0].curve_keys() if overlay.plots[0].curve(key).isVisible()]
    assert sorted(curves) == sorted(ranking[:TOP_N])
    label = board.overview_hook.top_label
    assert label.isVisibleTo(board)
    assert label.text() == f"Overlay: the {TOP_N} worst of {HOSTS} hosts · colours by place among these, not the Grid's"
    # more hosts than colours: own colours repeat, so the hosts shown get distinct ones, legend and curves alike
    grid = board.colours()
    assert len(set(grid.values())) < HOSTS
    drawn = [overlay.plots[0].curve_colour(host) for host in shown]
    assert len(set(drawn)) == len(shown) and drawn == [overlay.headers[host].colour for host in shown]
    assert board.panels["node00"].colour == grid["node00"]                # the grid keeps the host's own
    board.set_mode("grid")
    assert not label.isVisibleTo(board)


def test_a_hundred_hosts_build_only_the_panels_on_screen_and_a_late_panel_has_the_whole_history(qtbot) -> None:
    board = Dashboard()
    qtbot.addWidget(board)
    board.resize(1280, 720)
    board.show()
    qtbot.waitExposed(board)
    for i in range(100):
        name = f"node{i:03d}"
        board.add_host(name)
        for k in range(30):
            board.add_sample(name, _point(1000.0 + k, util=float(i % 100), busy=5.0))
    qtbot.waitUntil(lambda: board.mode == MODE_OVERVIEW)           # many hosts: it opens on the overview
    qtbot.wait(100)
    assert len(board.panels.built) <= 2                            # which needs no panel at all
    board.set_mode("grid")
    qtbot.waitUntil(lambda: "node000" in board.panels.built)      # the grid shows the first host
    qtbot.wait(100)
    assert len(board.panels.built) <= 3                            # not a hundred 8-graph panels
    assert "node080" not in board.panels.built
    # scrolled to far down the list: that host's panel is built, with every sample since the start
    slot = board.slots["node080"]
    board.grid_scroll.verticalScrollBar().setValue(slot.geometry().top())
    qtbot.waitUntil(lambda: "node080" in board.panels.built)
    panel = board.panels["node080"]
    board.frame()
    x, util = panel.plots["util"].curve("util").getOriginalDataset()
    assert len(x) == 30 and set(util) == {80.0}
    assert panel.header.status_label.text() == "30 samples"
    assert len(board.panels.built) <= 6


def test_the_overlay_opened_at_once_draws_only_the_worst_hosts(qtbot) -> None:
    board = Dashboard()
    qtbot.addWidget(board)
    board.resize(1200, 700)
    board.show()
    for i in range(40):
        name = f"node{i:02d}"
        board.add_host(name)
        board.add_sample(name, _point(1000.0, util=float(i), busy=5.0))
    board.set_mode("overlay")     # before the overview's first ranking
    assert board.mode == "overlay"
    assert sorted(board.overlay.plots[0].curve_keys()) == [f"node{i:02d}" for i in range(40 - TOP_N, 40)]
    qtbot.wait(1200)              # the ranking comes round: the user's choice of view stands
    assert board.mode == "overlay"
