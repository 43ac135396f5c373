"""Windows and dialogs that fit the screen they open on: at 1280x720, and at 200 % (640x360 logical).

A window asks for the size it would like; it gets that size or the screen's free area, whichever is
smaller, and is moved inside that area. What does not fit then scrolls (every window keeps its content
in a scroll area) rather than running off the screen.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget


def free_area(widget: QWidget) -> QRect | None:
    """The screen's area not taken by panels, for the screen the widget (or its parent) is on."""
    anchor = widget.parentWidget() or widget
    screen = anchor.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def fit_to_screen(widget: QWidget, wanted: QSize, free: QRect | None = None) -> QSize:
    """Resize to `wanted`, shrunk to the free area, and keep the window inside it; the size given."""
    free = free if free is not None else free_area(widget)
    size = QSize(wanted)
    if free is not None and not free.isEmpty():
        size = size.boundedTo(free.size())
        # the minimum must not be larger than the screen either (a layout's minimum wins over resize)
        widget.setMinimumSize(widget.minimumSize().boundedTo(free.size()))
    widget.resize(size)
    if free is not None and widget.isWindow() and not free.isEmpty():
        geometry = widget.frameGeometry()
        x = min(max(geometry.x(), free.x()), free.right() - min(geometry.width(), free.width()) + 1)
        y = min(max(geometry.y(), free.y()), free.bottom() - min(geometry.height(), free.height()) + 1)
        widget.move(x, y)
    return size
