"""Putting the app's style sheet (and palette) back after a GUI test that set its own."""
from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication


def restyle_app(qss: str, palette: QPalette | None = None) -> None:
    """Set the whole app's style sheet: every widget alive is restyled. A fixture doing it on its way out is
    asked for before the test's windows (it is then torn down after them), and what they left to delete
    goes first: restyling the app while its windows were torn down crashed a test worker."""
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app = QApplication.instance()
    if palette is not None:
        app.setPalette(palette)
    app.setStyleSheet(qss)
