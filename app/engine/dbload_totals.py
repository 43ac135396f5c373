"""The arithmetic of a database load from several client hosts against one target: totals per second and per
step, each client's share, the knee of the totals. Pure functions over stored runs (app.summary.dbload_series),
so the rules can be checked by hand:

- per second: the clients started each step at one instant (the shared-storage test's synchronized start), so
  second i of every client is the same second and the total is the plain sum; a client that reported fewer
  seconds than another adds nothing to the seconds it did not report, and the step says so;
- a step's figure is the median of its per-second totals, as for one client;
- a client's share is its requests over the step's requests (sums of the seconds);
- the knee: the first step whose total is under 1.1x the best total before it (the agent's own rule).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.summary.dbload_series import DbLoad, cv_percent

KNEE_FACTOR = 1.1
KNEE_RULE = "total throughput under 1.1x the previous best"


@dataclass(frozen=True)
class DbStepTotal:
    step: int
    clients: int                                  # connections of all client hosts together
    per_second: tuple[float, ...]                 # the sum of the clients' seconds
    ops: float                                    # median of per_second
    shares: Mapping[str, float] = field(default_factory=dict)   # host -> its part of the step's requests (0-1)
    short: Mapping[str, int] = field(default_factory=dict)      # host -> seconds it reported fewer than the longest

    @property
    def cv(self) -> float | None:
        return cv_percent(self.per_second)

    def shares_text(self) -> str:
        """ "db-c1 52 %, db-c2 48 %" (and which client's seconds ran short)."""
        parts = [f"{host} {share * 100:.0f} %" for host, share in self.shares.items()]
        parts += [f"{host} reported {n} second{'s' if n != 1 else ''} fewer" for host, n in self.short.items()]
        return ", ".join(parts)


@dataclass(frozen=True)
class DbLoadTotal:
    hosts: tuple[str, ...]
    steps: tuple[DbStepTotal, ...]
    knee: int | None                              # the step index of the knee (None: no knee)

    def knee_text(self) -> str:
        step = next((s for s in self.steps if s.step == self.knee), None)
        if step is None:
            return "no knee within the sweep" if len(self.steps) > 1 else "one step: no sweep"
        return f"knee at {step.clients} clients in all ({KNEE_RULE})"


def dbload_total(runs: Mapping[str, DbLoad]) -> DbLoadTotal:
    """The clients' runs (host -> its stored steps) summed step by step; steps all clients ran, in step order."""
    hosts = tuple(runs)
    common = sorted(set.intersection(*(set(s.step for s in load.steps) for load in runs.values()))) if runs else []
    steps = []
    for index in common:
        own = {host: next(s for s in load.steps if s.step == index) for host, load in runs.items()}
        longest = max(len(s.per_second) for s in own.values())
        totals = tuple(math.fsum(_at(s.per_second, i) for s in own.values()) for i in range(longest))
        requests = {host: math.fsum(v for v in s.per_second if math.isfinite(v)) for host, s in own.items()}
        whole = math.fsum(requests.values())
        shares = {host: (n / whole if whole > 0 else 0.0) for host, n in requests.items()}
        short = {host: longest - len(s.per_second) for host, s in own.items() if len(s.per_second) < longest}
        steps.append(DbStepTotal(index, sum(s.clients for s in own.values()), totals,
                                 statistics.median(totals) if totals else math.nan, shares, short))
    return DbLoadTotal(hosts, tuple(steps), _knee(steps))


def _at(values: tuple[float, ...], index: int) -> float:
    value = values[index] if index < len(values) else 0.0
    return value if math.isfinite(value) else 0.0


def _knee(steps: list[DbStepTotal]) -> int | None:
    best = -math.inf
    for position, step in enumerate(steps):
        if position and step.ops < best * KNEE_FACTOR:
            return step.step
        best = max(best, step.ops)
    return None
