"""The dbload test's arithmetic: percentiles, medians, variation, the knee of a client sweep, and the
results of one step as the workbench stores them.

A step summary (what every engine module returns for one step of the sweep):
  {"engine": "pgbench 15.20", "per_second": [tick, ...], "lat_ms": {op: {"p50": x, "p99": y, "p999": z}},
   "errors": int, "retries": int, "tool_total": float or None, "total_op": "txn" | None,
   "extra": {...}}   (extra: more metadata for the ops_per_s result, e.g. what the tool printed)
  a tick: {"second": int (1-based), "t": host unix time at its end, "ops": {op: per second},
           "lat_ms": {op: {"p50": x, "p99": y, "p999": z}}, "errors": int, "retries": int}
The per-second total is ops[total_op] when the engine names one (pgbench and sysbench: transactions),
else the sum over ops (redis: get + set).
"""
import math
from typing import Any, Dict, List, Optional, Sequence  # noqa: F401 - some only in type comments

from .common import emit_result, rates

PERCENTILES = (("p50", 0.50), ("p99", 0.99), ("p999", 0.999))
KNEE_FACTOR = 1.1
KNEE_THROUGHPUT = "throughput under 1.1x the previous best"


def percentile(sorted_values: Sequence[float], fraction: float) -> Optional[float]:
    """Nearest rank: the smallest value with at least `fraction` of the values at or below it."""
    if not sorted_values:
        return None
    rank = max(int(math.ceil(fraction * len(sorted_values))), 1)
    return float(sorted_values[min(rank, len(sorted_values)) - 1])


def percentiles_ms(values: Sequence[float], scale: float = 1.0) -> Dict[str, Optional[float]]:
    """p50, p99 and p99.9 of `values` times `scale` (e.g. 0.001 for microseconds to ms)."""
    ordered = sorted(values)
    out = {}   # type: Dict[str, Optional[float]]
    for name, fraction in PERCENTILES:
        value = percentile(ordered, fraction)
        out[name] = None if value is None else round(value * scale, 3)
    return out


def median(values: Sequence[float]) -> Optional[float]:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def cv(values: Sequence[float]) -> Optional[float]:
    """Coefficient of variation (sample standard deviation / mean) of the per-second totals."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    if mean <= 0:
        return None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return round(sd / mean, 4)


def tick_total(tick: Dict[str, Any], total_op: Optional[str]) -> float:
    ops = tick.get("ops") or {}
    if total_op:
        return float(ops.get(total_op) or 0.0)
    return float(sum(v for v in ops.values() if v is not None))


def step_throughput(summary: Dict[str, Any]) -> Optional[float]:
    totals = [tick_total(t, summary.get("total_op")) for t in summary["per_second"]]
    return median(totals)


def knee(throughputs: Sequence[Optional[float]], p99s: Sequence[Optional[float]],
         p99_limit_ms: Optional[float]) -> Dict[str, Any]:
    """The first step (1-based) whose throughput is under 1.1x the best before it, or whose p99 is over
    the limit; {"knee": None} when no step is."""
    best = None   # type: Optional[float]
    for index, value in enumerate(throughputs):
        p99 = p99s[index] if index < len(p99s) else None
        if p99_limit_ms is not None and p99 is not None and p99 > p99_limit_ms:
            return {"knee": index + 1, "rule": "p99 over {:g} ms".format(p99_limit_ms)}
        if value is None:
            continue
        if best is not None and value < KNEE_FACTOR * best:
            return {"knee": index + 1, "rule": KNEE_THROUGHPUT}
        best = value if best is None else max(best, value)
    return {"knee": None, "rule": KNEE_THROUGHPUT + (" or p99 over {:g} ms".format(p99_limit_ms)
                                                     if p99_limit_ms is not None else "")}


def main_p99(summary: Dict[str, Any]) -> Optional[float]:
    """The p99 the latency limit is held against: the worst op's p99 of the whole step."""
    found = [v.get("p99") for v in (summary.get("lat_ms") or {}).values() if v.get("p99") is not None]
    return max(found) if found else None


def emit_step_results(ctx: Any, summary: Dict[str, Any], base: Dict[str, Any]) -> None:
    """The step's results as in the contract: ops_per_s, <op>_p50/p99/p999_ms, errors, retries."""
    ticks = summary["per_second"]
    total_op = summary.get("total_op")
    totals = [round(tick_total(t, total_op), 3) for t in ticks]
    by_op = {}   # type: Dict[str, List[Optional[float]]]
    for tick in ticks:
        for op in tick.get("ops") or {}:
            by_op.setdefault(op, [])
    for op in by_op:
        by_op[op] = [(t.get("ops") or {}).get(op) for t in ticks]
    throughput = median(totals)
    meta = dict(base, per_second=totals, per_second_by_op=by_op, cv=cv(totals),
                tool_total=summary.get("tool_total"), counts=total_op or "operations",
                seconds=len(totals))
    meta.update(summary.get("extra") or {})
    t0 = (ticks[0]["t"] - 1.0) if ticks else 0.0
    emit_result(ctx, "dbload", "ops_per_s", throughput if throughput is not None else 0.0, "ops/s", meta,
                rates(totals, 1.0, t0) if totals else None)
    for op, lat in sorted((summary.get("lat_ms") or {}).items()):
        for name, _fraction in PERCENTILES:
            value = lat.get(name)
            if value is None:
                continue
            op_meta = dict(base, op=op)
            if name == "p99":
                op_meta["p99_per_second"] = [((t.get("lat_ms") or {}).get(op) or {}).get("p99") for t in ticks]
            if lat.get("source"):
                op_meta["source"] = lat["source"]
            ctx.result("dbload", "{}_{}_ms".format(op, name), value, "ms", op_meta)
    ctx.result("dbload", "errors", int(summary.get("errors") or 0), "count", base)
    ctx.result("dbload", "retries", int(summary.get("retries") or 0), "count", base)
