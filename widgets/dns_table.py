"""The dns lines' table as text, one formatter for the Compare tab and the PDF, so a figure reads the same in
both; the CSV and `compare --json` carry the same values at full precision (line_values).

Qt-free: the report imports it too.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from widgets.format import number

COLUMNS = ("Resolver", "Pass", "Answered", "NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "Timeouts",
           "p50 ms", "p90 ms", "p99 ms", "max ms", "Total s", "q/s", "Engine")
# per column after Resolver and Pass: where the line keeps it ("counts" or "latency" key, or an attribute)
COUNT_KEYS = ("answered", "noerror", "nxdomain", "servfail", "refused", "timeouts")
LATENCY_KEYS = ("p50_ms", "p90_ms", "p99_ms", "max_ms")
VALUE_KEYS = COUNT_KEYS + LATENCY_KEYS + ("total_s", "qps")


def ms(value: float | None) -> str:
    return "timeout" if value is None or not math.isfinite(value) else number(value)


def count(value: float | None) -> str:
    return "—" if value is None else f"{int(value):,}"


def line_values(line: Any) -> dict[str, Any]:
    """A line's figures by key (VALUE_KEYS), as stored: int counts, float latencies and times, None if absent."""
    counts: Mapping[str, int] = line.counts
    latency: Mapping[str, float] = line.latency
    out: dict[str, Any] = {key: (int(counts[key]) if key in counts else None) for key in COUNT_KEYS}
    out.update({key: latency.get(key) for key in LATENCY_KEYS})
    out.update(total_s=line.total_s, qps=line.qps)
    return out


def line_cells(line: Any) -> list[str]:
    """The COLUMNS of one line as the tables show them."""
    values = line_values(line)
    return ([line.label, line.pass_] + [count(values[key]) for key in COUNT_KEYS]
            + [ms(values[key]) for key in LATENCY_KEYS]
            + [number(values["total_s"]), number(values["qps"]), line.engine or "—"])
