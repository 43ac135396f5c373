"""One turn of the mouse wheel moves one thing where scroll areas nest: at 200 % on a 1280x720 screen the
main window's page scrolls, and the Live tab's grid of charts scrolls inside it."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from app.gui.window_state import fit_default_size, keep_inside_screen
from tests.fixtures.telemetry import synthetic_samples
from widgets.wheel_scroll import GESTURE_GAP_S, WheelLatch

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0
NOTCH = -120   # one notch down


def wheel(widget, delta: int = NOTCH) -> None:
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    QApplication.sendEvent(widget, QWheelEvent(centre, widget.mapToGlobal(centre), QPoint(0, 0), QPoint(0, delta),
                                               Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                               Qt.ScrollPhase.NoScrollPhase, False))


def new_turn(window) -> None:
    """A pause: the next notch starts a new turn of the wheel."""
    latch = QApplication.instance().findChild(WheelLatch)
    if latch is not None:
        latch.end_turn()


@pytest.fixture
def small_window(make_window, qtbot):
    window = make_window()
    screen = QRect(0, 0, 1280 // 2, 720 // 2)   # 1280x720 at 200 %: the layout's logical screen
    fit_default_size(window, screen)
    keep_inside_screen(window, screen)
    dashboard = window.live.live.dashboard
    for index, host in enumerate(("db-alpha", "db-beta", "db-gamma")):   # three hosts: the grid scrolls
        dashboard.add_samples(host, synthetic_samples(60, t0=T0, seed=index + 1))
        window.live.live.progress.add_host(host, 600.0, "disk")   # a test runs on each: its progress row
    window.live.live.progress.show()
    window.tabs.setCurrentWidget(window.live.live)
    for _ in range(5):
        QApplication.processEvents()
        dashboard.frame()
    latch = QApplication.instance().findChild(WheelLatch)
    if latch is not None:   # the notches below are one turn, however slowly a loaded machine sends them
        latch.gesture_gap_s = 3600.0
    yield window
    if latch is not None:
        latch.gesture_gap_s = GESTURE_GAP_S


def test_one_turn_of_the_wheel_moves_one_thing_and_the_next_turn_moves_on(small_window):
    window = small_window
    page = window.centralWidget().verticalScrollBar()
    grid = window.live.live.dashboard.grid_scroll
    inner = grid.verticalScrollBar()
    assert page.maximum() > 0 and inner.maximum() > 0, "at 200 % both the page and the grid scroll"
    chart = window.live.live.dashboard.panels["db-alpha"].plots["iops"]

    wheel(chart.viewport())   # a notch over a chart: the grid moves, the page stays
    assert inner.value() > 0 and page.value() == 0
    for _ in range(200):      # the same turn goes on past the grid's end: still only the grid
        wheel(chart.viewport())
        wheel(grid.viewport())   # over the grid between the charts (what Qt hands on from a label)
    assert inner.value() == inner.maximum() and page.value() == 0, "the page jumped in the grid's turn"

    new_turn(window)          # the next turn: the grid is at its end, so the page moves (the wheel is not stuck)
    wheel(chart.viewport())
    assert page.value() > 0 and inner.value() == inner.maximum()
    moved = page.value()
    wheel(grid.viewport(), -NOTCH)   # back up within that turn: the page, not the grid under the pointer
    assert page.value() < moved and inner.value() == inner.maximum()

    new_turn(window)          # a new turn up over the grid: the grid scrolls back first
    wheel(grid.viewport(), -NOTCH)
    assert inner.value() < inner.maximum()
