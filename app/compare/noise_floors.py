"""How much a figure varies from one run to the next on the same host, when the runs themselves cannot say.

A single run tells how steady it was, not where the next run would land. For such a run the verdict
(app.compare.ties) uses the figure's noise floor: the relative standard deviation between runs of one
host, measured on real hosts and shipped as data in resources/noise_floors.json:

    {"<test>": {"<metric key>": {"rsd_percent": 10.0, "runs": 6, "hosts": 2, "how": "where it came from"}}}

The metric keys are the catalogue's ("cpu:multi", "disk:randread_4k.lat_p99"). A figure the file does not
name gets DEFAULT_RSD_PERCENT, a tail latency (p99 and beyond) DEFAULT_TAIL_RSD_PERCENT.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from resources import resource_text

FLOORS_FILE = "noise_floors.json"
DEFAULT_RSD_PERCENT = 15.0
DEFAULT_TAIL_RSD_PERCENT = 80.0


@dataclass(frozen=True)
class NoiseFloor:
    """The run-to-run variation of one figure on one host."""

    key: str
    rsd_percent: float
    runs: int
    hosts: int
    how: str

    @property
    def log_sd(self) -> float:
        """The spread as the standard deviation of log(figure) (a log-normal with this relative sd)."""
        return math.sqrt(math.log1p((self.rsd_percent / 100.0) ** 2))


def is_tail(key: str) -> bool:
    """A tail latency (p99, p99.9): it varies far more from run to run than a rate."""
    metric = key.partition(":")[2]
    return "p99" in metric or "p999" in metric


def parse_floors(data: Any) -> dict[str, NoiseFloor]:
    """metric key -> NoiseFloor from the file's JSON; ValueError naming what is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError("the noise floors are an object of tests")
    out: dict[str, NoiseFloor] = {}
    for test, figures in data.items():
        if not isinstance(figures, Mapping):
            raise ValueError(f"noise floors of {test!r}: an object of metric keys")
        for key, entry in figures.items():
            if not isinstance(entry, Mapping):
                raise ValueError(f"noise floor {key!r}: an object")
            rsd = entry.get("rsd_percent")
            if isinstance(rsd, bool) or not isinstance(rsd, (int, float)) or not 0 < rsd < 1000:
                raise ValueError(f"noise floor {key!r}: rsd_percent must be a number above 0, not {rsd!r}")
            runs, hosts = entry.get("runs", 0), entry.get("hosts", 0)
            if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (runs, hosts)):
                raise ValueError(f"noise floor {key!r}: runs and hosts must be whole numbers")
            out[str(key)] = NoiseFloor(str(key), float(rsd), runs, hosts, str(entry.get("how", "")))
    return out


@lru_cache(maxsize=1)
def shipped_floors() -> dict[str, NoiseFloor]:
    """The floors shipped with Benchbay; {} when the file is missing (the defaults then apply)."""
    text = resource_text(FLOORS_FILE)
    return parse_floors(json.loads(text)) if text else {}


def floor_for(key: str, floors: Mapping[str, NoiseFloor] | None = None) -> NoiseFloor:
    """The noise floor of a metric key ("cpu:multi"; a figure per price unit is looked up by its figure's)."""
    known = shipped_floors() if floors is None else floors
    found = known.get(key)
    if found is not None:
        return found
    if is_tail(key):
        return NoiseFloor(key, DEFAULT_TAIL_RSD_PERCENT, 0, 0, "No floor measured for this tail latency: "
                          f"assumed {DEFAULT_TAIL_RSD_PERCENT:g} %.")
    return NoiseFloor(key, DEFAULT_RSD_PERCENT, 0, 0, f"No floor measured for this figure: assumed "
                      f"{DEFAULT_RSD_PERCENT:g} %.")
