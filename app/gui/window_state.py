"""The window's size, position and splitter positions, kept in window.ini under the Benchbay home.

Splitters are saved by object name, so a splitter without one is not remembered; so are the
checkable buttons marked with the property "remembered" (the Compare table's "Servers as columns"). A file that
cannot be written (read-only home) only means the next start uses the defaults.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSettings
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QAbstractButton, QMainWindow, QSplitter, QWidget

STATE_FILE = "window.ini"
REMEMBERED = "remembered"   # the property that marks a checkable button whose state is kept
DEFAULT_SIZE = (1240, 780)
FRAME_SIDES = 8
TITLE_BAR = 40   # the window manager's frame is added to the size asked for: leave it room


def _settings(home: Path) -> QSettings:
    return QSettings(str(Path(home) / STATE_FILE), QSettings.Format.IniFormat)


def _bytes(value: object) -> QByteArray | None:
    if isinstance(value, QByteArray) and not value.isEmpty():
        return value
    if isinstance(value, (bytes, bytearray)) and value:
        return QByteArray(bytes(value))
    return None


def fit_default_size(window: QMainWindow, free: QRect | None = None) -> None:
    """The default size, shrunk to the screen's free area (a 1280x720 projector loses ~60 px to panels),
    with room for the window's title bar, so the status bar stays on the screen."""
    width, height = DEFAULT_SIZE
    screen = window.screen() or QGuiApplication.primaryScreen()
    # offscreen rendering has a made-up screen: nothing to fit, the default size stands
    if free is None and screen is not None and QGuiApplication.platformName() != "offscreen":
        free = screen.availableGeometry()
    if free is not None:
        width, height = min(width, free.width() - FRAME_SIDES), min(height, free.height() - TITLE_BAR)
        window.move(free.topLeft())
    window.resize(width, height)


def keep_inside_screen(window: QMainWindow, free: QRect | None = None) -> None:
    """Once shown (the frame is known): shrink and move a window whose frame runs off its screen."""
    screen = window.screen()
    offscreen = QGuiApplication.platformName() == "offscreen"   # a made-up screen, as in fit_default_size
    if free is None and (screen is None or offscreen):
        return
    if window.isMaximized() or window.isFullScreen():
        return
    free = free if free is not None else screen.availableGeometry()
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    if frame.width() > free.width() or frame.height() > free.height():
        window.resize(min(window.width(), free.width() - extra_w), min(window.height(), free.height() - extra_h))
        frame = window.frameGeometry()
    if not free.contains(frame):
        window.move(max(free.x(), min(frame.x(), free.right() - frame.width() + 1)),
                    max(free.y(), min(frame.y(), free.bottom() - frame.height() + 1)))


def restore_window(window: QMainWindow, home: Path) -> bool:
    """Geometry, toolbar state and splitters as saved; False when nothing was saved (defaults stay)."""
    settings = _settings(home)
    geometry = _bytes(settings.value("window/geometry"))
    if geometry is None or not window.restoreGeometry(geometry):
        return False
    state = _bytes(settings.value("window/state"))
    if state is not None:
        window.restoreState(state)
    restore_parts(window, home)
    return True


def restore_parts(top: QWidget, home: Path) -> None:
    """The saved splitters and remembered buttons inside `top`: a tab made after the window opened has its
    own restored when it is made."""
    settings = _settings(home)
    for splitter in top.findChildren(QSplitter):
        name = splitter.objectName()
        saved = _bytes(settings.value(f"splitters/{name}")) if name else None
        if saved is not None:
            splitter.restoreState(saved)
    for button in _remembered(top):
        checked = settings.value(f"toggles/{button.objectName()}")
        if checked is not None:
            button.setChecked(str(checked).lower() == "true")


def _remembered(window: QWidget) -> list[QAbstractButton]:
    return [b for b in window.findChildren(QAbstractButton)
            if b.property(REMEMBERED) and b.isCheckable() and b.objectName()]


def save_window(window: QMainWindow, home: Path) -> None:
    settings = _settings(home)
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/state", window.saveState())
    for splitter in window.findChildren(QSplitter):
        # a part folded away (the Compare tab's run picker) has no size: keep the positions saved before
        folded = any(splitter.widget(i).isHidden() for i in range(splitter.count()))
        if splitter.objectName() and not folded:
            settings.setValue(f"splitters/{splitter.objectName()}", splitter.saveState())
    for button in _remembered(window):
        settings.setValue(f"toggles/{button.objectName()}", button.isChecked())
    settings.sync()
