"""The main window's toolbars: hosts, facts and tests, side by side while they fit, else on rows of their own,
so that none hides an action behind a » button (a 1280x720 screen at 200 % is 640 px wide to the layout)."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QMainWindow, QToolBar


def toolbar(window: QMainWindow, title: str, name: str) -> QToolBar:
    made = QToolBar(title)
    made.setObjectName(name)
    made.setMovable(False)
    made.setIconSize(QSize(16, 16))
    made.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    window.addToolBar(made)
    return made


class ToolbarRows:
    """Decides which toolbar starts a new row, each time the window's width changes."""

    def __init__(self, window: QMainWindow, bars: list[QToolBar]) -> None:
        self._window = window
        self._bars = bars
        self.breaks: set[str] = set()

    def fit(self) -> None:
        """A toolbar goes on a new row when the row it would join has no room for it."""
        room, used, breaks = self._window.width(), 0, set()
        for bar in self._bars:
            width = bar.sizeHint().width()
            if used and used + width > room:
                breaks.add(bar.objectName())
                used = 0
            used += width
        if breaks == self.breaks:
            return
        for bar in self._bars[1:]:
            if bar.objectName() in self.breaks:
                self._window.removeToolBarBreak(bar)
            if bar.objectName() in breaks:
                self._window.insertToolBarBreak(bar)
        self.breaks = breaks
