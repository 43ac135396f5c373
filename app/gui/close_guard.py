"""Closing the window while a test runs or with an unsaved comparison: ask first, without a nested loop.

The question is a window-modal box (open(), not exec()); "Close anyway" closes the window again with
the question answered.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget


def what_would_be_lost(testing_hosts: list[str], unsaved_comparison: bool) -> str:
    """The sentence the question shows; empty when nothing is lost by closing."""
    parts = []
    if testing_hosts:
        hosts = ", ".join(sorted(testing_hosts))
        parts.append(f"A test is running on {hosts}: closing cancels it and stores it as cancelled.")
    if unsaved_comparison:
        parts.append("The comparison on the Compare tab is not saved: click “Save comparison” to keep it.")
    return "\n\n".join(parts)


class CloseGuard(QObject):
    """Asks once per close; the window calls ask() from closeEvent and close_now() does the closing."""

    def __init__(self, window: QWidget, lost: Callable[[], str]) -> None:
        super().__init__(window)
        self._window = window
        self._lost = lost
        self.confirmed = False
        self.box: QMessageBox | None = None
        self.close_button: QPushButton | None = None

    def should_wait(self) -> bool:
        """True when the close must wait for the user's answer (the box is then open)."""
        if self.confirmed:
            return False
        text = self._lost()
        if not text:
            return False
        self.ask(text)
        return True

    def ask(self, text: str) -> QMessageBox:
        if self.box is not None:
            self.box.raise_()
            return self.box
        box = QMessageBox(self._window)
        box.setObjectName("closeQuestion")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Close Benchbay?")
        box.setText("<b>Close Benchbay now?</b>")
        box.setInformativeText(text)
        self.close_button = box.addButton("Close anyway", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("Keep working", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.finished.connect(lambda _result: self._answered(box))
        self.box = box
        box.open()
        return box

    def _answered(self, box: QMessageBox) -> None:
        close = box.clickedButton() is self.close_button
        self.box = None
        self.close_button = None
        box.deleteLater()
        if close:
            self.confirmed = True
            self._window.close()
