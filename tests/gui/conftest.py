"""GUI test set-up: offscreen Qt, a MainWindow on the tmp Workbench, and checks for leaked work.

Like napari's suite, a test fails when it leaves a top-level widget alive or a worker running.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

GUI_DIR = Path(__file__).parent


@pytest.fixture(autouse=True)
def no_leaked_widgets_or_workers(request: pytest.FixtureRequest) -> Iterator[None]:
    """Set up before qtbot, so it checks after qtbot closed the widgets it was given."""
    if GUI_DIR not in Path(str(request.node.path)).parents:
        yield
        return
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication

    request.getfixturevalue("qapp")
    before = {id(w) for w in QApplication.topLevelWidgets()}
    yield
    from app.gui.workers import live_pools

    busy = [pool for pool in live_pools() if not pool.wait(20_000) or pool.active_count()]
    for _ in range(3):   # deleteLater chains: a dialog's children go one round after it
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()
    leaked = [w for w in QApplication.topLevelWidgets() if id(w) not in before and w.isVisible()]
    for widget in leaked:
        widget.close()
        widget.deleteLater()
    assert not busy, f"workers still running after the test: {[p.running_keys() for p in busy]}"
    assert not leaked, f"top-level widgets left open: {[type(w).__name__ for w in leaked]}"


@pytest.fixture
def make_window(qtbot, workbench):
    """Open a MainWindow on the tmp Workbench and wait until its host list is loaded and its Live tab made."""
    from app.gui.main_window import MainWindow

    windows = []

    def make() -> MainWindow:
        window = MainWindow(workbench)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitUntil(lambda: window.host_list.count() >= 1 and window.pool.active_count() == 0,
                        timeout=10_000)
        qtbot.waitUntil(lambda: window.live.live_made, timeout=30_000)   # made just after the first paint
        windows.append(window)
        return window

    yield make
    from widgets.host_colours import set_known_hosts

    set_known_hosts(())   # the window's inventory decides colours: the next test starts without it
    for window in windows:
        # close = cancel what is queued and wait for what runs: nothing may outlive the window
        window.close()
        assert window.pool.active_count() == 0


@pytest.fixture
def window(make_window):
    return make_window()


def wait_idle(qtbot, window, timeout: int = 10_000) -> None:
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=timeout)


def charts_made(qtbot, board, timeout: int = 20_000) -> None:
    """Wait until every built host panel of a dashboard has all its charts on screen (a stored run's are made
    one per event-loop pass)."""
    def made() -> bool:
        panels = list(board.panels.built.values())
        shown = board.isVisible()   # a dashboard on a tab not shown has nothing on screen
        return bool(panels) and all(p.complete and all(plot.on_screen() or not shown for plot in p.plots.values())
                                    for p in panels)

    qtbot.waitUntil(made, timeout=timeout)
