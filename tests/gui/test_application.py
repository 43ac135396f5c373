"""Start-up checks (display, xcb-cursor) and the crash dialog."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtGui import QGuiApplication

from app.gui import application
from app.gui.application import DISPLAY_HINT, XCB_CURSOR_HINT, display_problem
from app.gui.crash_dialog import CrashDialog, show_crash

pytestmark = pytest.mark.gui


def found(_name: str) -> str:
    return "libxcb-cursor.so.0"


def missing(_name: str) -> None:
    return None


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, DISPLAY_HINT),
        ({"DISPLAY": ":0"}, None),
        ({"WAYLAND_DISPLAY": "wayland-0"}, None),
        ({"QT_QPA_PLATFORM": "offscreen"}, None),
        ({"QT_QPA_PLATFORM": "vnc:size=1280x800"}, None),
        ({"QT_QPA_PLATFORM": "xcb"}, DISPLAY_HINT),
        ({"QT_QPA_PLATFORM": "wayland", "DISPLAY": ":0"}, DISPLAY_HINT),
        ({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, None),
    ],
)
def test_display_problem(environ, expected):
    assert display_problem(environ, platform="linux", find_library=found) == expected


def test_missing_xcb_cursor_names_the_package():
    problem = display_problem({"DISPLAY": ":0"}, platform="linux", find_library=missing)
    assert problem == XCB_CURSOR_HINT and "libxcb-cursor0" in problem
    # Wayland does not need it
    assert display_problem({"WAYLAND_DISPLAY": "w"}, platform="linux", find_library=missing) is None


def test_no_check_outside_linux():
    assert display_problem({}, platform="darwin", find_library=missing) is None


def test_run_gui_without_a_display_prints_a_hint_and_returns_1(monkeypatch, capsys):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    factory_called = []
    assert application.run_gui(lambda: factory_called.append(1)) == 1
    assert "xvfb-run benchbay" in capsys.readouterr().err
    assert factory_called == []


def test_crash_dialog_shows_the_traceback_and_copies_it(qtbot):
    try:
        raise ValueError("boom")
    except ValueError as exc:
        from app.gui.crash_dialog import format_exception

        details = format_exception(type(exc), exc, exc.__traceback__)
    dialog = CrashDialog(details)
    qtbot.addWidget(dialog)
    assert dialog.details.isReadOnly()
    assert "ValueError: boom" in dialog.details.toPlainText()
    assert "Traceback" in dialog.details.toPlainText()
    dialog.copy_button.click()
    assert "ValueError: boom" in QGuiApplication.clipboard().text()


def test_excepthook_shows_the_crash_dialog(qtbot, monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(CrashDialog, "exec", lambda dialog: shown.append(dialog.details.toPlainText()) or 0)
    try:
        raise RuntimeError("unexpected")
    except RuntimeError as exc:
        show_crash(type(exc), exc, exc.__traceback__)
    assert len(shown) == 1 and "RuntimeError: unexpected" in shown[0]
    assert "RuntimeError: unexpected" in capsys.readouterr().err


def test_the_window_shows_before_the_store_opens_and_the_main_window_takes_its_place(qapp, tmp_path, monkeypatch):
    import signal
    import threading

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.workbench import Workbench

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)   # run_gui installs its crash dialog
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    seen: dict[str, object] = {}

    def factory() -> Workbench:
        # the store opens in a thread while the start window is already on the screen
        seen["thread"] = threading.current_thread() is threading.main_thread()
        seen["start_shown"] = [type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible()]
        return Workbench(home=tmp_path / "home", db_url=f"sqlite:///{tmp_path / 'store.sqlite3'}")

    def poll() -> None:
        shown = [type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible()]
        if "MainWindow" in shown:
            seen["after"] = shown
            QApplication.instance().quit()
        else:
            QTimer.singleShot(20, poll)

    QTimer.singleShot(0, poll)
    try:
        assert application.run_gui(factory) == 0
    finally:
        qapp.setStyleSheet("")
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert seen["thread"] is False and "StartWindow" in seen["start_shown"]
    assert seen["after"] == ["MainWindow"]   # the start window gave way
