"""Windows and dialogs that fit the screen they open on: at 1280x720, and at 200 % (640x360 logical).

A window asks for the size it would like; it gets that size or the screen's free area, whichever is
smaller, and is moved inside that area. What does not fit then scrolls (every window keeps its content
in a scroll area) rather than running off the screen.
"""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QWidget

# the window manager adds a frame and a title bar to the size asked for; until the window is shown
# its size is not known, so this much is left for it
FRAME_ALLOWANCE = QSize(8, 40)


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
        frame = widget.frameGeometry().size() - widget.size()
        if not widget.isVisible() or frame.isEmpty():
            frame = FRAME_ALLOWANCE
        size = size.boundedTo(free.size() - frame)
        # the minimum must not be larger than the screen either (a layout's minimum wins over resize)
        widget.setMinimumSize(widget.minimumSize().boundedTo(free.size() - frame))
    widget.resize(size)
    # a window not shown yet is placed by Qt when it shows (a dialog over its parent): not moved here
    if free is not None and widget.isWindow() and widget.isVisible() and not free.isEmpty():
        geometry = widget.frameGeometry()
        x = min(max(geometry.x(), free.x()), free.right() - min(geometry.width(), free.width()) + 1)
        y = min(max(geometry.y(), free.y()), free.bottom() - min(geometry.height(), free.height()) + 1)
        widget.move(x, y)
    return size


class WrappingPage(QWidget):
    """The page of a scroll area whose word-wrapped labels keep their height: a scroll area sizes its page by
    the layout's minimum, which counts a wrapped label as one line, so the page asks for the height its
    layout needs at the width it has."""

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        layout = self.layout()
        if layout is not None and layout.hasHeightForWidth():
            needed = layout.totalHeightForWidth(self.width())
            if needed != self.minimumHeight():
                self.setMinimumHeight(needed)
