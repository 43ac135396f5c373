"""The dns runs of a comparison: one line per resolver and pass, their counts, latency distribution and
slowest names, and the verdicts on p50, p99 and timeouts (Qt-free; the Compare tab and the PDF read it).

A dns run stores its figures once per resolver and pass (metadata "resolver" and "pass"), so a run of
two resolvers is two lines. A line is named after what differs: the resolver when every line comes from
one host, the host when one resolver was asked from several hosts, "host → resolver" otherwise.

Verdicts follow the comparison's rules (app.compare.standings, app.compare.ties) on p50 and p99, lower
is better, against the leader of each pass. Timeouts are counts of the same list of queries: two lines'
counts are told apart by Fisher's exact test (scipy) at the 1 % level, since a count of 0 has no ratio.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scipy import stats

from app.catalogue.model import LOWER, MetricSpec
from app.compare.metrics import Figure
from app.compare.standings import Entry, judge_column
from app.summary.base import number

DNS_TEST = "dns"
PASSES = ("cold", "warm")
COUNTS = ("answered", "noerror", "nxdomain", "servfail", "refused", "other_rcode", "timeouts")
LATENCIES = ("p50_ms", "p90_ms", "p99_ms", "max_ms")
JUDGED = (MetricSpec("dns:p50_ms", DNS_TEST, "Latency p50", "ms", LOWER),
          MetricSpec("dns:p99_ms", DNS_TEST, "Latency p99", "ms", LOWER))
TIMEOUT_LEVEL = 0.01


@dataclass(frozen=True)
class DnsLine:
    """One resolver's pass through the query list in one run."""

    run_id: int
    host: str
    resolver: str
    pass_: str
    label: str = ""
    engine: str = ""
    source: str = ""
    queries: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    latency: Mapping[str, float] = field(default_factory=dict)    # p50_ms ... max_ms
    total_s: float | None = None
    qps: float | None = None
    cdf: tuple[tuple[float, float], ...] = ()    # (ms, share answered within it), as stored
    slowest: tuple[Mapping[str, Any], ...] = ()  # {"name", "type", "ms" (None: timeout), "rcode"}
    verdicts: Mapping[str, str] = field(default_factory=dict)     # "p50_ms" / "p99_ms" / "timeouts" -> text
    note: str = ""      # what the figures may hold besides the resolver (a cache an earlier run filled)

    @property
    def timeouts(self) -> int:
        return int(self.counts.get("timeouts", 0))

    @property
    def never_share(self) -> float:
        """The share of the list never answered (timed out)."""
        return self.timeouts / self.queries if self.queries else 0.0

    @property
    def key(self) -> tuple[str, str]:
        return (self.host, self.resolver)


@dataclass(frozen=True)
class DnsComparison:
    lines: tuple[DnsLine, ...]     # by pass (cold first), then in the order of the runs

    def of_pass(self, pass_: str) -> list[DnsLine]:
        return [line for line in self.lines if line.pass_ == pass_]

    @property
    def passes(self) -> list[str]:
        """The passes present, cold first."""
        return list(dict.fromkeys(line.pass_ for line in self.lines))

    def __bool__(self) -> bool:
        return bool(self.lines)


def _field(result: Any, name: str) -> Any:
    return result.get(name) if isinstance(result, Mapping) else getattr(result, name, None)


def run_lines(run_id: int, host: str, results: Iterable[Any]) -> list[DnsLine]:
    """A dns run's results -> a line per (resolver, pass), in the order the results name them."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for result in results:
        if _field(result, "test") != DNS_TEST:
            continue
        meta = dict(_field(result, "metadata") or {})
        resolver, pass_ = str(meta.get("resolver") or "?"), str(meta.get("pass") or "cold")
        line = found.setdefault((resolver, pass_), {"counts": {}, "latency": {}, "meta": meta})
        metric, value = str(_field(result, "metric")), _field(result, "value")
        if value is None:
            continue
        if metric in COUNTS:
            line["counts"][metric] = int(value)
        elif metric in LATENCIES:
            line["latency"][metric] = float(value)
            if metric == "p50_ms" and meta.get("cdf"):
                line["cdf"] = tuple((float(ms), float(share)) for ms, share in meta["cdf"])
        elif metric in ("total_s", "qps"):
            line[metric] = float(value)
        elif metric == "slowest":
            line["slowest"] = tuple(dict(item) for item in meta.get("slowest") or ())
    out = []
    for (resolver, pass_), line in found.items():
        meta = line["meta"]
        queries = int(meta.get("queries") or 0) or sum(line["counts"].get(k, 0) for k in ("answered", "timeouts"))
        out.append(DnsLine(run_id, host, resolver, pass_, engine=str(meta.get("engine") or ""),
                           source=str(meta.get("source") or ""), queries=queries, counts=line["counts"],
                           latency=line["latency"], total_s=line.get("total_s"), qps=line.get("qps"),
                           cdf=line.get("cdf", ()), slowest=line.get("slowest", ())))
    return out


def _labels(lines: Sequence[DnsLine]) -> dict[tuple[str, str], str]:
    hosts = {line.host for line in lines}
    resolvers = {line.resolver for line in lines}
    out = {}
    for line in lines:
        if len(hosts) == 1:
            out[line.key] = line.resolver
        elif len(resolvers) == 1:
            out[line.key] = line.host
        else:
            out[line.key] = f"{line.host} → {line.resolver}"
    return out


def timeout_verdict(line: DnsLine, reference: DnsLine, against: str) -> str:
    """Fewer, more or as many timeouts as the reference, told apart by Fisher's exact test."""
    mine, theirs = line.timeouts, reference.timeouts
    if mine == theirs:
        return f"as many as {against}"
    table = [[mine, max(line.queries - mine, 0)], [theirs, max(reference.queries - theirs, 0)]]
    p_value = float(stats.fisher_exact(table).pvalue)
    if p_value >= TIMEOUT_LEVEL:
        return f"tie with {against} ({mine} vs {theirs}, p = {p_value:.2g})"
    return f"{'fewer' if mine < theirs else 'more'} than {against} ({mine} vs {theirs}, p = {p_value:.2g})"


def _judge(lines: list[DnsLine]) -> dict[tuple[str, str], dict[str, str]]:
    """The verdicts of one pass's lines: p50 and p99 by the comparison's rules, timeouts by count."""
    labels = _labels(lines)
    by_key: dict[tuple[str, str], list[DnsLine]] = {}
    for line in lines:
        by_key.setdefault(line.key, []).append(line)
    keys = list(by_key)
    out: dict[tuple[str, str], dict[str, str]] = {key: {} for key in keys}
    for item in JUDGED:
        metric = item.metric
        entries = []
        for index, key in enumerate(keys):
            values = tuple(line.latency[metric] for line in by_key[key] if metric in line.latency)
            if values:   # repeats of the same resolver from the same host: the median and its runs
                median = sorted(values)[len(values) // 2]
                entries.append(Entry(index, labels[key], Figure(median, {}, values=values)))
        column = judge_column(item, entries, None)
        for index, judged in column.judged.items():
            out[keys[index]][metric] = judged.text()
    finite = [key for key in keys if by_key[key][0].queries]
    if finite:
        leader = min(finite, key=lambda key: by_key[key][0].never_share)
        for key in finite:
            out[key]["timeouts"] = "leader" if key == leader else \
                timeout_verdict(by_key[key][0], by_key[leader][0], labels[leader])
    return out


def warm_before(lines: Sequence[DnsLine], started: Mapping[int, Any]) -> dict[tuple[int, str], str]:
    """(run id, resolver) -> a note for each cold pass that began after another compared run had asked the same
    resolver: that run may have filled its cache, so this "cold" pass may have been warm (one resolver asked
    from several hosts one after another)."""
    asked: dict[str, list[tuple[Any, int, str]]] = {}
    for line in lines:
        run = (started.get(line.run_id), line.run_id, line.host)
        if run[0] is not None and run not in asked.get(line.resolver, []):
            asked.setdefault(line.resolver, []).append(run)
    out = {}
    for resolver, runs in asked.items():
        runs.sort(key=lambda item: (item[0], item[1]))
        for index, (_at, run_id, _host) in enumerate(runs[1:], start=1):
            earlier = ", ".join(f"{host} (run {other})" for _at2, other, host in runs[:index])
            out[(run_id, resolver)] = (f"cold pass after {earlier} had asked {resolver}: its cache may have been "
                                       f"warm (run each host's cold pass against a fresh cache to compare them)")
    return out


def dns_comparison(runs: Iterable[tuple[int, str, Sequence[Any]]],
                   started: Mapping[int, Any] | None = None) -> DnsComparison:
    """(run id, host, results) of the compared runs -> their dns lines, named and judged per pass.

    started: run id -> when it started; a cold pass that began after another run asked its resolver is noted."""
    lines = [line for run_id, host, results in runs for line in run_lines(run_id, host, results)]
    notes = warm_before(lines, started or {})
    out: list[DnsLine] = []
    passes = list(dict.fromkeys([*[p for p in PASSES if any(x.pass_ == p for x in lines)],
                                 *[x.pass_ for x in lines]]))
    for pass_ in passes:
        these = [line for line in lines if line.pass_ == pass_]
        labels, verdicts = _labels(these), _judge(these)
        out += [DnsLine(**{**line.__dict__, "label": labels[line.key], "verdicts": verdicts.get(line.key, {}),
                           "note": notes.get((line.run_id, line.resolver), "") if pass_ == "cold" else ""})
                for line in these]
    return DnsComparison(tuple(out))


def ms_text(value: float | None) -> str:
    """ "0.42", "12.3", "1,204": latency in ms as tables show it; "timeout" for None."""
    if value is None or not math.isfinite(value):
        return "timeout"
    return number(value)
