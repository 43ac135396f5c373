"""A host's price in the inventory: read for comparisons, set from the command line or the host editor.

The built-in host `local` is not stored, so it has no price here; a comparison can still set one.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from app.errors import AppError
from storage.db import Store
from storage.records import RESERVED_HOST_NAME, HostPrice


class PriceServices(Protocol):
    @property
    def store(self) -> Store: ...


def host_prices(bench: Any, hosts: Iterable[str] | None = None) -> dict[str, HostPrice]:
    """The inventory's prices (of these hosts, or of all); {} for a source without an inventory."""
    store = getattr(bench, "store", None)   # a comparison may be built from runs alone (tests, a read-only file)
    if store is None or not hasattr(store, "hosts"):
        return {}
    if hosts is None:
        return {record.name: record.price for record in store.hosts.list() if record.price is not None}
    out = {}
    for name in dict.fromkeys(hosts):
        record = store.hosts.get(name) if name != RESERVED_HOST_NAME else None
        if record is not None and record.price is not None:
            out[name] = record.price
    return out


def set_host_price(bench: PriceServices, name: str, price: HostPrice | None) -> None:
    """Set or (None) forget a stored host's price; StoreError when the price is not one, NotFound for no host."""
    if name == RESERVED_HOST_NAME:
        raise AppError(f"the built-in host '{RESERVED_HOST_NAME}' has no price in the inventory: give it one for a "
                       "comparison (benchbay compare --price local=120 EUR/month)")
    bench.store.hosts.set_price(name, price)
