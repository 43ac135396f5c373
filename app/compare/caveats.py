"""What a reader must know before trusting a compared figure, placed beside the figures it concerns.

A caveat has a short tag shown next to the number ("cached") and a sentence for the list under the
table. Caveats of one run concern some of its figures (metric keys) or the whole run (no keys);
caveats between runs (engines or library versions differ) concern a column.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.catalogue.caveats import CaveatHit, CaveatRule, compare_hits, warnings_said
from app.compare.metrics import METRICS
from app.summary.base import result_field, run_evidence
from app.summary.disk_cpu import engine_text, version_differences


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
    for line in version_differences([(label, results) for label, results in rows]):
        out.append(Caveat("versions differ", line + ".", _keys("cpu")))
    return out + _dns_differences(rows)


def _dns_differences(rows: Sequence[tuple[str, Sequence[Any]]]) -> list[Caveat]:
    """DNS figures sent by different engines or from different query lists (the runs' first resolver's pass)."""
    out: list[Caveat] = []
    for key, tag, what in (("engine", "engines differ", "with different engines"),
                           ("source", "query lists differ", "from different query lists")):
        found: dict[str, list[str]] = {}
        for label, results in rows:
            meta = next((_meta(r) for r in results if result_field(r, "test") == "dns"), None)
            if meta is not None:
                value = engine_text(meta) if key == "engine" else str(meta.get(key) or "?")
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
