"""The host editor's optional price: amount, currency, per month or once, when and where it was seen.

A comparison divides its headline figures by it (IOPS per €/month ...). Amount 0 means no price.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QGroupBox, QHBoxLayout, QLineEdit, QVBoxLayout, QWidget

MONTHLY, ONCE = "month", "once"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class PriceFields:
    """A price as the editor shows and returns it (the application keeps its own record of it)."""

    amount: float
    currency: str
    period: str = MONTHLY
    date: str = ""
    source: str = ""


class PriceGroup(QGroupBox):
    """One compact row for the price, one for its date and source; `value()` is None without an amount."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Price (optional, for performance per price)", parent)
        self.setObjectName("priceGroup")
        self.amount_spin = QDoubleSpinBox()
        self.amount_spin.setObjectName("priceAmount")
        self.amount_spin.setRange(0.0, 1e9)
        self.amount_spin.setDecimals(2)
        self.amount_spin.setSpecialValueText("none")
        self.amount_spin.setToolTip("What the host costs; none: comparisons show no figures per price for it")
        self.currency_edit = QLineEdit("EUR")
        self.currency_edit.setObjectName("priceCurrency")
        self.currency_edit.setMaxLength(10)
        self.currency_edit.setFixedWidth(64)
        self.period_combo = QComboBox()
        self.period_combo.setObjectName("pricePeriod")
        self.period_combo.addItem("per month", MONTHLY)
        self.period_combo.addItem("once (bought)", ONCE)
        self.date_edit = QLineEdit()
        self.date_edit.setObjectName("priceDate")
        self.date_edit.setPlaceholderText("seen on YYYY-MM-DD")
        self.date_edit.setFixedWidth(150)
        self.source_edit = QLineEdit()
        self.source_edit.setObjectName("priceSource")
        self.source_edit.setPlaceholderText("source: price list, quote, URL")

        first = QHBoxLayout()
        first.addWidget(self.amount_spin)
        first.addWidget(self.currency_edit)
        first.addWidget(self.period_combo)
        first.addStretch(1)
        second = QHBoxLayout()
        second.addWidget(self.date_edit)
        second.addWidget(self.source_edit, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(first)
        layout.addLayout(second)
        self.amount_spin.valueChanged.connect(lambda _v: self._changed())
        for edit in (self.currency_edit, self.date_edit, self.source_edit):
            edit.textChanged.connect(lambda _t: self._changed())
        self.period_combo.currentIndexChanged.connect(lambda _i: self._changed())
        self._changed()

    def value(self) -> PriceFields | None:
        amount = self.amount_spin.value()
        if amount <= 0:
            return None
        return PriceFields(amount, self.currency_edit.text().strip(), str(self.period_combo.currentData()),
                           self.date_edit.text().strip(), self.source_edit.text().strip())

    def set_value(self, price: PriceFields | None) -> None:
        self.amount_spin.setValue(price.amount if price else 0.0)
        if price is not None:
            self.currency_edit.setText(price.currency)
            self.period_combo.setCurrentIndex(max(self.period_combo.findData(price.period), 0))
            self.date_edit.setText(price.date)
            self.source_edit.setText(price.source)

    def problem(self) -> str:
        """Why the price cannot be saved ("" when it can, or when there is none)."""
        price = self.value()
        if price is None:
            return ""
        if not price.currency:
            return "A price needs its currency (e.g. EUR)."
        if price.date:
            try:
                valid = bool(_DATE.fullmatch(price.date)) and bool(date.fromisoformat(price.date))
            except ValueError:
                valid = False
            if not valid:
                return "The price's date is YYYY-MM-DD, e.g. 2026-11-01."
        return ""

    def _changed(self) -> None:
        has_price = self.amount_spin.value() > 0
        for widget in (self.currency_edit, self.period_combo, self.date_edit, self.source_edit):
            widget.setEnabled(has_price)
        self.changed.emit()
