"""Host groups above the host list: one button per tag (a rack, a room); a click selects the whole group.

Monitor and Run test then act on the selection, so a rack of forty hosts is one click away. Tags are
given in the host editor or with `benchbay host edit NAME --tag rack3`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QListWidget,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from widgets.chart_theme import MUTED
from widgets.host_list import NAME_ROLE

COLUMNS = 3         # group buttons per row in the host pane
MAX_BUTTONS = 9     # more groups than this: the rest in a list beside "More"


class HostGroupBar(QWidget):
    """Group buttons (hidden while no host has a tag); emits group_chosen(tag, hosts)."""

    group_chosen = Signal(str, list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hostGroups")
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.groups: dict[str, list[str]] = {}
        self.buttons: dict[str, QToolButton] = {}
        self.more = QComboBox()
        self.more.setObjectName("moreGroups")
        self.more.setToolTip("The other groups: choosing one selects its hosts")
        self.more.activated.connect(self._more_chosen)
        label = QLabel("Select a group:")
        label.setStyleSheet(f"color: {MUTED};")
        label.setToolTip("Click a group to select all its hosts; give hosts tags in the host editor or with "
                         "`benchbay host edit NAME --tag rack3`")
        self._grid = QGridLayout()
        self._grid.setSpacing(3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 2)
        layout.setSpacing(2)
        layout.addWidget(label)
        layout.addLayout(self._grid)
        self.hide()

    def set_groups(self, groups: Mapping[str, Sequence[str]]) -> None:
        """tag -> its hosts, in the order to show (app.engine.hosts_map.host_groups gives it)."""
        self.groups = {tag: list(hosts) for tag, hosts in groups.items()}
        for button in self.buttons.values():
            self._grid.removeWidget(button)
            button.deleteLater()
        self._grid.removeWidget(self.more)
        self.buttons = {}
        tags = list(self.groups)
        shown = tags if len(tags) <= MAX_BUTTONS else tags[:MAX_BUTTONS - 1]
        for index, tag in enumerate(shown):
            hosts = self.groups[tag]
            button = QToolButton()
            button.setObjectName("hostGroupButton")
            button.setText(f"{tag} ({len(hosts)})")
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            button.setToolTip(f"Select the {len(hosts)} hosts tagged {tag}: " + ", ".join(hosts[:12])
                              + (" …" if len(hosts) > 12 else ""))
            button.clicked.connect(lambda _checked=False, t=tag: self.group_chosen.emit(t, list(self.groups[t])))
            self._grid.addWidget(button, index // COLUMNS, index % COLUMNS)
            self.buttons[tag] = button
        rest = tags[len(shown):]
        self.more.clear()
        if rest:
            self.more.addItem(f"{len(rest)} more…", "")
            for tag in rest:
                self.more.addItem(f"{tag} ({len(self.groups[tag])})", tag)
            self._grid.addWidget(self.more, len(shown) // COLUMNS, len(shown) % COLUMNS)
        self.more.setVisible(bool(rest))
        self.setVisible(bool(self.groups))

    def _more_chosen(self, index: int) -> None:
        tag = self.more.itemData(index)
        if tag:
            self.group_chosen.emit(tag, list(self.groups[tag]))
        self.more.setCurrentIndex(0)


def select_hosts(hosts: QListWidget, names: Iterable[str]) -> list[str]:
    """Make exactly these hosts the list's selection (the first one current); the names selected."""
    wanted = set(names)
    hosts.clearSelection()
    chosen = []
    for row in range(hosts.count()):
        item = hosts.item(row)
        if item.data(NAME_ROLE) in wanted:
            if not chosen:
                hosts.setCurrentItem(item, QItemSelectionModel.SelectionFlag.NoUpdate)
            item.setSelected(True)
            chosen.append(item.data(NAME_ROLE))
    return chosen
