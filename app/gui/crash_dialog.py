"""When Benchbay itself has a bug: show the traceback so the user can send it, instead of vanishing."""
from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

log = logging.getLogger(__name__)


class CrashDialog(QDialog):
    """The traceback in a read-only box, a Copy button and Close."""

    def __init__(self, details: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("crashDialog")
        self.setWindowTitle("Benchbay — unexpected error")
        self.resize(720, 440)

        intro = QLabel(
            "<b>Benchbay ran into an unexpected error.</b><br>"
            "Your hosts and stored runs are not affected. You can keep working, or close Benchbay "
            "and start it again. Please copy the details below into a bug report."
        )
        intro.setWordWrap(True)

        self.details = QPlainTextEdit(details)
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the details to the clipboard")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.setAutoDefault(False)
        self.copy_button.clicked.connect(self.copy_details)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Close).setDefault(True)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.details, 1)
        layout.addWidget(buttons)

    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(self.details.toPlainText())
        self.copy_button.setText("Copied")


def format_exception(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> str:
    header = f"Benchbay {_version()} · Python {sys.version.split()[0]} · {sys.platform}\n\n"
    return header + "".join(traceback.format_exception(exc_type, exc, tb))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("benchbay")
    except Exception:
        return "dev"


_showing = False


def show_crash(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    """sys.excepthook for the GUI: log it, then show it (once at a time, never recursively)."""
    global _showing
    details = format_exception(exc_type, exc, tb)
    print(details, file=sys.stderr)
    log.error("unexpected error: %s", exc)
    if _showing or QApplication.instance() is None:
        return
    _showing = True
    try:
        CrashDialog(details, QApplication.activeWindow()).exec()
    except Exception:  # the dialog itself failed: the traceback is on stderr already
        pass
    finally:
        _showing = False


def install_excepthook() -> None:
    """Route uncaught exceptions (in slots and event handlers) to the crash dialog."""
    previous = sys.excepthook

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            app = QApplication.instance()
            if app is not None:
                app.quit()
            else:
                previous(exc_type, exc, tb)
            return
        show_crash(exc_type, exc, tb)

    sys.excepthook = hook
