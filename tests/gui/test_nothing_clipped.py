"""Nothing cut off at 1280x720, 1366x768 and 1920x1080, at 100 % and at 200 %: every window and dialog fits
the screen and every label, button, list/tree/table item and header section shows its whole text (the close
question, the run dialog, the host list and the runs table included).

At 200 % Qt lays a window out in logical pixels, half the screen's: a 1920x1080 screen at 200 % is a
960x540 screen to the layout, with the same fonts. The windows are fitted to that logical screen as they
fit themselves to a real one (fit_default_size, fit_to_screen), then walked.
"""
from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from app.gui.run_results import RESULTS_SIZE, RunResultsWindow, load_run_results
from app.gui.window_state import fit_default_size, keep_inside_screen
from resources import resource_text
from storage.records import HostRecord
from tests.fixtures.comparison_runs import store_two_servers
from tests.fixtures.telemetry import synthetic_samples
from tests.gui.app_style import restyle_app
from tests.gui.clipping import cut_off_texts, hidden_toolbar_actions, off_screen
from widgets.screen_fit import fit_to_screen
from widgets.theme import DARK, LIGHT, stylesheet_for

pytestmark = pytest.mark.gui
SCREENS = [(1280, 720), (1366, 768), (1920, 1080)]
SCALES = [1, 2]
T0 = 1_700_000_000.0


@pytest.fixture
def styled(qapp, request):
    """The app's style sheet for the test; asked for before the window (tests.gui.app_style)."""
    qapp.setStyleSheet(stylesheet_for(resource_text("style.qss"), request.param))
    yield request.param
    restyle_app("")


def settle(qtbot, window) -> None:
    for _ in range(3):
        QApplication.processEvents()
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=20_000)


def two_hosts_live(window) -> None:
    dashboard = window.live.live.dashboard
    for index, host in enumerate(("db-alpha", "db-beta")):
        dashboard.add_samples(host, synthetic_samples(120, t0=T0 + 0.4 * index, seed=index + 1))
        for seq, (t, label) in enumerate(((0.5, "Writing the test file"), (30.5, "Random read 4 KiB"),
                                          (60.5, "Random read 1 MiB"), (90.5, "Sync write 4 KiB")), start=2):
            dashboard.add_event(host, {"seq": seq, "t": T0 + t, "type": "phase_start", "label": label})
    for _ in range(8):
        dashboard.frame()
        QApplication.processEvents()


def problems_of(top, screen: QRect) -> list[str]:
    QApplication.processEvents()
    found = [off_screen(top, screen)] if off_screen(top, screen) else []
    return found + cut_off_texts(top) + hidden_toolbar_actions(top)


# every screen and scale, light and dark
CASES = [(size, scale, scheme) for scheme in (LIGHT, DARK) for size in SCREENS for scale in SCALES]


@pytest.mark.parametrize(("size", "scale", "styled"), CASES, indirect=["styled"],
                         ids=[f"{w}x{h}@{scale * 100}%-{scheme}" for (w, h), scale, scheme in CASES])
def test_every_window_and_dialog_fits_the_screen_with_every_text_whole(styled, make_window, workbench, qtbot,
                                                                       size, scale):
    screen = QRect(0, 0, size[0] // scale, size[1] // scale)
    ids = store_two_servers(workbench.store)
    for name, address in (("db-alpha", "10.20.30.41"), ("db-beta", "10.20.30.42")):
        workbench.store.hosts.add(HostRecord(name=name, address=address, user="bench"))
    window = make_window()
    fit_default_size(window, screen)
    keep_inside_screen(window, screen)
    window.reload_runs()
    settle(qtbot, window)
    two_hosts_live(window)
    window.compare_runs([ids["old_disk"], ids["new_disk"]])
    qtbot.waitUntil(lambda: window.compare.comparison is not None, timeout=20_000)
    window.runs_table.select_runs([ids["new_disk"]])
    qtbot.waitUntil(window.live.runs_pane.results_shown, timeout=20_000)
    problems: dict[str, list[str]] = {}
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        found = problems_of(window, screen)
        if found:
            problems[f"main window, {window.tabs.tabText(index)} tab"] = found

    results = RunResultsWindow(window)
    qtbot.addWidget(results)
    results.add_results(load_run_results(workbench, ids["new_disk"]))
    fit_to_screen(results, RESULTS_SIZE, screen)
    results.show()
    problems["results window"] = problems_of(results, screen)
    results.close()

    dialog = window.live.open_run_dialog()
    fit_to_screen(dialog, dialog.wanted_size, screen)
    problems["run dialog"] = problems_of(dialog, screen)
    # after Start: a host's row says where its run is stored; the dialog keeps its size
    before = dialog.size()
    dialog.progress.show()
    dialog.progress.add_host("db-alpha", expected=60.0, test="disk")
    dialog.progress.add_event("db-alpha", {"type": "repeat", "index": 3, "of": 3, "group": "g"})
    dialog.progress.set_outcome("db-alpha", "done", run_id=12345)
    problems["run dialog after a run"] = problems_of(dialog, screen)
    assert dialog.size() == before, "the run dialog changed size after Start"
    dialog.close()

    window.close_guard.ask("A test is running on db-alpha, db-beta, local: closing cancels it and stores it as "
                           "cancelled.\n\nThe comparison on the Compare tab is not saved: click “Save comparison” "
                           "to keep it.")
    box = window.close_guard.box
    fit_to_screen(box, box.size(), screen)
    problems["close question"] = problems_of(box, screen)
    box.reject()

    export = window.compare.exports.open_pdf_dialog()
    fit_to_screen(export, export.size(), screen)
    problems["export dialog"] = problems_of(export, screen)
    export.reject()
    problems = {where: found for where, found in problems.items() if found}
    assert not problems, problems
