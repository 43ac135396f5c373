"""Ask for an SSH password; offer to keep it in the OS keyring only when there is one."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)


class PasswordDialog(QDialog):
    def __init__(self, host_name: str, reason: str = "", keyring_available: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("passwordDialog")
        self.setWindowTitle(f"Password for {host_name}")
        self.setModal(True)
        self.setMinimumWidth(420)

        intro = QLabel(reason or f"{host_name} asks for a password.")
        intro.setWordWrap(True)

        self.password_edit = QLineEdit()
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setPlaceholderText("SSH password")

        form = QFormLayout()
        form.addRow("Password:", self.password_edit)

        self.remember_box = QCheckBox("Remember in the system keyring")
        self.remember_box.setToolTip("Stored by your desktop's keyring, never in Benchbay's own files")
        self.remember_box.setVisible(keyring_available)
        self.remember_box.setEnabled(keyring_available)
        note = QLabel(
            "Otherwise the password is kept in memory only, until Benchbay closes." if keyring_available
            else "The password is kept in memory only, until Benchbay closes (no system keyring found)."
        )
        note.setProperty("role", "hint")
        note.setWordWrap(True)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Connect")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.password_edit.textChanged.connect(self._update_ok)
        self._update_ok()

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        if keyring_available:
            layout.addWidget(self.remember_box)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self.password_edit.setFocus()

    def password(self) -> str:
        return self.password_edit.text()

    def remember(self) -> bool:
        return self.remember_box.isEnabled() and self.remember_box.isChecked()

    def _update_ok(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.password_edit.text()))
