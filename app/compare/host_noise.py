"""How much a host's own figures varied from run to run, from its repeats in the store.

A single run is judged with its figure's noise floor (app.compare.noise_floors). When the store holds a
repeat group of the same host and test (three completed runs or more), their spread says how far this
host's next run may land; the verdict uses it where it is wider than the floor (three runs can agree
closely by chance, so it never narrows the floor). A spread measured over a few runs is itself uncertain:
it goes with its degrees of freedom (runs - 1), and the verdict's range then uses Student's t instead of
the normal quantile (app.compare.ties). Taken as exact, single runs of identical twins 107x apart on a
throttled disk's p99 were named a winner.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from app.compare.metrics import figures
from storage.records import RunStatus

MIN_RUNS = 3
LOOK_BACK = 60      # the host's latest runs of the test searched for a repeat group


class HostSpread(NamedTuple):
    """How much a host's repeats varied: sd of log(figure), and over how many runs."""

    log_sd: float
    runs: int

    @property
    def df(self) -> int:
        return self.runs - 1


def log_sd(values: Sequence[float]) -> float | None:
    """The sample standard deviation of log(value); None for fewer than MIN_RUNS positive values."""
    logs = [math.log(v) for v in _usable(values)]
    if len(logs) < MIN_RUNS:
        return None
    mean = math.fsum(logs) / len(logs)
    return math.sqrt(math.fsum((x - mean) ** 2 for x in logs) / (len(logs) - 1))


def _usable(values: Sequence[float]) -> list[float]:
    """The figures a spread of logs can be taken over: finite and positive."""
    return [v for v in values if math.isfinite(v) and v > 0]


def host_noise(source: Any, host: str, test: str) -> dict[str, HostSpread]:
    """metric key -> the spread of log(figure) over the host's latest repeat group of `test` with MIN_RUNS or more
    completed runs; {} when there is none (or the source cannot list runs)."""
    lister = getattr(source, "list_runs", None)
    if lister is None:
        return {}
    groups: dict[str, list[int]] = {}
    for run in lister(host=host, test=test, limit=LOOK_BACK):   # newest first
        if run.repeat_group and run.status == RunStatus.DONE:
            groups.setdefault(run.repeat_group, []).append(run.id)
    group = next((ids for ids in groups.values() if len(ids) >= MIN_RUNS), None)
    if group is None:
        return {}
    each = [figures(source.run_detail(run_id).results) for run_id in group]
    out = {}
    for key in dict.fromkeys(k for found in each for k in found):
        values = [found[key].value for found in each if key in found]
        spread = log_sd(values)
        if spread is not None:
            out[key] = HostSpread(spread, len(_usable(values)))
    return out
