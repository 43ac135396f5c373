"""Ask the user to check an unknown host key's fingerprint before Benchbay trusts it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QPushButton, QVBoxLayout, QWidget

EXPLANATION = (
    "Benchbay has never connected to this host. Compare this fingerprint with the one the server's "
    "administrator gives you (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub). Accept only if they match."
)


def address_and_port(host_id: str) -> str:
    """known_hosts name to "address:port": "[10.0.0.5]:2222" -> "10.0.0.5:2222", "db1" -> "db1:22"."""
    if host_id.startswith("[") and "]:" in host_id:
        address, port = host_id[1:].split("]:", 1)
        return f"{address}:{port}"
    return f"{host_id}:22"


class FingerprintDialog(QDialog):
    """Modal; Reject is the default button, so Enter never trusts a key by accident."""

    def __init__(self, host_name: str, host_id: str, key_type: str, fingerprint: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fingerprintDialog")
        self.setWindowTitle(f"Unknown host key — {host_name}")
        self.setModal(True)
        self.setMinimumWidth(560)

        heading = QLabel(f"Is this really <b>{_escape(host_name)}</b>?")
        heading.setObjectName("dialogHeading")

        explanation = QLabel(EXPLANATION)
        explanation.setWordWrap(True)

        details = QFormLayout()
        details.setHorizontalSpacing(14)
        self.host_label = QLabel(f"{host_name}  ({address_and_port(host_id)})")
        self.key_type_label = QLabel(key_type)
        for label in (self.host_label, self.key_type_label):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        details.addRow("Host:", self.host_label)
        details.addRow("Key type:", self.key_type_label)

        self.fingerprint_label = QLabel(fingerprint)
        self.fingerprint_label.setObjectName("fingerprint")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPointSizeF(font.pointSizeF() * 1.35)
        self.fingerprint_label.setFont(font)
        self.fingerprint_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fingerprint_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.fingerprint_label.setWordWrap(True)
        self.fingerprint_label.setToolTip("Select to copy")

        buttons = QDialogButtonBox()
        self.reject_button = QPushButton("Reject")
        self.accept_button = QPushButton("Accept and connect")
        buttons.addButton(self.accept_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.reject_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.accept_button.setAutoDefault(False)
        self.reject_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        layout.addWidget(heading)
        layout.addWidget(explanation)
        layout.addLayout(details)
        layout.addWidget(self.fingerprint_label)
        layout.addSpacing(4)
        layout.addWidget(buttons)
        self.reject_button.setFocus()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
