"""The main window opens on its Facts tab without making the charts of the others: Graphs and Compare, the
Overlay's plots and the results view are made when first shown or used, and then work as if made at once."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from app.gui.compare_tab import CompareTab
from app.gui.replay import ReplayView
from tests.fixtures.comparison_runs import store_two_servers
from widgets.live_plot import LivePlot

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parents[2]


def test_only_the_tab_shown_is_made_at_start_and_the_others_on_first_show(make_window, workbench, qtbot):
    ids = store_two_servers(workbench.store)
    window = make_window()
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles[0] == "Facts" and titles[2:] == ["Live", "Graphs", "Compare"]
    assert window.tabs.currentIndex() == 0
    # nothing on screen holds a chart: the Live tab's Overlay and the hidden tabs have none yet
    assert not window.findChildren(ReplayView) and not window.findChildren(CompareTab)
    assert window.live.live.dashboard.overlay._plots == []
    assert window.live.runs_pane._results is None
    assert not [plot for plot in window.findChildren(LivePlot)]

    qtbot.waitUntil(lambda: window.tabs.tabText(1) == f"Runs ({len(ids)})")
    window.tabs.setCurrentIndex(4)   # Compare, chosen by its tab: made now, in its place, with the stored runs
    QApplication.processEvents()
    compare = window.tabs.widget(4)
    assert isinstance(compare, CompareTab) and window.tabs.currentWidget() is compare
    assert window.tabs.tabText(4) == "Compare" and window.compare is compare
    assert {run.id for run in compare.picker.shown_runs()} == set(ids.values())
    assert window.tabs.count() == len(titles)

    window.live.open_runs([ids["old_disk"]], replay=False)   # Open graphs: the Graphs tab is made and shown
    qtbot.waitUntil(lambda: isinstance(window.tabs.currentWidget(), ReplayView), timeout=20_000)
    graphs = window.tabs.currentWidget()
    assert window.tabs.indexOf(graphs) == 3 and window.tabs.tabText(3) == "Graphs" and graphs is window.live.graphs
    assert list(graphs.dashboard.series) == [f"old-server #{ids['old_disk']}"]
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())][2:] == ["Live", "Graphs", "Compare"]


def test_a_comparison_left_unsaved_is_still_asked_about_and_an_unmade_tab_is_not(make_window, workbench, qtbot):
    ids = store_two_servers(workbench.store)
    window = make_window()
    assert window.unsaved_work() == ""          # Compare never opened: nothing to lose, and it stays unmade
    assert not window.findChildren(CompareTab)
    window.compare_runs([ids["old_disk"], ids["new_disk"]])
    qtbot.waitUntil(lambda: window.compare.comparison is not None, timeout=20_000)
    assert "not saved" in window.unsaved_work()


def test_the_window_paints_before_the_charts_library_loads_and_the_live_tab_follows(make_window, qtbot):
    """What the window's first paint waits for holds no chart library (pyqtgraph, numpy) and no Alembic; the
    Live tab (with the Shared storage action) is made right after that paint, without being shown."""
    code = ("import sys; import app.gui.main_window; "
            "print(sorted(m for m in ('pyqtgraph', 'numpy', 'alembic', 'scipy') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr
    window = make_window()
    qtbot.waitUntil(lambda: window.live.live_made, timeout=30_000)
    assert window.tabs.currentIndex() == 0 and window.tabs.tabText(2) == "Live"
    assert window.tabs.widget(2) is window.live.live
    assert window.findChild(QAction, "sharedStorageAction") in window.tests_toolbar.actions()
