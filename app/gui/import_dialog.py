"""Pick hosts from ~/.ssh/config to add to the inventory (address, port, user stay in the config)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class ImportDialog(QDialog):
    def __init__(self, aliases: list[str], existing: set[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importDialog")
        self.setWindowTitle("Import hosts from ~/.ssh/config")
        self.setMinimumSize(420, 360)
        new = [a for a in aliases if a not in existing]
        if not aliases:
            text = "~/.ssh/config names no hosts (only concrete “Host” entries are listed, no patterns)."
        elif not new:
            text = "Every host in ~/.ssh/config is in the list already."
        else:
            text = ("Tick the hosts to add. Benchbay keeps using ~/.ssh/config for their address, port, "
                    "user, keys and ProxyJump.")
        intro = QLabel(text)
        intro.setWordWrap(True)

        self.list = QListWidget()
        self.list.setObjectName("importList")
        for alias in new:
            item = QListWidgetItem(alias)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.list.addItem(item)
        self.list.itemChanged.connect(self._update_ok)
        self.list.itemActivated.connect(self._toggle)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        select_all = QPushButton("Select all")
        select_all.setEnabled(bool(new))
        select_all.clicked.connect(self._select_all)
        self.buttons.addButton(select_all, QDialogButtonBox.ButtonRole.ResetRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.buttons)
        self._update_ok()

    def chosen(self) -> list[str]:
        return [self.list.item(row).text() for row in range(self.list.count())
                if self.list.item(row).checkState() == Qt.CheckState.Checked]

    def _toggle(self, item: QListWidgetItem) -> None:
        checked = item.checkState() == Qt.CheckState.Checked
        item.setCheckState(Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked)

    def _select_all(self) -> None:
        for row in range(self.list.count()):
            self.list.item(row).setCheckState(Qt.CheckState.Checked)

    def _update_ok(self) -> None:
        count = len(self.chosen())
        self.ok_button.setEnabled(count > 0)
        self.ok_button.setText(f"Import {count} host{'s' if count != 1 else ''}" if count else "Import")
