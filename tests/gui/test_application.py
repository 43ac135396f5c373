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



START_CHILD = r"""
import sys, threading
sys.path.insert(0, ROOT)
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from app.gui import application
from app.workbench import Workbench

app = QApplication(sys.argv[:1])
seen = {}

def factory():
    # the store opens in a thread while the start window is already on the screen
    seen["main thread"] = threading.current_thread() is threading.main_thread()
    seen["shown"] = sorted(type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible())
    return Workbench(home=HOME + "/home", db_url="sqlite:///" + HOME + "/store.sqlite3")

def poll():
    shown = sorted(type(w).__name__ for w in QApplication.topLevelWidgets() if w.isVisible())
    if "MainWindow" in shown:
        seen["after"] = shown
        app.quit()
    else:
        QTimer.singleShot(20, poll)

QTimer.singleShot(0, poll)
code = application.run_gui(factory)
print("RESULT", code, seen["main thread"], ",".join(seen["shown"]), ",".join(seen["after"]), flush=True)
"""


def test_the_window_shows_before_the_store_opens_and_the_main_window_takes_its_place(tmp_path):
    import os
    import subprocess
    from pathlib import Path

    # a process of its own: run_gui sets up the application (style, signals, excepthook) as a start does
    root = str(Path(__file__).resolve().parents[2])
    code = f"ROOT = {root!r}\nHOME = {str(tmp_path)!r}\n" + START_CHILD
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    result = next((line.split() for line in done.stdout.splitlines() if line.startswith("RESULT")), None)
    assert result is not None, done.stderr[-2000:]
    _word, exit_code, main_thread, shown, after = result
    assert exit_code == "0" and main_thread == "False"
    assert "StartWindow" in shown.split(",")      # painted before the store and the main window's code
    assert after == "MainWindow"                  # the start window gave way
