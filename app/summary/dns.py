"""DNS results as readable lines and a table, shared by `benchbay run`, `runs show` and the window.

The agent (remote/agent/bench_dns.py) reports, per resolver and pass (cold, warm, or max), the counts
answered, noerror, nxdomain, servfail, refused, other_rcode, timeouts, retried, via_tcp, the latencies
p50_ms, p90_ms, p99_ms, max_ms over the answered queries, total_s, qps, and "slowest" whose metadata names
the slowest queries (timeouts first). Every result's metadata carries resolver, pass, engine, queries
and source.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.summary.base import MISSING, Table, number, result_parts

TEST = "dns"
PASS_ORDER = {"cold": 0, "warm": 1, "max": 2}
ENGINE_NAMES = {"builtin": "built-in"}
DNS_COLUMNS = ("resolver", "pass", "answered", "NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "other", "timeouts",
               "p50 ms", "p90 ms", "p99 ms", "max ms", "total s", "q/s")
SLOWEST_SHOWN = 5      # slowest answers named per resolver and pass
TIMEOUTS_SHOWN = 3     # and the names that timed out


@dataclass
class DnsPass:
    """One resolver's pass: its figures by metric, and the metadata they share."""

    resolver: str
    pass_name: str
    values: dict[str, float] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    slowest: list[dict[str, Any]] = field(default_factory=list)
    cdf: list[list[float]] = field(default_factory=list)

    @property
    def engine(self) -> str:
        engine = str(self.meta.get("engine") or "")
        return ENGINE_NAMES.get(engine, engine) or MISSING


def dns_passes(results: Iterable[Any]) -> list[DnsPass]:
    """The run's resolver passes, in the order a reader expects them: by resolver as listed, cold then warm."""
    found: dict[tuple[str, str], DnsPass] = {}
    order: list[str] = []
    for test, metric, value, _unit, meta in map(result_parts, results):
        if test != TEST:
            continue
        resolver, pass_name = str(meta.get("resolver") or MISSING), str(meta.get("pass") or MISSING)
        if resolver not in order:
            order.append(resolver)
        item = found.setdefault((resolver, pass_name), DnsPass(resolver, pass_name))
        item.values[metric] = value
        if not item.meta:
            item.meta = {k: v for k, v in meta.items() if k not in ("slowest", "cdf", "rcodes")}
        if metric == "slowest":
            item.slowest = list(meta.get("slowest") or [])
        if metric == "p50_ms":
            item.cdf = [list(point) for point in meta.get("cdf") or []]
    return sorted(found.values(), key=lambda p: (order.index(p.resolver), PASS_ORDER.get(p.pass_name, 9)))


def _ms_decimals(ms: float) -> int:
    """Three significant figures or so: 0.42, 5.94, 325.7 -> 326, 2,500."""
    return 2 if ms < 10 else 1 if ms < 100 else 0


def dns_table(results: Iterable[Any]) -> Table:
    table = Table(DNS_COLUMNS)
    for item in dns_passes(results):
        v = item.values
        table.rows.append((item.resolver, item.pass_name, *(number(v.get(k), 0) for k in (
            "answered", "noerror", "nxdomain", "servfail", "refused", "other_rcode", "timeouts")),
            *(number(v[k], _ms_decimals(v[k])) if k in v else MISSING
              for k in ("p50_ms", "p90_ms", "p99_ms", "max_ms")),
            number(v.get("total_s"), 2), number(v.get("qps"), 0)))
    return table


def _slow_text(entry: dict[str, Any]) -> str:
    ms = entry.get("ms")
    when = "timeout" if ms is None else f"{number(ms, 0 if ms >= 100 else 1)} ms"
    rcode = entry.get("rcode")
    tail = f", {rcode}" if rcode and rcode not in ("NOERROR", "timeout") else ""
    via = ", tcp" if entry.get("via") == "tcp" else ""
    return f"{entry.get('name')} {entry.get('type') or ''} {when}{tail}{via}".replace("  ", " ")


STAMPS_TEXT = {"read": "answers timed when read, as dnsperf does",
               "kernel": "answers timed at the kernel's receive time (the host's own read delay left out)"}


def stamps_text(meta: dict[str, Any]) -> str:
    """How a run timed its answers; empty for a run stored before it said so."""
    return STAMPS_TEXT.get(str(meta.get("stamps") or ""), "")


def dns_lines(results: Iterable[Any], shown: int = SLOWEST_SHOWN) -> list[str]:
    """The list and how it was sent, then the slowest names of each resolver's pass."""
    passes = dns_passes(results)
    if not passes:
        return []
    meta = passes[0].meta
    engines = sorted({p.engine for p in passes})
    rate = meta.get("rate")
    how = (f"mode max for {number(meta.get('duration'), 0)} s per resolver, {meta.get('in_flight')} in flight"
           if meta.get("mode") == "max" else
           f"{meta.get('order', MISSING)}, {meta.get('in_flight', MISSING)} in flight"
           + (f", at most {number(rate, 0)} queries/s" if rate else "")
           + f", stub waits {meta.get('timeouts', MISSING)} s"
           + (", TCP on truncation" if meta.get("tcp_fallback") else ", no TCP fallback"))
    timed = stamps_text(meta)
    lines = [f"queries: {meta.get('source') or MISSING}; {how}; engine {', '.join(engines)}"
             + (f"; {timed}" if timed else "")]
    for item in passes:
        retried, tcp = item.values.get("retried", 0), item.values.get("via_tcp", 0)
        extra = []
        if retried:
            extra.append(f"{number(retried, 0)} resent")
        if tcp:
            extra.append(f"{number(tcp, 0)} over TCP")
        if item.values.get("timeouts"):
            extra.append(f"{number(item.values['timeouts'], 0)} timed out")
        lost = [entry for entry in item.slowest if entry.get("ms") is None]
        slow = [_slow_text(entry) for entry in item.slowest if entry.get("ms") is not None][:shown]
        missed = int(item.values.get("timeouts", len(lost)))
        if lost:
            names = ", ".join(f"{e.get('name')} {e.get('type') or ''}".strip() for e in lost[:TIMEOUTS_SHOWN])
            more = missed - min(len(lost), TIMEOUTS_SHOWN)
            slow.insert(0, f"timeouts {names}" + (f" (+{more:,} more)" if more > 0 else ""))
        lines.append(f"slowest, {item.resolver} {item.pass_name}: {'; '.join(slow) or 'none'}"
                     + (f" ({', '.join(extra)})" if extra else ""))
    return lines


def dns_text(results: Iterable[Any], indent: str = "  ") -> list[str]:
    """The dns part of `benchbay run`'s summary, indented."""
    results = list(results)
    table = dns_table(results)
    if not table.rows:
        return []
    return [table.text(indent)] + [indent + line for line in dns_lines(results)]
