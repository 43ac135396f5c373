"""The run dialog's parameter pages for the mail storm and the restore test.

Each page turns its fields into the agent's own parameters (same names; defaults and limits from the
test handed in, as the agent defines them); the dialog checks them with the agent's validate.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from widgets.chart_theme import MUTED
from widgets.test_forms_data import TestForm


def _spin_for(test: TestForm, name: str, object_name: str, suffix: str = "", low: int | None = None,
              default: int | None = None) -> QSpinBox:
    """A spin box over the agent's limits of the parameter, at its default (or at low/default given here)."""
    param = test.param(name)
    start = param.default if default is None else default
    return _spin(object_name, int(param.low if low is None else low), int(param.high), int(start), suffix)


def _spin(name: str, low: int, high: int, value: int, suffix: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(low, high)
    spin.setValue(value)
    spin.setSuffix(suffix)
    spin.setGroupSeparatorShown(True)
    return spin


def _note(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {MUTED};")
    return label


class MailStormForm(QWidget):
    """Messages, sessions, size, server, a sink recipient (confirmed when outside *.invalid), drain."""

    changed = Signal()

    def __init__(self, test: TestForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        mail = {name: test.param(name).default for name in ("server", "recipient", "session_per_message",
                                                            "drain_timeout")}
        self.messages = _spin_for(test, "messages", "mailMessagesSpin")
        self.sessions = _spin_for(test, "concurrency", "mailSessionsSpin")
        self.sessions.setToolTip("Concurrent SMTP sessions")
        self.size = _spin_for(test, "size", "mailSizeSpin", " B")
        self.size.setToolTip("Size of each message, headers included")
        self.server = QLineEdit(mail["server"])
        self.server.setObjectName("mailServerEdit")
        self.server.setToolTip("The MTA on the host, host:port; when nothing listens there a synthetic "
                               "queue storm runs instead (labelled synthetic)")
        self.recipient = QLineEdit(mail["recipient"])
        self.recipient.setObjectName("mailRecipientEdit")
        self.recipient.setToolTip("Every message goes to this address: route its domain to a discard "
                                  "transport (see the README)")
        self.sink_confirmed = QCheckBox("This address is a sink: the MTA discards what is sent to it")
        self.sink_confirmed.setObjectName("mailSinkCheck")
        self.sink_confirmed.setToolTip("Needed for an address outside the reserved *.invalid domains")
        self.reuse_sessions = QCheckBox("Reuse sessions (several messages per SMTP session)")
        self.reuse_sessions.setObjectName("mailReuseCheck")
        self.reuse_sessions.setChecked(not mail["session_per_message"])
        self.drain_timeout = QDoubleSpinBox()
        self.drain_timeout.setObjectName("mailDrainSpin")
        drain = test.param("drain_timeout")
        self.drain_timeout.setRange(float(drain.low or 0.0), float(drain.high or 24 * 3600.0))
        self.drain_timeout.setDecimals(0)
        self.drain_timeout.setSuffix(" s")
        self.drain_timeout.setValue(mail["drain_timeout"])
        self.drain_timeout.setToolTip("How long to wait for the queue to drain after the storm")
        form = QFormLayout(self)
        form.addRow("Messages:", self.messages)
        form.addRow("Sessions:", self.sessions)
        form.addRow("Message size:", self.size)
        form.addRow("Server (host:port):", self.server)
        form.addRow("Recipient:", self.recipient)
        form.addRow("", self.sink_confirmed)
        form.addRow("", self.reuse_sessions)
        form.addRow("Drain timeout:", self.drain_timeout)
        for spin in (self.messages, self.sessions, self.size):
            spin.valueChanged.connect(lambda _v: self.changed.emit())
        self.drain_timeout.valueChanged.connect(lambda _v: self.changed.emit())
        for edit in (self.server, self.recipient):
            edit.textChanged.connect(lambda _t: self.changed.emit())
        for box in (self.sink_confirmed, self.reuse_sessions):
            box.toggled.connect(lambda _c: self.changed.emit())

    def params(self) -> dict[str, Any]:
        return {"messages": self.messages.value(), "concurrency": self.sessions.value(), "size": self.size.value(),
                "server": self.server.text().strip(), "recipient": self.recipient.text().strip(),
                "sink_confirmed": self.sink_confirmed.isChecked(),
                "session_per_message": not self.reuse_sessions.isChecked(),
                "drain_timeout": self.drain_timeout.value()}


class RestoreForm(QWidget):
    """Data set size, pg_restore jobs, how to log in (peer or a DSN with a password kept in memory)."""

    changed = Signal()

    def __init__(self, test: TestForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.size_mb = _spin_for(test, "size_mb", "restoreSizeSpin", " MB")
        self.size_mb.setToolTip("Size of the synthetic data set generated, dumped and restored")
        self.jobs = _spin_for(test, "jobs", "restoreJobsSpin", low=0, default=0)   # 0: the host's cores
        self.jobs.setSpecialValueText("the host's cores")
        self.jobs.setToolTip("pg_restore -j N for the parallel pass (the other pass is -j 1)")
        self.connection = QComboBox()
        self.connection.setObjectName("restoreConnectionCombo")
        self.connection.addItem("local peer authentication (as the postgres user)", "peer")
        self.connection.addItem("DSN", "dsn")
        self.dsn = QLineEdit()
        self.dsn.setObjectName("restoreDsnEdit")
        self.dsn.setPlaceholderText("host=127.0.0.1 port=5432 user=bench dbname=postgres")
        self.dsn.setToolTip("A libpq conninfo or postgresql:// URI, without the password")
        self.password = QLineEdit()
        self.password.setObjectName("restorePasswordEdit")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setToolTip("Sent to the agent over SSH when the run starts; never written to disk or stored")
        self.test_dir = QLineEdit()
        self.test_dir.setObjectName("restoreTestDirEdit")
        self.test_dir.setPlaceholderText("the host's test directory, else its run directory")
        self.test_dir.setToolTip("Where the dump (or the file-level archive) is written; removed afterwards")
        form = QFormLayout(self)
        form.addRow("Data set:", self.size_mb)
        form.addRow("Parallel jobs:", self.jobs)
        form.addRow("Log in with:", self.connection)
        form.addRow("DSN:", self.dsn)
        form.addRow("Password:", self.password)
        form.addRow("Test directory:", self.test_dir)
        form.addRow("", _note("Without PostgreSQL on the host a file-level restore runs instead "
                              "(extract an archive of small files, then sync), labelled as such."))
        for spin in (self.size_mb, self.jobs):
            spin.valueChanged.connect(lambda _v: self.changed.emit())
        for edit in (self.dsn, self.password, self.test_dir):
            edit.textChanged.connect(lambda _t: self.changed.emit())
        self.connection.currentIndexChanged.connect(lambda _i: self._connection_changed())
        self._connection_changed()

    def _connection_changed(self) -> None:
        dsn = self.connection.currentData() == "dsn"
        self.dsn.setEnabled(dsn)
        self.password.setEnabled(dsn)
        self.changed.emit()

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"size_mb": self.size_mb.value(), "connection": self.connection.currentData()}
        if self.jobs.value():
            params["jobs"] = self.jobs.value()
        if params["connection"] == "dsn":
            params["dsn"] = self.dsn.text().strip()
            if self.password.text():
                params["password"] = self.password.text()
        if self.test_dir.text().strip():
            params["test_dir"] = self.test_dir.text().strip()
        return params
