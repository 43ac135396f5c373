"""The main window's chrome: unique shortcuts, nothing cut off at 1280x720, the Runs tab's clicks,
right-click menus, closing with unsaved work, and the window's size and splitters remembered."""
from __future__ import annotations

from collections import defaultdict

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton, QApplication

from resources import resource_text
from tests.fixtures.comparison_runs import store_two_servers
from tests.gui.clipping import text_room
from widgets.theme import DARK, LIGHT, stylesheet_for

pytestmark = pytest.mark.gui


def wait_idle(qtbot, window, timeout: int = 20_000) -> None:
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=timeout)


def bindings(window) -> dict[str, list[str]]:
    """Every key sequence bound in the window -> the actions and shortcuts that claim it."""
    bound: dict[str, list[str]] = defaultdict(list)
    for action in window.findChildren(QAction):
        for sequence in action.shortcuts():
            if not sequence.isEmpty():
                bound[sequence.toString(QKeySequence.SequenceFormat.PortableText)].append(action.text())
    for shortcut in window.findChildren(QShortcut):
        for sequence in shortcut.keys():   # noqa: SIM118 (QShortcut.keys(), not a dict)
            if not sequence.isEmpty():
                bound[sequence.toString(QKeySequence.SequenceFormat.PortableText)].append(shortcut.objectName())
    return bound


def test_no_key_is_bound_twice(window):
    bound = bindings(window)
    assert bound, "the window binds no shortcut at all"
    twice = {key: names for key, names in bound.items() if len(names) > 1}
    assert not twice, f"bound more than once: {twice}"


def test_f5_refreshes_and_ctrl_g_gathers_facts(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.host_list.select_host("local")
    with qtbot.waitSignal(window.refresh_action.triggered, timeout=2_000):
        qtbot.keyClick(window.host_list, Qt.Key.Key_F5)
    wait_idle(qtbot, window)
    assert window.gather_action.shortcut().toString() == "Ctrl+G"
    with qtbot.waitSignal(window.gather_action.triggered, timeout=2_000):
        qtbot.keyClick(window.host_list, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, window, 60_000)


def test_delete_in_the_runs_table_does_not_remove_a_host(window, workbench, qtbot, monkeypatch):
    asked = []
    monkeypatch.setattr(window, "confirm", lambda title, text: asked.append(title) or False)
    store_two_servers(workbench.store)
    window.reload_runs()
    wait_idle(qtbot, window)
    window.tabs.setCurrentWidget(window.live.runs_pane)
    window.runs_table.selectRow(0)
    window.runs_table.setFocus()
    qtbot.keyClick(window.runs_table, Qt.Key.Key_Delete)
    assert asked == []



def cut_off_buttons(window) -> list[str]:
    cut = []
    for button in window.findChildren(QAbstractButton):
        text = button.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
        if not text or not button.isVisible():
            continue
        needed = button.fontMetrics().horizontalAdvance(text)
        room = text_room(button)
        if needed > room:
            cut.append(f"{text!r} ({button.objectName() or type(button).__name__}): needs {needed} px, has {room}")
    return cut


@pytest.fixture
def app_stylesheet(qapp):
    """The stylesheet the application runs with (its paddings take room from the text)."""
    qapp.setStyleSheet(resource_text("style.qss"))
    yield
    qapp.setStyleSheet("")


@pytest.mark.parametrize("scheme", [LIGHT, DARK])
def test_every_visible_button_text_fits_at_1280x720_on_each_tab(window, workbench, qtbot, qapp, scheme,
                                                                app_stylesheet):
    qapp.setStyleSheet(stylesheet_for(resource_text("style.qss"), scheme))
    ids = store_two_servers(workbench.store)
    window.reload_runs()
    wait_idle(qtbot, window)
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280)
    window.compare_runs([ids["old_disk"], ids["new_disk"]])    # the Compare tab with a comparison shown
    qtbot.waitUntil(lambda: window.compare.comparison is not None, timeout=20_000)
    window.runs_table.select_runs([ids["new_disk"]])           # the Runs tab with a run's results shown
    qtbot.waitUntil(window.live.runs_pane.results_shown, timeout=20_000)
    problems = {}
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        QApplication.processEvents()
        cut = cut_off_buttons(window)
        if cut:
            problems[window.tabs.tabText(index)] = cut
    wait_idle(qtbot, window)
    assert not problems, problems


def row_point(table, row: int) -> QPoint:
    return table.visualRect(table.model().index(row, 1)).center()


def test_runs_click_shows_results_double_click_opens_graphs_and_the_list_stays(window, workbench, qtbot):
    store_two_servers(workbench.store)
    window.resize(1280, 720)
    window.reload_runs()
    wait_idle(qtbot, window)
    pane = window.live.runs_pane
    window.tabs.setCurrentWidget(pane)
    table = window.runs_table
    qtbot.waitUntil(lambda: table.model().rowCount() == 6)
    height = table.height()
    assert height >= 8 * table.rowHeight(0), "the run list shows fewer than 8 rows at 720 px"
    assert not pane.results_shown()

    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=row_point(table, 0))
    qtbot.waitUntil(pane.results_shown, timeout=10_000)
    assert "Run #6" in pane.results.title.text()
    assert table.height() == height, "showing results moved the list"

    # the next click lands on another run (a CPU run, with telemetry), not in the results
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=row_point(table, 2))
    qtbot.waitUntil(lambda: "Run #4" in pane.results.title.text(), timeout=10_000)

    with qtbot.waitSignal(pane.open_graphs, timeout=2_000) as opened:
        qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=row_point(table, 2))
    assert opened.args == [[4]]
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is window.live.graphs, timeout=10_000)
    wait_idle(qtbot, window)


def test_host_menu_offers_the_host_actions(window, qtbot):
    window.host_list.select_host("local")
    menu = window.host_menu()
    texts = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert texts == ["Run test…", "Monitor", "Gather facts", "Edit…", "Remove"]
    enabled = {a.text(): a.isEnabled() for a in menu.actions()}
    # local cannot be edited or removed; it can be tested, monitored and asked for facts
    assert enabled["Gather facts"] and enabled["Monitor"] and enabled["Run test…"]
    assert not enabled["Edit…"] and not enabled["Remove"]
    menu.deleteLater()


def test_runs_menu_exports_and_deletes_the_selected_runs(window, workbench, qtbot, monkeypatch, tmp_path):
    ids = store_two_servers(workbench.store)
    window.reload_runs()
    wait_idle(qtbot, window)
    window.runs_table.select_runs([ids["old_cpu"], ids["new_cpu"]])
    menu = window.runs_menu()
    actions = {a.text(): a for a in menu.actions() if not a.isSeparator()}
    assert list(actions) == ["Show results", "Open graphs", "Replay", "Compare selected", "Export to JSON…",
                             "Delete…"]
    assert not actions["Show results"].isEnabled()   # two runs: results are shown one run at a time
    assert actions["Compare selected"].isEnabled()

    out = tmp_path / "two.json"
    window.runs_actions.export([ids["old_cpu"], ids["new_cpu"]], str(out))
    wait_idle(qtbot, window)
    assert out.is_file() and window.statusBar().currentMessage() == f"Exported 2 runs to {out}"

    asked = []
    monkeypatch.setattr(window, "confirm", lambda title, text: asked.append(text) or True)
    actions["Delete…"].trigger()
    wait_idle(qtbot, window)
    assert "cannot be undone" in asked[0]
    assert workbench.find_run(ids["old_cpu"]) is None and workbench.find_run(ids["new_cpu"]) is None
    assert workbench.find_run(ids["old_disk"]) is not None
    qtbot.waitUntil(lambda: window.runs_table.model().rowCount() == 4)
    menu.deleteLater()


def compared(window, workbench, qtbot) -> None:
    ids = store_two_servers(workbench.store)
    window.reload_runs()
    wait_idle(qtbot, window)
    window.compare_runs([ids["old_disk"], ids["new_disk"]])
    qtbot.waitUntil(lambda: window.compare.comparison is not None, timeout=20_000)


def test_closing_with_an_unsaved_comparison_asks_first(window, workbench, qtbot):
    compared(window, workbench, qtbot)
    assert window.request_close() is False
    box = window.close_guard.box
    assert box is not None and box.isVisible()
    assert "not saved" in box.informativeText()
    keep = next(b for b in box.buttons() if b.text() == "Keep working")
    qtbot.mouseClick(keep, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.close_guard.box is None)
    assert window.isVisible()

    window.request_close()
    box = window.close_guard.box
    qtbot.mouseClick(window.close_guard.close_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=20_000)
    assert not box.isVisible()


def test_closing_after_saving_the_comparison_asks_nothing(window, workbench, qtbot):
    compared(window, workbench, qtbot)
    window.compare.save_comparison()
    wait_idle(qtbot, window)
    assert window.unsaved_work() == ""
    assert window.request_close() is True
    assert window.close_guard.box is None and not window.isVisible()


def test_window_size_and_splitters_are_restored(make_window, workbench, qtbot):
    first = make_window()
    qtbot.waitUntil(lambda: first.live.live_made, timeout=30_000)   # the window has finished opening
    qtbot.waitUntil(lambda: first.splitter.width() >= first.splitter.minimumSizeHint().width())   # laid out
    # the offscreen screen is 800 px wide and a restored window is kept inside its screen: the height tells
    first.resize(700, 650)
    qtbot.waitUntil(lambda: first.height() == 650)
    first.splitter.setSizes([300, first.splitter.width() - 300])
    first.live.runs_pane.splitter.setSizes([150, 300])
    first.compare.view.transpose_box.setChecked(True)
    main_sizes = first.splitter.sizes()
    first.close()
    assert (workbench.home / "window.ini").is_file()

    second = make_window()
    assert (second.width(), second.height()) == (700, 650)
    # once it has finished opening: the Live tab's page, made after the first paint, needs more than 700 px
    qtbot.waitUntil(lambda: second.live.live_made, timeout=30_000)
    qtbot.waitUntil(lambda: second.splitter.sizes() == main_sizes, timeout=5_000)   # laid out again
    runs = second.live.runs_pane.splitter.sizes()
    assert runs[0] < runs[1], runs
    assert second.compare.view.transpose_box.isChecked() and second.compare.view.table.transposed


def test_the_close_question_names_the_hosts_whose_test_would_be_cancelled():
    from app.gui.close_guard import what_would_be_lost

    assert what_would_be_lost([], False) == ""
    text = what_would_be_lost(["db-02", "db-01"], True)
    assert "A test is running on db-01, db-02: closing cancels it" in text
    assert "not saved" in text


def test_closing_during_a_test_asks_then_cancels_and_stores_it(window, workbench, qtbot):
    from app.engine.orchestrator import RunRequest

    live = window.live.live
    assert live.run_tests([RunRequest("local", "idle", {"phases": [["m", "Measure", 60.0]]})]) == ["local"]
    qtbot.waitUntil(lambda: bool(workbench.store.runs.list(test="idle")), timeout=30_000)   # the run began
    assert window.request_close() is False
    box = window.close_guard.box
    assert "A test is running on local: closing cancels it" in box.informativeText()
    qtbot.mouseClick(window.close_guard.close_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=30_000)
    assert not live.runs.running_hosts()
    [run] = workbench.store.runs.list(test="idle")
    assert run.status == "cancelled", run.status


# a popup asks the platform to raise it and grab the keyboard: the offscreen platform only says it cannot
@pytest.mark.qt_log_ignore("This plugin does not support (raise|grabbing the keyboard)")
def test_right_click_on_a_host_opens_its_menu(window, qtbot):
    host_list = window.host_list
    point = host_list.visualItemRect(host_list.item(0)).center()
    host_list.customContextMenuRequested.emit(point)   # what a right click (or the Menu key) sends
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None)
    menu = QApplication.activePopupWidget()
    assert menu.objectName() == "hostMenu" and "Gather facts" in [a.text() for a in menu.actions()]
    menu.close()


def test_gather_facts_acts_on_every_selected_host(window, workbench, qtbot):
    from remote.hostspec import HostSpec
    from widgets.host_groups import select_hosts
    from widgets.host_list import STATUS_CONNECTING

    # two hosts nobody listens for (a closed loopback port): each gets its own answer, refused
    for name in ("db-a", "db-b"):
        workbench.add_host(HostSpec(name=name, address="127.0.0.1", port=9))
    window.refresh()
    qtbot.waitUntil(lambda: window.host_list.count() == 3 and window.pool.active_count() == 0, timeout=10_000)
    assert select_hosts(window.host_list, ["local", "db-a", "db-b"]) == ["local", "db-a", "db-b"]
    window.gather_action.trigger()
    assert {window.host_list.status(h) for h in ("local", "db-a", "db-b")} == {STATUS_CONNECTING}
    wait_idle(qtbot, window, timeout=60_000)
    assert window.host_list.status("local") == "ok"
    for name in ("db-a", "db-b"):
        assert window.host_list.status(name) == "error" and window.host_list.message(name), name
    assert workbench.latest_facts_taken("local") is not None


def test_facts_gatherings_are_not_counted_or_listed_as_runs(window, workbench, qtbot):
    ids = store_two_servers(workbench.store)
    assert window.gather_facts("local")
    wait_idle(qtbot, window, timeout=60_000)
    assert workbench.store.runs.list(test="facts")   # stored, as the host's record
    window.reload_runs()
    wait_idle(qtbot, window)
    assert window.tabs.tabText(1) == f"Runs ({len(ids)})"
    model = window.runs_table.model()
    tests = {str(model.index(r, 2).data()) for r in range(model.rowCount())}
    assert len(tests) >= 2 and not any("facts" in text.lower() for text in tests), tests
