"""The prices of one comparison's servers: a price group per server, for figures per price unit.

A price set here belongs to the comparison (saved with it), over the host's own price in the inventory;
a server with no price here shows its inventory price, if any, as a starting point, and clearing it
leaves that server unpriced in this comparison only.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from widgets.price_group import PriceFields, PriceGroup


@dataclass(frozen=True)
class PricedServer:
    """A server of the comparison as the dialog lists it."""

    host: str                       # the key the price is kept under
    label: str                      # what the table calls it
    price: PriceFields | None       # the comparison's own price, or None
    inventory: PriceFields | None = None   # the host's price in the inventory, when it has one


class ComparisonPricesDialog(QDialog):
    """One price group per server; OK only while every price entered is complete."""

    def __init__(self, servers: Sequence[PricedServer], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("comparisonPricesDialog")
        self.setWindowTitle("Prices for this comparison")
        self.servers = list(servers)
        self.groups: dict[str, PriceGroup] = {}
        intro = QLabel("A price per server adds figures per price unit (IOPS per €/month …) to the table, "
                       "the CSV and the PDF. These prices are saved with the comparison; a host's own price "
                       "is set in the host editor. Amount “none”: no price for that server here.")
        intro.setWordWrap(True)
        body = QWidget()
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, 0, 0)
        for server in self.servers:
            group = PriceGroup()
            group.setTitle(server.label)
            group.setObjectName(f"price:{server.host}")
            group.set_value(server.price or server.inventory)
            if server.inventory is not None:
                group.setToolTip("Filled in from the host inventory; a change here applies to this comparison "
                                 "only.")
            group.changed.connect(self._check)
            column.addWidget(group)
            self.groups.setdefault(server.host, group)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.hint = QLabel("")
        self.hint.setObjectName("pricesHint")
        self.hint.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button: QPushButton = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.clear_button = self.buttons.addButton("Clear all", QDialogButtonBox.ButtonRole.ResetRole)
        self.clear_button.setObjectName("clearPricesButton")
        self.clear_button.setToolTip("No price for any server in this comparison")
        self.clear_button.clicked.connect(lambda _checked=False: self.clear_all())
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.hint)
        layout.addWidget(self.buttons)
        self.resize(560, min(140 + 110 * len(self.servers), 620))
        self._check()

    def clear_all(self) -> None:
        for group in self.groups.values():
            group.set_value(None)

    def values(self) -> dict[str, PriceFields | None]:
        """host -> the price entered (None: no price for it in this comparison)."""
        return {host: group.value() for host, group in self.groups.items()}

    def _check(self) -> None:
        problems = [f"{self._label(host)}: {group.problem()}" for host, group in self.groups.items()
                    if group.problem()]
        self.hint.setText(problems[0] if problems else "")
        self.hint.setVisible(bool(problems))
        self.ok_button.setEnabled(not problems)

    def _label(self, host: str) -> str:
        return next((s.label for s in self.servers if s.host == host), host)


def changed_prices(entered: Mapping[str, PriceFields | None],
                   inventory: Mapping[str, PriceFields]) -> dict[str, PriceFields | None]:
    """What the comparison keeps of the dialog's prices: those that differ from the inventory's, None for
    a server whose inventory price is cleared for this comparison."""
    return {host: price for host, price in entered.items() if price != inventory.get(host)}

