"""Gather a host's facts from the window: connect in a worker, and ask the user what connecting needs.

Connecting may stop at a question only the user can answer: an unknown host key (show the
fingerprint), a password. The worker reports the error; this controller asks in the GUI thread and
starts a new worker with the answer. A changed host key is never a question: it is refused.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from app.errors import is_user_error
from app.gui.workers import Worker, WorkerPool
from app.workbench import FactsOutcome, Workbench
from remote.errors import HostKeyChanged, PasswordRequired, UnknownHostKey
from remote.hostspec import AUTH_AGENT, AUTH_AUTO, AUTH_KEY, AUTH_PASSWORD
from widgets.fingerprint_dialog import FingerprintDialog
from widgets.format import human_duration, one_line
from widgets.host_data import AuthChoice
from widgets.host_list import STATUS_CONNECTING, STATUS_ERROR, STATUS_OK, STATUS_UNKNOWN
from widgets.password_dialog import PasswordDialog

MAX_QUESTIONS = 3   # a host that keeps asking (key keeps changing, password refused) stops here
# the host editor's choices, in the order it offers them
AUTH_CHOICES = (
    AuthChoice(AUTH_AUTO, "Automatic (ssh-agent and keys)"),
    AuthChoice(AUTH_KEY, "Key file", needs_key=True),
    AuthChoice(AUTH_AGENT, "ssh-agent only"),
    AuthChoice(AUTH_PASSWORD, "Password", asks_password=True),
)


@dataclass(frozen=True)
class Retry:
    """Connect again with what the user answered."""

    password: str | None = None
    remember: bool = False
    trust: UnknownHostKey | None = None


@dataclass(frozen=True)
class Refusal:
    """Do not connect again: the host's status, the row's message and the status bar's line."""

    status: str
    reason: str
    message: str


def report_bug(exc: BaseException) -> str:
    """A failure that is not a host problem: the crash dialog shows the traceback; the one-line reason."""
    sys.excepthook(type(exc), exc, exc.__traceback__)
    return f"unexpected error: {type(exc).__name__}: {exc}"


def refusal(name: str, reason: str, status: str = STATUS_ERROR) -> Refusal:
    # most reasons already start with the host's name
    return Refusal(status, reason, reason if reason.startswith(f"{name}:") else f"{name}: {reason}")


class ConnectQuestions(QObject):
    """What connecting may ask the user (host key, password), shared by every flow that connects.

    answer() runs in the GUI thread after a worker failed to connect: it asks (modal dialogs), counts
    the questions per host, and says whether to retry with the answer or to give up.
    """

    def __init__(self, pool: WorkerPool, parent: QWidget) -> None:
        super().__init__(parent)
        self._window = parent
        self._keyring: bool | None = None
        self._asked: dict[str, int] = {}
        pool.submit(_keyring_available).finished.connect(self._set_keyring)

    def reset(self, name: str) -> None:
        self._asked[name] = 0

    def forget(self, name: str) -> None:
        self._asked.pop(name, None)

    def answer(self, name: str, exc: BaseException) -> Retry | Refusal:
        """Ask what `exc` needs; the password of a retry after a host key question stays the caller's."""
        if isinstance(exc, HostKeyChanged):
            self.show_key_changed(name, exc)
            return refusal(name, "HOST KEY CHANGED — connection refused")
        asked = self._asked.get(name, 0)
        if isinstance(exc, (UnknownHostKey, PasswordRequired)) and asked >= MAX_QUESTIONS:
            return refusal(name, one_line(str(exc)))
        if isinstance(exc, UnknownHostKey):
            self._asked[name] = asked + 1
            if self.ask_fingerprint(name, exc):
                return Retry(trust=exc)
            return Refusal(STATUS_UNKNOWN, "host key not accepted",
                           f"{name}: not connected — the host key was not accepted")
        if isinstance(exc, PasswordRequired):
            self._asked[name] = asked + 1
            given = self.ask_password(name, exc)
            if given is None:
                return Refusal(STATUS_UNKNOWN, "no password given", f"{name}: not connected — no password given")
            return Retry(password=given[0], remember=given[1])
        return refusal(name, one_line(str(exc)) or type(exc).__name__)

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

    def show_key_changed(self, name: str, exc: HostKeyChanged) -> None:
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


class FactsFlow(QObject):
    """One gather at a time per host; results and problems come out as signals."""

    host_state = Signal(str, str, str)   # host, status (widgets.host_list STATUS_*), one-line message
    message = Signal(str)                # for the status bar
    facts_ready = Signal(object)         # app.workbench.FactsOutcome

    def __init__(self, workbench: Workbench, pool: WorkerPool, parent: QWidget) -> None:
        super().__init__(parent)
        self._bench = workbench
        self._pool = pool
        self.questions = ConnectQuestions(pool, parent)

    def is_busy(self, name: str) -> bool:
        return self._pool.is_running(name)

    def gather(self, name: str, password: str | None = None, remember: bool = False,
               trust: UnknownHostKey | None = None, *, first: bool = True) -> bool:
        """Start gathering; False when a gather for this host is already running."""
        if self.is_busy(name):
            return False
        if first:
            self.questions.reset(name)
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
        self.questions.forget(name)
        self.host_state.emit(name, STATUS_OK, "")
        self.message.emit(f"{name}: facts collected in {human_duration(seconds)}")
        self.facts_ready.emit(outcome)

    def _failed(self, name: str, exc: BaseException, password: str | None) -> None:
        if not is_user_error(exc):
            self._report(name, refusal(name, report_bug(exc)))
            return
        outcome = self.questions.answer(name, exc)
        if isinstance(outcome, Retry):
            self.gather(name, outcome.password or password, remember=outcome.remember, trust=outcome.trust,
                        first=False)
        else:
            self._report(name, outcome)

    def _report(self, name: str, refused: Refusal) -> None:
        if refused.status == STATUS_ERROR:
            self.questions.forget(name)
        self.host_state.emit(name, refused.status, refused.reason)
        self.message.emit(refused.message)


def _keyring_available() -> bool:
    from app.engine import passwords

    return passwords.keyring_available()


def _gather_job(bench: Workbench, name: str, password: str | None, remember: bool,
                trust: UnknownHostKey | None) -> FactsOutcome:
    """Runs in a worker thread: no widgets here."""
    if trust is not None:
        bench.trust_key(trust)
    outcome = bench.gather_facts(name, password)
    if remember and password:
        bench.remember_password(name, password)
    return outcome
