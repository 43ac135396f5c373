"""Choose a saved comparison to reopen."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from widgets.format import local_time
from widgets.run_data import SavedComparisonRow

ID_ROLE = Qt.ItemDataRole.UserRole


def describe(saved: SavedComparisonRow) -> str:
    runs = len(saved.run_uids)
    who = " · ".join(part for part in (saved.customer, saved.author) if part)
    return (f"{saved.title or 'Untitled comparison'} — {runs} run{'s' if runs != 1 else ''}"
            + (f" · {who}" if who else "") + f" · saved {local_time(saved.updated_at)}")


class SavedComparisonsDialog(QDialog):
    """Most recently saved first; double-click or Open."""

    def __init__(self, saved: list[SavedComparisonRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("savedComparisonsDialog")
        self.setWindowTitle("Open a saved comparison")
        self.list = QListWidget()
        for item in saved:
            row = QListWidgetItem(describe(item))
            row.setData(ID_ROLE, item.id)
            if item.notes:
                row.setToolTip(item.notes)
            self.list.addItem(row)
        if saved:
            self.list.setCurrentRow(0)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(bool(saved))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        layout = QVBoxLayout(self)
        if not saved:
            layout.addWidget(QLabel("No comparison has been saved yet. Compare runs, then “Save comparison”."))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.buttons)
        self.resize(560, 360)

    def chosen_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(ID_ROLE)) if item is not None else None
