"""The form of a shared-storage sweep: the client hosts, the shared directory, the sweep and the requests.

Start hands a SharedChoice (hosts and the agent's parameters) to `check`, which returns "" or what is
wrong; a wrong choice is said under the form and the dialog stays open. The dialog knows no SSH.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from widgets.run_disk_form import parse_size

DEFAULT_THREADS = "1,2,4,8,16,32"


@dataclass(frozen=True)
class SharedChoice:
    hosts: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)


def default_clients(count: int) -> str:
    """ "1,2,4,...,count" for `count` hosts."""
    out, n = [], 1
    while n < count:
        out.append(n)
        n *= 2
    return ",".join(str(v) for v in [*out, max(count, 1)])


def _numbers(text: str, what: str) -> list[int]:
    try:
        values = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise ValueError(f"{what}: whole numbers separated by commas, like 1,2,4") from None
    if not values:
        raise ValueError(f"{what}: at least one number")
    return values


class SharedRunDialog(QDialog):
    start_requested = Signal(object)   # SharedChoice, once `check` found nothing wrong

    def __init__(self, hosts: Sequence[str], selected: Sequence[str], check: Callable[[SharedChoice], str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sharedRunDialog")
        self.setWindowTitle("Shared storage test")
        self._check = check
        self.host_list = QListWidget()
        self.host_list.setObjectName("sharedHosts")
        self.host_list.setMaximumHeight(120)
        for host in hosts:
            item = QListWidgetItem(host)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if host in selected else Qt.CheckState.Unchecked)
            self.host_list.addItem(item)
        self.dir_edit = QLineEdit()
        self.dir_edit.setObjectName("sharedDir")
        self.dir_edit.setPlaceholderText("/mnt/shared — mounted at this path on every client host")
        self.rw_combo = QComboBox()
        self.rw_combo.addItem("write", "write")
        self.rw_combo.addItem("read", "read")
        self.bs_edit = QLineEdit("4k")
        self.bs_edit.setObjectName("sharedBs")
        self.bs_edit.setToolTip("Bytes per request, down to 1 (e.g. 1, 512, 4k, 1M)")
        self.clients_edit = QLineEdit(default_clients(len(selected)))
        self.clients_edit.setObjectName("sharedClients")
        self.threads_edit = QLineEdit(DEFAULT_THREADS)
        self.threads_edit.setObjectName("sharedThreads")
        self.runtime_spin = QSpinBox()
        self.runtime_spin.setRange(2, 3600)
        self.runtime_spin.setValue(10)
        self.runtime_spin.setSuffix(" s per step")
        self.direct_box = QCheckBox("O_DIRECT (a file system that refuses it is named in the results)")
        self.direct_box.setChecked(True)
        self.sync_box = QCheckBox("O_SYNC writes")
        self.sync_box.setChecked(True)
        form = QFormLayout()
        form.addRow("Client hosts", self.host_list)
        form.addRow("Shared directory", self.dir_edit)
        form.addRow("Requests", self.rw_combo)
        form.addRow("Request size", self.bs_edit)
        form.addRow("Clients per step", self.clients_edit)
        form.addRow("Threads per client", self.threads_edit)
        form.addRow("Duration", self.runtime_spin)
        form.addRow("", self.direct_box)
        form.addRow("", self.sync_box)
        self.error_label = QLabel()
        self.error_label.setObjectName("sharedError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #d9483b")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start_button = self.buttons.addButton("Start", QDialogButtonBox.ButtonRole.AcceptRole)
        self.start_button.setObjectName("sharedStart")
        self.buttons.accepted.connect(self.start)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)

    def hosts(self) -> tuple[str, ...]:
        items = (self.host_list.item(i) for i in range(self.host_list.count()))
        return tuple(item.text() for item in items if item.checkState() == Qt.CheckState.Checked)

    def choice(self) -> SharedChoice:
        """What the form says; ValueError naming the field that is wrong."""
        hosts = self.hosts()
        if not hosts:
            raise ValueError("tick the client hosts")
        if not self.dir_edit.text().strip():
            raise ValueError("name the shared directory, mounted at the same path on every client host")
        try:
            bs = parse_size(self.bs_edit.text())
        except ValueError:
            raise ValueError(f"request size {self.bs_edit.text().strip()!r} is not a size (e.g. 1, 4k)") from None
        params = {"test_dir": self.dir_edit.text().strip(), "rw": self.rw_combo.currentData(), "bs": bs,
                  "clients": _numbers(self.clients_edit.text(), "clients per step"),
                  "threads": _numbers(self.threads_edit.text(), "threads per client"),
                  "runtime": self.runtime_spin.value(), "direct": self.direct_box.isChecked(),
                  "sync": self.sync_box.isChecked()}
        return SharedChoice(hosts, params)

    def start(self) -> None:
        try:
            choice = self.choice()
        except ValueError as exc:
            self.show_error(str(exc))
            return
        problem = self._check(choice)
        if problem:
            self.show_error(problem)
            return
        self.error_label.clear()
        self.start_requested.emit(choice)
        self.accept()

    def show_error(self, text: str) -> None:
        self.error_label.setText(text)
