"""The window a user sees at once when Benchbay starts, while the store opens and the main window's code loads.

On a loaded machine importing the charts, the store and SSH libraries takes seconds; a window that only
appears (or stays black) after them looks broken. This one is painted within a fraction of a second, says
what is happening, and gives way to the main window at its place. The slow part runs in a thread
(imports and opening the store: no widgets there).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.gui.window_state import fit_default_size


class _Relay(QObject):
    finished = Signal(object)
    failed = Signal(object)


class StartWindow(QWidget):
    """"Opening Benchbay…" where the main window will be."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("startWindow")
        self.setWindowTitle("Benchbay")
        label = QLabel("<b>Opening Benchbay…</b><br>loading the store of runs and the hosts")
        label.setObjectName("startMessage")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        fit_default_size(self)   # the main window's default place and size: it takes over there


def load_in_thread(work: Callable[[], Any], done: Callable[[Any], None], failed: Callable[[BaseException], None],
                   parent: QObject) -> threading.Thread:
    """Run work() in a thread; done(result) or failed(exc) are called in the GUI thread."""
    relay = _Relay(parent)
    relay.finished.connect(done, Qt.ConnectionType.QueuedConnection)
    relay.failed.connect(failed, Qt.ConnectionType.QueuedConnection)

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # noqa: BLE001 - the GUI thread reports every failure
            relay.failed.emit(exc)
        else:
            relay.finished.emit(result)

    thread = threading.Thread(target=run, name="benchbay-start", daemon=True)
    thread.start()
    return thread
