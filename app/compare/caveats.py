"""What a reader must know before trusting a compared figure, placed beside the figures it concerns.

A caveat has a short tag shown next to the number ("cached") and a sentence for the list under the
table. Caveats of one run concern some of its figures (metric keys) or the whole run (no keys);
caveats between runs (engines or library versions differ) concern a column.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.catalogue.caveats import CaveatHit, CaveatRule, compare_hits, warnings_said
from app.compare.metrics import METRICS
from app.summary.base import result_field, run_evidence
from app.summary.disk_cpu import engine_text, version_differences
from app.summary.dns import stamps_text


@dataclass(frozen=True)
class Caveat:
    tag: str                  # short, beside the number
    text: str                 # the whole sentence, in the list under the table
    keys: tuple[str, ...] = ()    # the metric keys it concerns; () = every figure of the run


def _keys(test: str, jobs: Sequence[str] | None = None) -> tuple[str, ...]:
    """The comparison metrics of a test, or of some of its disk jobs."""
    out = []
    for item in METRICS:
        if item.test != test:
            continue
        job = item.metric.partition(".")[0]
        if jobs is None or job in jobs or (job == "sweep_best" and any(j.startswith("sweep_") for j in jobs)):
            out.append(item.key)
    return tuple(out)


def _caveat(rule: CaveatRule, hit: CaveatHit) -> Caveat:
    keys = () if not rule.test else _keys(rule.test, hit.jobs)
    return Caveat(hit.tag, rule.compare_text(hit) if rule.compare_text else hit.tag, keys)


def run_caveats(results: Sequence[Any], facts: Mapping[str, Any] | None, warnings: Sequence[str], status: str,
                error: str = "") -> list[Caveat]:
    """The caveats of one run (the catalogue's rules, in the comparison's words), then the agent's warnings
    that none of them already says."""
    hits = compare_hits(run_evidence(results, facts, status, error))
    out = [_caveat(rule, hit) for rule, hit in hits]
    out += [Caveat("warning", message) for message in dict.fromkeys(warnings) if not warnings_said(hits, message)]
    return out


def between_caveats(rows: Sequence[tuple[str, Sequence[Any]]]) -> list[Caveat]:
    """Differences between the compared servers that make a column less comparable.

    rows: (row label, that row's results)."""
    out: list[Caveat] = []
    engines: dict[str, list[str]] = {}
    for label, results in rows:
        found = {engine_text(_meta(r)) for r in results if result_field(r, "test") == "disk"}
        for engine in sorted(found):   # sorted: the same comparison reads the same every time
            engines.setdefault(engine, []).append(label)
    if len(engines) > 1:
        groups = "; ".join(f"{engine} on {', '.join(labels)}" for engine, labels in engines.items())
        out.append(Caveat("engines differ", f"Disk figures measured with different engines ({groups}).",
                          _keys("disk")))
    tools: dict[str, list[str]] = {}
    for label, results in rows:
        # the same tool in another version, or another tool, can move the figures on its own
        for tool in sorted({str(_meta(r).get("engine") or "") for r in results
                            if result_field(r, "test") == "dbload"} - {""}):
            tools.setdefault(tool, []).append(label)
    if len(tools) > 1:
        groups = "; ".join(f"{tool} on {', '.join(labels)}" for tool, labels in tools.items())
        out.append(Caveat("tools differ", f"Database load measured with different tools or versions ({groups}).",
                          _keys("dbload")))
    for line in version_differences([(label, results) for label, results in rows]):
        out.append(Caveat("versions differ", line + ".", _keys("cpu")))
    loads: dict[str, list[str]] = {}
    for label, results in rows:
        found = {f"{_meta(r).get('engine') or '?'} {_meta(r).get('workload') or '?'}" + (
                 f" at {_meta(r)['rate']:g}/s" if _meta(r).get("rate") else "")
                 for r in results if result_field(r, "test") == "dbload" and result_field(r, "metric") == "ops_per_s"}
        for load in sorted(found):
            loads.setdefault(load, []).append(label)
    if len(loads) > 1:   # tpcb-like against select-only is no comparison of servers
        groups = "; ".join(f"{load} on {', '.join(labels)}" for load, labels in loads.items())
        out.append(Caveat("loads differ", f"Database load figures from different tools or workloads ({groups}).",
                          _keys("dbload")))
    return out + _dns_differences(rows)


def _dns_differences(rows: Sequence[tuple[str, Sequence[Any]]]) -> list[Caveat]:
    """DNS figures sent by different engines or from different query lists (the runs' first resolver's pass)."""
    out: list[Caveat] = []
    # a run stored before it said how it timed its answers (None) has nothing to set against the others
    for tag, what, value_of in (("engines differ", "with different engines", engine_text),
                                ("query lists differ", "from different query lists",
                                 lambda meta: str(meta.get("source") or "?")),
                                ("answers timed differently", "with answers timed differently",
                                 lambda meta: stamps_text(meta) or None)):
        found: dict[str, list[str]] = {}
        for label, results in rows:
            meta = next((_meta(r) for r in results if result_field(r, "test") == "dns"), None)
            value = value_of(meta) if meta is not None else None
            if value is not None:
                found.setdefault(value, []).append(label)
        if len(found) > 1:
            groups = "; ".join(f"{value} on {', '.join(labels)}" for value, labels in found.items())
            out.append(Caveat(tag, f"DNS figures measured {what} ({groups}).", _keys("dns")))
    return out


def _meta(result: Any) -> dict[str, Any]:
    return dict(result_field(result, "metadata") or {})


def scoped(caveats: Sequence[Caveat], test: str) -> list[Caveat]:
    """A run's caveats, each concerning that run's figures at most: a caveat of the whole run (a cancelled
    CPU run) must not land on the same host's disk figures in the same row."""
    keys = _keys(test)
    return [c if c.keys else Caveat(c.tag, c.text, keys) for c in caveats]


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def merged(per_run: Sequence[Sequence[Caveat]]) -> list[Caveat]:
    """The caveats of one server's repeats of a test, each once: the same sentence with other numbers in
    another run ("1,500 flushed 4 KiB writes/s", "1,417 …") is one caveat with the numbers as a range,
    saying in how many of the runs it was seen; a lone run's caveats are its own, unchanged."""
    if len(per_run) < 2:
        return list(dict.fromkeys(c for run in per_run for c in run))
    groups: dict[tuple[str, tuple[str, ...], str], list[list[str]]] = {}
    for run in per_run:
        for caveat in dict.fromkeys(run):
            skeleton = NUMBER.sub("#", caveat.text)
            groups.setdefault((caveat.tag, caveat.keys, skeleton), []).append(NUMBER.findall(caveat.text))
    out = []
    for (tag, keys, skeleton), numbers in groups.items():
        pieces = iter(skeleton.split("#"))
        text = next(pieces)
        for position, piece in enumerate(pieces):
            seen = [found[position] for found in numbers]
            low, high = min(seen, key=_number), max(seen, key=_number)
            text += (low if _number(low) == _number(high) else f"{low}–{high}") + piece
        if len(per_run) > 1:
            text = f"In {len(numbers)} of its {len(per_run)} runs: {text}" if len(numbers) < len(per_run) \
                else f"In all {len(per_run)} of its runs: {text}"
        out.append(Caveat(tag, text, keys))
    return out
