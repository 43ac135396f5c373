"""A stored database-load run read from its results: each step's figures and its per-second lists.

The agent stores per step (metadata.step, metadata.clients) "ops_per_s" with the per-second totals
(metadata.per_second, per_second_by_op), "<op>_p50_ms" / "<op>_p99_ms" / "<op>_p999_ms" (the p99 with
metadata.p99_per_second), "errors" and "retries"; once per run "knee_clients" (metadata.knee: the step
index or null, metadata.rule). A run's time line lays its steps one after the other: step k's second s
sits at the seconds of the steps before it + s, so two servers' sweeps share one time axis.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.summary.base import result_field

DBLOAD = "dbload"
PERCENTILES = ("p50", "p99", "p999")
LATENCY = re.compile(r"^(?P<op>.+)_(?P<pct>p50|p99|p999)_ms$")
# the order a reader expects the operations in (pgbench, sysbench, redis); others after them
OP_ORDER = ("txn", "read", "write", "other", "get", "set")


def _numbers(values: Any) -> tuple[float, ...]:
    if not isinstance(values, list):
        return ()
    return tuple(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                 else math.nan for v in values)


def op_order(op: str) -> tuple[int, str]:
    return (OP_ORDER.index(op) if op in OP_ORDER else len(OP_ORDER), op)


@dataclass(frozen=True)
class DbStep:
    step: int
    clients: int
    ops: float                                   # median of the per-second totals
    per_second: tuple[float, ...] = ()
    by_op: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    cv: float | None = None                      # coefficient of variation of the per-second totals
    latency: Mapping[str, Mapping[str, float]] = field(default_factory=dict)   # op -> p50/p99/p999 (ms)
    p99_per_second: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    errors: float = 0.0
    retries: float = 0.0
    tool_total: float | None = None

    @property
    def seconds(self) -> int:
        return max([len(self.per_second), *(len(v) for v in self.p99_per_second.values())])

    @property
    def label(self) -> str:
        return f"{self.clients} client{'s' if self.clients != 1 else ''}"


@dataclass(frozen=True)
class DbLoad:
    steps: tuple[DbStep, ...]                    # in run order
    engine: str = ""                             # "pgbench 15.19"
    workload: str = ""
    rate: float | None = None
    knee: int | None = None                      # the knee's step index (None: no knee, or not stored)
    knee_rule: str = ""
    knee_stored: bool = False

    @property
    def ops(self) -> list[str]:
        """Every operation with a per-second count or a latency, in a reader's order."""
        names = {op for s in self.steps for op in (*s.by_op, *s.latency, *s.p99_per_second)}
        return sorted(names, key=op_order)

    @property
    def best(self) -> DbStep | None:
        """The step with the highest throughput (the first of equals)."""
        done = [s for s in self.steps if math.isfinite(s.ops)]
        return max(done, key=lambda s: s.ops) if done else None

    @property
    def knee_step(self) -> DbStep | None:
        return next((s for s in self.steps if s.step == self.knee), None)

    @property
    def errors(self) -> float:
        return sum(s.errors for s in self.steps)

    @property
    def retries(self) -> float:
        return sum(s.retries for s in self.steps)

    def knee_text(self) -> str:
        """ "knee at 8 clients (throughput under 1.1x the previous best)", "no knee within the sweep"."""
        if not self.knee_stored:
            return ""
        step = self.knee_step
        rule = f" ({self.knee_rule})" if self.knee_rule else ""
        if step is None:
            return "no knee within the sweep" if len(self.steps) > 1 else "one step: no sweep"
        return f"knee at {step.label}{rule}"

    def offsets(self) -> list[float]:
        """Seconds before each step on the run's time line."""
        out, at = [], 0.0
        for step in self.steps:
            out.append(at)
            at += step.seconds
        return out

    def throughput_line(self, op: str | None = None) -> tuple[list[float], list[float]]:
        """(x, ops/s) over the whole run: the totals, or one operation's; x = the end of each second."""
        xs: list[float] = []
        ys: list[float] = []
        for offset, step in zip(self.offsets(), self.steps, strict=True):
            values = step.per_second if op is None else step.by_op.get(op, ())
            xs += [offset + i + 1.0 for i in range(len(values))]
            ys += list(values)
        return xs, ys

    def p99_line(self, op: str) -> tuple[list[float], list[float]]:
        xs: list[float] = []
        ys: list[float] = []
        for offset, step in zip(self.offsets(), self.steps, strict=True):
            values = step.p99_per_second.get(op, ())
            xs += [offset + i + 1.0 for i in range(len(values))]
            ys += list(values)
        return xs, ys

    def step_starts(self) -> list[tuple[float, str]]:
        """(x, "8 clients") where each step begins on the time line."""
        return [(offset, step.label) for offset, step in zip(self.offsets(), self.steps, strict=True)]


def dbload_of(results: Iterable[Any]) -> DbLoad | None:
    """The run's steps from its results; None when it holds no dbload step."""
    steps: dict[int, dict[str, Any]] = {}
    engine = workload = ""
    rate: float | None = None
    knee: int | None = None
    rule = ""
    knee_stored = False
    for result in results:
        if result_field(result, "test") != DBLOAD:
            continue
        metric = str(result_field(result, "metric") or "")
        value = result_field(result, "value")
        meta = dict(result_field(result, "metadata") or {})
        if metric == "knee_clients":
            knee_stored = True
            knee = meta.get("knee") if isinstance(meta.get("knee"), int) else None
            rule = str(meta.get("rule") or "")
            continue
        if not isinstance(meta.get("step"), int) or not isinstance(value, (int, float)):
            continue
        engine = engine or str(meta.get("engine") or "")
        workload = workload or str(meta.get("workload") or "")
        if rate is None and isinstance(meta.get("rate"), (int, float)):
            rate = float(meta["rate"])
        step = steps.setdefault(meta["step"], {"clients": int(meta.get("clients") or 0), "latency": {},
                                               "p99s": {}})
        if metric == "ops_per_s":
            step["ops"] = float(value)
            step["per_second"] = _numbers(meta.get("per_second"))
            by_op = meta.get("per_second_by_op")
            step["by_op"] = {str(k): _numbers(v) for k, v in by_op.items()} if isinstance(by_op, dict) else {}
            step["cv"] = float(meta["cv"]) if isinstance(meta.get("cv"), (int, float)) else None
            step["tool_total"] = float(meta["tool_total"]) if isinstance(meta.get("tool_total"), (int, float)) \
                else None
        elif metric in ("errors", "retries"):
            step[metric] = float(value)
        else:
            match = LATENCY.match(metric)
            if match:
                op = str(meta.get("op") or match["op"])
                step["latency"].setdefault(op, {})[match["pct"]] = float(value)
                if match["pct"] == "p99" and isinstance(meta.get("p99_per_second"), list):
                    step["p99s"][op] = _numbers(meta["p99_per_second"])
    made = tuple(DbStep(index, raw["clients"], raw.get("ops", math.nan), raw.get("per_second", ()),
                        raw.get("by_op", {}), raw.get("cv"), raw["latency"], raw["p99s"], raw.get("errors", 0.0),
                        raw.get("retries", 0.0), raw.get("tool_total"))
                 for index, raw in sorted(steps.items()))
    if not made:
        return None
    return DbLoad(made, engine, workload, rate, knee, rule, knee_stored)


def cv_percent(values: Sequence[float]) -> float | None:
    """The coefficient of variation (%) of the per-second figures; None with fewer than two."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return None
    mean = math.fsum(finite) / len(finite)
    if mean <= 0:
        return None
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in finite) / (len(finite) - 1))
    return 100.0 * sd / mean
