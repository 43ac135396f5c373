"""Gather a host's facts from the window: connect in a worker, and ask the user what connecting needs.

Connecting may stop at a question only the user can answer: an unknown host key (show the
fingerprint), a password. The worker reports the error; this controller asks in the GUI thread and
starts a new worker with the answer. A changed host key is never a question: it is refused.
"""
from __future__ import annotations

import sys
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from app.gui.workers import Worker, WorkerPool
from remote.errors import BenchbayError, HostKeyChanged, PasswordRequired, UnknownHostKey
from widgets.fingerprint_dialog import FingerprintDialog
from widgets.format import human_duration, one_line
from widgets.host_list import STATUS_CONNECTING, STATUS_ERROR, STATUS_OK, STATUS_UNKNOWN
from widgets.password_dialog import PasswordDialog

MAX_QUESTIONS = 3   # a host that keeps asking (key keeps changing, password refused) stops here


class FactsFlow(QObject):
    """One gather at a time per host; results and problems come out as signals."""

    host_state = Signal(str, str, str)   # host, status (widgets.host_list STATUS_*), one-line message
    message = Signal(str)                # for the status bar
    facts_ready = Signal(object)         # app.workbench.FactsOutcome

    def __init__(self, workbench, pool: WorkerPool, parent: QWidget) -> None:
        super().__init__(parent)
        self._bench = workbench
        self._pool = pool
        self._window = parent
        self._keyring: bool | None = None
        self._questions: dict[str, int] = {}
        pool.submit(_keyring_available).finished.connect(self._set_keyring)

    def is_busy(self, name: str) -> bool:
        return self._pool.is_running(name)

    def gather(self, name: str, password: str | None = None, remember: bool = False,
               trust: UnknownHostKey | None = None, *, first: bool = True) -> bool:
        """Start gathering; False when a gather for this host is already running."""
        if self.is_busy(name):
            return False
        if first:
            self._questions[name] = 0
        self.host_state.emit(name, STATUS_CONNECTING, "gathering facts…")
        self.message.emit(f"{name}: connecting and gathering facts…")
        worker = Worker(_gather_job, self._bench, name, password, remember, trust)
        started = time.monotonic()
        worker.finished.connect(lambda outcome: self._done(name, outcome, time.monotonic() - started))
        worker.failed.connect(lambda exc: self._failed(name, exc, password))
        self._pool.start(worker, key=name)
        return True

    # -- results (GUI thread) --------------------------------------------------------------------

    def _done(self, name: str, outcome: object, seconds: float) -> None:
        self._questions.pop(name, None)
        self.host_state.emit(name, STATUS_OK, "")
        self.message.emit(f"{name}: facts collected in {human_duration(seconds)}")
        self.facts_ready.emit(outcome)

    def _failed(self, name: str, exc: BaseException, password: str | None) -> None:
        if not isinstance(exc, BenchbayError):
            # a bug, not a host problem: the crash dialog shows the traceback
            self._report(name, f"unexpected error: {type(exc).__name__}: {exc}")
            sys.excepthook(type(exc), exc, exc.__traceback__)
            return
        if isinstance(exc, HostKeyChanged):
            self._report(name, "HOST KEY CHANGED — connection refused")
            self._show_key_changed(name, exc)
            return
        asked = self._questions.get(name, 0)
        if isinstance(exc, (UnknownHostKey, PasswordRequired)) and asked >= MAX_QUESTIONS:
            self._report(name, one_line(str(exc)))
            return
        if isinstance(exc, UnknownHostKey):
            self._questions[name] = asked + 1
            if self.ask_fingerprint(name, exc):
                self.gather(name, password, trust=exc, first=False)
            else:
                self.host_state.emit(name, STATUS_UNKNOWN, "host key not accepted")
                self.message.emit(f"{name}: not connected — the host key was not accepted")
            return
        if isinstance(exc, PasswordRequired):
            self._questions[name] = asked + 1
            answer = self.ask_password(name, exc)
            if answer is None:
                self.host_state.emit(name, STATUS_UNKNOWN, "no password given")
                self.message.emit(f"{name}: not connected — no password given")
            else:
                self.gather(name, answer[0], remember=answer[1], first=False)
            return
        self._report(name, one_line(str(exc)) or type(exc).__name__)

    def _report(self, name: str, reason: str) -> None:
        self._questions.pop(name, None)
        self.host_state.emit(name, STATUS_ERROR, reason)
        # most reasons already start with the host's name
        self.message.emit(reason if reason.startswith(f"{name}:") else f"{name}: {reason}")

    # -- questions (modal; tests replace the dialogs' exec) ----------------------------------------

    def ask_fingerprint(self, name: str, exc: UnknownHostKey) -> bool:
        dialog = FingerprintDialog(name, exc.known_as, exc.key_type, exc.fingerprint, self._window)
        try:
            return dialog.exec() == QDialog.DialogCode.Accepted
        finally:
            dialog.deleteLater()

    def ask_password(self, name: str, exc: PasswordRequired) -> tuple[str, bool] | None:
        if self._keyring is None:
            self._keyring = _keyring_available()
        dialog = PasswordDialog(name, one_line(str(exc)), keyring_available=self._keyring, parent=self._window)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.password():
                return None
            return dialog.password(), dialog.remember()
        finally:
            dialog.deleteLater()

    def _show_key_changed(self, name: str, exc: HostKeyChanged) -> None:
        box = QMessageBox(self._window)
        box.setIcon(QMessageBox.Icon.Critical)
        box.setWindowTitle(f"Host key CHANGED — {name}")
        box.setText(f"<b>The host key of {name} has CHANGED. The connection was refused.</b>")
        box.setInformativeText(
            f"<p>Trusted key: <tt>{exc.expected_fingerprint}</tt><br>"
            f"Offered now: <tt>{exc.key_type} {exc.fingerprint}</tt></p>"
            "<p>Someone may be intercepting the connection, or the server was reinstalled. "
            "Ask the server's administrator. If the server really has a new key, remove the old one "
            f"(<tt>benchbay host untrust {name}</tt>) and connect again to check the new fingerprint.</p>"
        )
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.setObjectName("hostKeyChangedBox")
        try:
            box.exec()
        finally:
            box.deleteLater()

    def _set_keyring(self, available: object) -> None:
        self._keyring = bool(available)


def _keyring_available() -> bool:
    from app import passwords

    return passwords.keyring_available()


def _gather_job(bench, name: str, password: str | None, remember: bool, trust: UnknownHostKey | None):
    """Runs in a worker thread: no widgets here."""
    if trust is not None:
        bench.trust_key(trust)
    outcome = bench.gather_facts(name, password)
    if remember and password:
        bench.remember_password(name, password)
    return outcome
