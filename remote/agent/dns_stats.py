"""The figures of one resolver's pass: counts by rcode, timeouts, latency percentiles, the CDF, the slowest names."""
import heapq
import math
from typing import Any, Dict, List, Optional, Sequence  # noqa: F401 - some only in type comments

SLOWEST = 20
CDF_POINTS = 200
NAMED_RCODES = ("NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED")


def percentile(ordered: Sequence[float], pct: float) -> float:
    """Linear between the closest ranks (numpy's default), of an ascending list."""
    if not ordered:
        raise ValueError("no value")
    rank = (len(ordered) - 1) * pct / 100.0
    low = int(math.floor(rank))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def tick_percentiles(latencies: Sequence[float]) -> Dict[str, Optional[float]]:
    if not latencies:
        return {"p50": None, "p90": None, "p99": None}
    ordered = sorted(latencies)
    return {key: round(percentile(ordered, pct), 3) for key, pct in (("p50", 50), ("p90", 90), ("p99", 99))}


def cdf(ordered: Sequence[float], total: int, points: int = CDF_POINTS) -> List[List[float]]:
    """[[ms, fraction of all `total` queries answered within ms], ...] at log-spaced ms from the fastest to the
    slowest answer; timeouts never arrive, so the curve ends at answered/total."""
    if not ordered or total <= 0:
        return []
    low, high = max(ordered[0], 1e-3), max(ordered[-1], 1e-3)
    if high <= low * 1.000001:
        return [[round(high, 3), round(len(ordered) / total, 6)]]
    out = []  # type: List[List[float]]
    index = 0
    step = math.log(high / low) / (points - 1)
    for i in range(points):
        ms = high if i == points - 1 else low * math.exp(step * i)
        while index < len(ordered) and ordered[index] <= ms * (1 + 1e-9):
            index += 1
        out.append([round(ms, 3), round(index / total, 6)])
    return out


class Columns:
    """One pass's per-query figures, column by column (a max-mode run has hundreds of thousands of queries:
    no dict per query). name(i), qtype(i); latency ms or None (timeout); rcode name; tries; via."""

    def __init__(self, name: Any, qtype: Any, latency: Sequence[Optional[float]], rcode: Sequence[Optional[str]],
                 tries: Sequence[int], via: Sequence[str]) -> None:
        self.name, self.qtype, self.latency, self.rcode, self.tries, self.via = name, qtype, latency, rcode, tries, via

    @classmethod
    def of_records(cls, records: Sequence[Dict[str, Any]]) -> "Columns":
        return cls(lambda i: records[i]["name"], lambda i: records[i]["qtype"],
                   [r["latency_ms"] for r in records], [r["rcode"] for r in records],
                   [r["tries"] for r in records], [r["via"] for r in records])


def slowest(cols: Columns, count: int = SLOWEST) -> List[Dict[str, Any]]:
    """The slowest queries: the timeouts first (the first `count` sent), then the `count` slowest answers (many
    timeouts must not hide the slow names that did answer)."""
    latency = cols.latency
    timeouts = [i for i, ms in enumerate(latency) if ms is None][:count]
    answered = heapq.nlargest(count, (i for i, ms in enumerate(latency) if ms is not None), key=lambda i: latency[i])
    return [{"name": cols.name(i), "type": cols.qtype(i), "ms": None if latency[i] is None else round(latency[i], 3),
             "rcode": cols.rcode[i] or "timeout", "tries": cols.tries[i], "via": cols.via[i]}
            for i in timeouts + answered]


def summarise(cols: Columns, total_s: float) -> Dict[str, Any]:
    """The pass's figures from its per-query columns."""
    rcodes = {}  # type: Dict[str, int]
    latencies = [ms for ms in cols.latency if ms is not None]
    for ms, code in zip(cols.latency, cols.rcode):
        if ms is not None:
            rcodes[code] = rcodes.get(code, 0) + 1
    count = len(cols.latency)
    timeouts = count - len(latencies)
    retried = sum(1 for tries in cols.tries if tries > 1)
    via_tcp = sum(1 for via in cols.via if via == "tcp")
    latencies.sort()
    out = {"queries": count, "answered": len(latencies), "timeouts": timeouts, "retried": retried,
           "via_tcp": via_tcp, "rcodes": rcodes, "total_s": total_s,
           "qps": len(latencies) / total_s if total_s > 0 else 0.0,
           "slowest": slowest(cols), "cdf": cdf(latencies, count)}   # type: Dict[str, Any]
    if latencies:
        for key, pct in (("p50_ms", 50), ("p90_ms", 90), ("p99_ms", 99)):
            out[key] = percentile(latencies, pct)
        out["max_ms"] = latencies[-1]
        out["min_ms"] = latencies[0]
        out["mean_ms"] = sum(latencies) / len(latencies)
    return out


def emit(ctx: Any, figures: Dict[str, Any], meta: Dict[str, Any]) -> None:
    """The contract's results of one resolver's pass (docs: the dns test's results)."""
    rcodes = figures["rcodes"]
    other = sum(n for code, n in rcodes.items() if code not in NAMED_RCODES)
    ctx.result("dns", "answered", figures["answered"], "queries", meta)
    for code in NAMED_RCODES:
        ctx.result("dns", code.lower(), rcodes.get(code, 0), "queries", meta)
    ctx.result("dns", "other_rcode", other, "queries",
               dict(meta, rcodes={k: v for k, v in rcodes.items() if k not in NAMED_RCODES}))
    ctx.result("dns", "timeouts", figures["timeouts"], "queries", meta)
    ctx.result("dns", "retried", figures["retried"], "queries", meta)
    ctx.result("dns", "via_tcp", figures["via_tcp"], "queries", meta)
    if figures["answered"]:
        lat_meta = dict(meta, timeouts_excluded=figures["timeouts"])
        ctx.result("dns", "p50_ms", round(figures["p50_ms"], 3), "ms",
                   dict(lat_meta, cdf=figures["cdf"], min_ms=round(figures["min_ms"], 3),
                        mean_ms=round(figures["mean_ms"], 3), cdf_of="all queries (timeouts never arrive)"))
        for key in ("p90_ms", "p99_ms", "max_ms"):
            ctx.result("dns", key, round(figures[key], 3), "ms", lat_meta)
    ctx.result("dns", "total_s", round(figures["total_s"], 3), "s", meta)
    ctx.result("dns", "qps", round(figures["qps"], 1), "queries/s", meta)
    ctx.result("dns", "slowest", len(figures["slowest"]), "names", dict(meta, slowest=figures["slowest"]))
