"""The run dialog's host list: which hosts can run a test now, and what happens to a monitored one."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidgetItem


def host_item(host: str, selected: bool, busy: set[str], monitored: set[str]) -> QListWidgetItem:
    """A host to tick; one running a test cannot be, and says why; a monitored one says what happens."""
    item = QListWidgetItem(host)
    item.setData(Qt.ItemDataRole.UserRole, host)
    flags = Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled
    if host in busy:
        item.setText(f"{host} — a test is running")
        item.setToolTip(f"{host} is running a test: wait for it to end, or cancel it in the progress area")
        flags = Qt.ItemFlag.ItemIsUserCheckable
        selected = False
    elif host in monitored:
        item.setText(f"{host} — monitored: the test takes over")
        item.setToolTip(f"{host}'s monitor stops (it is stored as a run), the test runs with the same live "
                        "graphs, and monitoring starts again when the test ends")
    item.setFlags(flags)
    item.setCheckState(Qt.CheckState.Checked if selected else Qt.CheckState.Unchecked)
    return item
