"""The Compare tab's prices: a price per server for this comparison, saved in the comparison's options.

The comparison divides its headline figures by them (app.compare.prices); a price here is over the host's
price in the inventory, and None for a host says "no price in this comparison" even when the inventory
has one. The dialog speaks PriceFields (widgets), the comparison HostPrice (storage): translated here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QPushButton, QWidget

from app.compare.model import Comparison, RunInput
from app.compare.prices import price_from_json, prices_from_options, prices_to_options
from storage.records import HostPrice, SavedComparison
from widgets.comparison_prices import ComparisonPricesDialog, PricedServer, changed_prices
from widgets.price_group import PriceFields

ComparisonPrices = dict[str, "HostPrice | None"]   # host -> its price here; None: unpriced here


class PricesSource(Protocol):
    """What the prices use of the Compare tab (which imports this module): also their Qt parent."""

    comparison: Comparison | None
    inputs: list[RunInput]

    def window(self) -> QWidget: ...
    def show_status(self, text: str, to_window: bool = False) -> None: ...


def _fields(price: HostPrice | None) -> PriceFields | None:
    return PriceFields(**asdict(price)) if price is not None else None


def _record(price: PriceFields | None) -> HostPrice | None:
    return price_from_json(asdict(price)) if price is not None else None


class ComparePrices(QObject):
    """The "Prices…" button, its dialog and the prices the comparison is built with."""

    def __init__(self, tab: PricesSource, on_change: Callable[[], None]) -> None:
        super().__init__(tab)   # type: ignore[arg-type]
        self.tab = tab
        self.on_change = on_change
        self.prices: ComparisonPrices = {}
        self.dialog: ComparisonPricesDialog | None = None
        self.button = QPushButton("Prices…")
        self.button.setObjectName("pricesButton")
        self.button.setToolTip("A price per server for this comparison (amount, currency, per month or once, "
                               "date, source): figures per price unit in the table, the CSV and the PDF")
        self.button.clicked.connect(lambda _checked=False: self.open_dialog())

    def inventory(self) -> dict[str, HostPrice]:
        """The hosts' own prices, as loaded with the runs."""
        out: dict[str, HostPrice] = {}
        for run in self.tab.inputs:
            if run.price is not None:
                out.setdefault(run.record.host_name, run.price)
        return out

    def servers(self) -> list[PricedServer]:
        """One entry per host of the comparison (a host compared with itself over time is priced once)."""
        comparison = self.tab.comparison
        if comparison is None:
            return []
        inventory = self.inventory()
        rows_of: dict[str, list[str]] = {}
        for row in comparison.rows:
            rows_of.setdefault(row.host, []).append(row.label)
        out = []
        for host, labels in rows_of.items():
            own = self.prices[host] if host in self.prices else inventory.get(host)
            out.append(PricedServer(host, labels[0] if len(labels) == 1 else host, _fields(own),
                                    _fields(inventory.get(host))))
        return out

    def open_dialog(self) -> ComparisonPricesDialog | None:
        if self.tab.comparison is None:
            return None
        if self.dialog is not None:
            self.dialog.raise_()
            return self.dialog
        dialog = ComparisonPricesDialog(self.servers(), self.tab.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.apply(dialog.values()))
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        self.dialog = dialog
        dialog.open()
        return dialog

    def apply(self, entered: Mapping[str, PriceFields | None]) -> None:
        """The dialog's prices: kept where they differ from the inventory, then the comparison rebuilt."""
        inventory = {host: fields for host, price in self.inventory().items()
                     if (fields := _fields(price)) is not None}
        try:
            prices = {host: _record(price) for host, price in changed_prices(entered, inventory).items()}
        except ValueError as exc:   # the dialog checks the same; a price the store would refuse is not kept
            self.tab.show_status(f"Prices not changed: {exc}")
            return
        self.set_prices(prices)
        priced = sum(1 for row in self.tab.comparison.rows if row.price is not None) if self.tab.comparison else 0
        self.tab.show_status(f"Prices set for {priced} server{'s' if priced != 1 else ''}" if priced
                             else "No prices: no figures per price")

    def set_prices(self, prices: Mapping[str, HostPrice | None]) -> None:
        self.prices = dict(prices)
        self.on_change()

    def restore(self, saved: SavedComparison) -> None:
        """A saved comparison's prices (before it is shown)."""
        self.prices = prices_from_options(saved.options)

    def clear(self) -> None:
        self.prices = {}

    def options(self) -> dict[str, Any]:
        return prices_to_options(self.prices)

    def changed_since(self, saved: SavedComparison) -> bool:
        return prices_from_options(saved.options) != self.prices

    def set_enabled(self, enabled: bool) -> None:
        self.button.setEnabled(enabled)
