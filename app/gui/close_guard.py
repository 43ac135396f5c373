"""Closing the window while a test runs or with an unsaved comparison: ask first, without a nested loop.

The question is a window-modal dialog (open(), not exec()); "Close anyway" closes the window again with
the question answered. It is a plain QDialog with a layout rather than a QMessageBox: the message box fixed
its width before the stylesheet's paddings reached its buttons, and cut "Close anyway" to ":lose anyway".
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

TEXT_WIDTH = 380   # wide enough that a sentence wraps into a few readable lines, narrow enough for 640 px


class CloseQuestion(QDialog):
    """"Close Benchbay now?" with what would be lost and two buttons, sized by its layout."""

    def __init__(self, parent: QWidget, text: str) -> None:
        super().__init__(parent)
        self.setObjectName("closeQuestion")
        self.setWindowTitle("Close Benchbay?")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        icon = QLabel()
        size = self.style().pixelMetric(QStyle.PixelMetric.PM_MessageBoxIconSize, None, self)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxQuestion, None, self)
                       .pixmap(size, size))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        heading = QLabel("<b>Close Benchbay now?</b>")
        self._text = QLabel(text)
        self._text.setObjectName("closeQuestionText")
        self._text.setWordWrap(True)
        self._text.setMinimumWidth(TEXT_WIDTH)
        self.close_button = QPushButton("Close anyway")
        self.close_button.setObjectName("closeAnyway")
        self.keep_button = QPushButton("Keep working")
        self.keep_button.setObjectName("keepWorking")
        self.keep_button.setDefault(True)
        self._clicked: QAbstractButton | None = None
        self.close_button.clicked.connect(lambda: self._answer(self.close_button, QDialog.DialogCode.Accepted))
        self.keep_button.clicked.connect(lambda: self._answer(self.keep_button, QDialog.DialogCode.Rejected))
        words = QVBoxLayout()
        words.addWidget(heading)
        words.addWidget(self._text)
        top = QHBoxLayout()
        top.addWidget(icon)
        top.addLayout(words, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.keep_button)
        layout = QVBoxLayout(self)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetFixedSize)   # never smaller than its texts
        layout.addLayout(top)
        layout.addLayout(buttons)

    def informativeText(self) -> str:   # noqa: N802 (the QMessageBox name the callers know)
        return self._text.text()

    def buttons(self) -> list[QAbstractButton]:
        return [self.close_button, self.keep_button]

    def clickedButton(self) -> QAbstractButton | None:   # noqa: N802
        return self._clicked

    def _answer(self, button: QAbstractButton, code: QDialog.DialogCode) -> None:
        self._clicked = button
        self.done(code)

    def reject(self) -> None:   # Escape and the title bar's close keep working
        self._clicked = self.keep_button
        super().reject()


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
        self.box: CloseQuestion | None = None
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

    def ask(self, text: str) -> CloseQuestion:
        if self.box is not None:
            self.box.raise_()
            return self.box
        box = CloseQuestion(self._window, text)
        self.close_button = box.close_button
        box.finished.connect(lambda _result: self._answered(box))
        self.box = box
        box.open()
        return box

    def _answered(self, box: CloseQuestion) -> None:
        close = box.clickedButton() is self.close_button
        self.box = None
        self.close_button = None
        box.deleteLater()
        if close:
            self.confirmed = True
            self._window.close()
