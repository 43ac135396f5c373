"""Performance per price: a host's price (from the inventory, or set for one comparison) and the figures
per price unit a comparison adds: IOPS per €/month, msg/s per €/month, CPU score per € ...

Only figures where more is better are divided by the price (seconds per euro mean nothing), and only the
headline figure of each test. Servers priced in different currencies or periods (a rent and a purchase)
get columns of their own: a price in EUR is not compared with one in USD.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.compare.metrics import HIGHER, Figure, Metric
from storage.hosts import price_problem
from storage.records import PRICE_MONTHLY, PRICE_ONCE, HostPrice

PRICES_OPTION = "prices"    # Comparison.options["prices"]: {host name: {"amount": ..., "currency": ...}}
SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "CHF": "CHF"}
PER_PRICE = " per "         # in a price column's key: "cpu:multi per EUR/month"


def price_unit(price: HostPrice) -> str:
    """ "€/month" for a rent, "€" for a purchase."""
    symbol = SYMBOLS.get(price.currency.upper(), price.currency)
    return f"{symbol}/month" if price.period == PRICE_MONTHLY else symbol


def price_text(price: HostPrice) -> str:
    """ "120 €/month", "3,400 € once"."""
    amount = f"{price.amount:,.2f}".removesuffix(".00")
    return f"{amount} {price_unit(price)}" + (" once" if price.period == PRICE_ONCE else "")


def price_line(label: str, price: HostPrice) -> str:
    """ "db-1: 120 €/month (as of 2026-11-01; source: Hetzner price list)"."""
    said = [f"as of {price.date}" if price.date else "date not given",
            f"source: {price.source}" if price.source else "source not given"]
    return f"{label}: {price_text(price)} ({'; '.join(said)})"


def price_from_json(data: Any) -> HostPrice:
    """A price from its JSON form (comparison options, the command line); ValueError saying what is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError(f"a price is an object with amount and currency, not {type(data).__name__}")
    amount = data.get("amount")
    if isinstance(amount, str):
        try:
            amount = float(amount)
        except ValueError:
            raise ValueError(f"a price's amount is a number, not {amount!r}"[:200]) from None
    price = HostPrice(amount=amount, currency=str(data.get("currency") or "").strip(),   # type: ignore[arg-type]
                      period=str(data.get("period") or PRICE_MONTHLY), date=str(data.get("date") or ""),
                      source=str(data.get("source") or ""))
    problem = price_problem(price)
    if problem:
        raise ValueError(problem)
    return replace(price, amount=float(price.amount))


_PRICE_TEXT = re.compile(r"(?P<amount>[0-9]+(?:\.[0-9]+)?)\s*(?P<currency>[^\s/0-9.,][^\s/]{0,9})"
                         r"(?:\s*/\s*(?P<period>month|once))?", re.IGNORECASE)
PRICE_FORMAT = "AMOUNT CURRENCY/month or AMOUNT CURRENCY/once, e.g. '120 EUR/month'"


def parse_price(text: str, date: str = "", source: str = "") -> HostPrice:
    """ "120 EUR/month", "3400 EUR/once" (a rent per month when no period is said); ValueError otherwise."""
    match = _PRICE_TEXT.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"a price is {PRICE_FORMAT}, not {text[:60]!r}")
    return price_from_json({"amount": match["amount"], "currency": match["currency"],
                            "period": (match["period"] or PRICE_MONTHLY).lower(), "date": date.strip(),
                            "source": source.strip()})


def price_to_json(price: HostPrice) -> dict[str, Any]:
    return {"amount": price.amount, "currency": price.currency, "period": price.period, "date": price.date,
            "source": price.source}


def prices_from_options(options: Mapping[str, Any] | None) -> dict[str, HostPrice | None]:
    """The prices a saved comparison sets for its hosts, a null entry being "no price here" (over the
    host's inventory price); a malformed entry is left out (the inventory price then applies), never a crash."""
    raw = (options or {}).get(PRICES_OPTION)
    if not isinstance(raw, Mapping):
        return {}
    out: dict[str, HostPrice | None] = {}
    for host, data in raw.items():
        if data is None:
            out[str(host)] = None
            continue
        try:
            out[str(host)] = price_from_json(data)
        except ValueError:
            continue
    return out


def prices_to_options(prices: Mapping[str, HostPrice | None]) -> dict[str, Any]:
    """The saved comparison's options entry: {"prices": {host: price or null}}; {} when none is set."""
    if not prices:
        return {}
    return {PRICES_OPTION: {host: price_to_json(price) if price is not None else None
                            for host, price in prices.items()}}


def price_metric(item: Metric, price: HostPrice) -> Metric:
    """The column of `item` per price unit of `price`'s currency and period."""
    unit = price_unit(price)
    key = f"{item.key}{PER_PRICE}{price.currency.upper()}/{price.period}"
    return replace(item, key=key, label=f"{item.label} per price", unit=f"{item.unit} per {unit}",
                   headline=False, derived=True)


def is_price_metric(item: Metric) -> bool:
    return PER_PRICE in item.key


def base_key(key: str) -> str:
    """The figure a price column divides: "cpu:multi per EUR/month" -> "cpu:multi"."""
    return key.partition(PER_PRICE)[0]


def priced(item: Metric) -> bool:
    """Is this figure shown per price unit too."""
    return item.headline and item.better == HIGHER and not is_price_metric(item)


def per_price(figure: Figure, price: HostPrice) -> Figure | None:
    """The figure divided by the price, its spread scaled alike (the price itself is exact)."""
    if not price.amount or not math.isfinite(figure.value):
        return None
    scale = 1.0 / price.amount
    spread = figure.spread
    if spread is not None:
        spread = replace(spread, mean=spread.mean * scale, sd=spread.sd * scale, min=spread.min * scale,
                         max=spread.max * scale, p5=spread.p5 * scale, p50=spread.p50 * scale,
                         p95=spread.p95 * scale)
    return Figure(figure.value * scale, figure.metadata, price_text(price), spread, figure.repeats,
                  tuple(v * scale for v in figure.values), figure.steal, figure.workers)

