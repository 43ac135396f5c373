"""Caveat rules: what a reader must know before trusting a run's figures, detected once from the run's
results and host facts, then worded by each view: the run summary (the results view, `benchbay run`) says
it one way, the comparison (its table, the PDF) another, beside the figures the caveat concerns.

Results reach the rules already parsed, as (test, metric, value, unit, metadata) tuples.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.catalogue.presentation import FILE_LEVEL_LABEL, NON_DURABLE_LABEL, SYNTHETIC_LABEL, engine_text
from storage.records import RunStatus

Parsed = tuple[str, str, float, str, Mapping[str, Any]]   # test, metric, value, unit, metadata

# Flushed 4 KiB writes faster than this usually land in a volatile write cache, not on the medium:
# a spinning disk does one per rotation (~100-250/s), flash without power-loss protection a few thousand.
SUSPICIOUS_SYNC_IOPS = {"hdd": 1_000.0, "ssd": 30_000.0}


@dataclass(frozen=True)
class RunEvidence:
    """What the rules look at: one run's results, its host's facts, how it ended."""

    results: tuple[Parsed, ...]
    facts: Mapping[str, Any] | None = None
    status: str = RunStatus.DONE.value
    error: str = ""

    def figures(self, test: str) -> tuple[dict[str, float], dict[str, Mapping[str, Any]]]:
        """metric -> value and metric -> metadata of one test's results."""
        values, metadata = {}, {}
        for name, metric, value, _unit, meta in self.results:
            if name == test:
                values[metric], metadata[metric] = value, meta
        return values, metadata

    def disk_jobs(self) -> dict[str, dict[str, Any]]:
        """job -> its metadata (merged over its figures), in the order the jobs ran."""
        jobs: dict[str, dict[str, Any]] = {}
        for test, metric, _value, _unit, meta in self.results:
            if test == "disk" and "." in metric:
                jobs.setdefault(metric.partition(".")[0], {}).update(meta)
        return jobs


@dataclass(frozen=True)
class CaveatHit:
    tag: str
    jobs: tuple[str, ...] | None = None     # the disk jobs it concerns; None: all of the test's figures
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CaveatRule:
    id: str
    tag: str
    test: str                                           # "": the whole run
    detect: Callable[[RunEvidence], CaveatHit | None]
    summary_text: Callable[[CaveatHit], str | None] | None   # None (or a None text): the summary does not say it
    compare_text: Callable[[CaveatHit], str] | None           # None: the comparison does not say it
    absorbs_warning: tuple[str, ...] = ()   # parts of agent warnings this caveat already says in its words


def _cached(meta: Mapping[str, Any]) -> bool:
    return bool(meta.get("cached")) or meta.get("direct") is False


def _first(metadata: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any]:
    return next(iter(metadata.values()), {})


def _test_disk(facts: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The disk that holds the test directory, when the facts say which one it is."""
    if not facts:
        return None
    disks = [d for d in facts.get("disks") or [] if isinstance(d, dict)]
    device = str((facts.get("test_dir") or {}).get("device") or "")
    for disk in disks:
        names = {str(disk.get("name") or ""), str(disk.get("dm_name") or "")} - {""}
        if any(device == f"/dev/{n}" or device.startswith(f"/dev/{n}") for n in names):
            return disk
    return disks[0] if len(disks) == 1 else None


# -- detection -------------------------------------------------------------------------------------

def _status(ev: RunEvidence) -> CaveatHit | None:
    if ev.status == RunStatus.DONE:
        return None
    return CaveatHit(ev.status, values={"status": ev.status, "error": ev.error})


def _cached_jobs(ev: RunEvidence) -> CaveatHit | None:
    jobs = [name for name, meta in ev.disk_jobs().items() if _cached(meta)]
    return CaveatHit("cached", tuple(sorted(jobs)), {"count": len(jobs)}) if jobs else None


def _small_file(ev: RunEvidence) -> CaveatHit | None:
    memory = ((ev.facts or {}).get("memory") or {}).get("total_bytes")
    jobs = [name for name, meta in ev.disk_jobs().items() if _cached(meta)
            and isinstance(meta.get("file_size"), (int, float)) and isinstance(memory, (int, float))
            and meta["file_size"] < memory]
    return CaveatHit("file < RAM", tuple(sorted(jobs))) if jobs else None


def _write_cache(ev: RunEvidence) -> CaveatHit | None:
    values, _metadata = ev.figures("disk")
    sync, disk = values.get("syncwrite_4k.iops"), _test_disk(ev.facts)
    if sync is None or disk is None:
        return None
    kind = "hdd" if disk.get("rotational") else "ssd"
    if sync <= SUSPICIOUS_SYNC_IOPS[kind]:
        return None
    virtual = (ev.facts or {}).get("virtualization") not in (None, "", "none")
    return CaveatHit("write cache?", ("syncwrite_4k",),
                     {"iops": sync, "kind": kind, "disk": disk.get("name"), "virtual": virtual})


def _engines(ev: RunEvidence) -> set[str]:
    return {engine_text(meta) for meta in ev.disk_jobs().values()}


def _builtin_engine(ev: RunEvidence) -> CaveatHit | None:
    return CaveatHit("built-in") if any(e.startswith("built-in") for e in _engines(ev)) else None


def _several_engines(ev: RunEvidence) -> CaveatHit | None:
    engines = _engines(ev)
    return CaveatHit("engines", values={"engines": sorted(engines)}) if len(engines) > 1 else None


def _synthetic(ev: RunEvidence) -> CaveatHit | None:
    _values, metadata = ev.figures("mailstorm")
    if not any(meta.get("synthetic") for meta in metadata.values()):
        return None
    return CaveatHit("synthetic", values={"server": _first(metadata).get("server")})


def _shortfall(ev: RunEvidence) -> CaveatHit | None:
    values, metadata = ev.figures("mailstorm")
    asked = _first(metadata).get("messages")
    if "accepted" in values and isinstance(asked, (int, float)) and values["accepted"] < asked:
        return CaveatHit("partial", values={"accepted": values["accepted"], "asked": float(asked)})
    return None


def restore_file_level(ev: RunEvidence) -> CaveatHit | None:
    _values, metadata = ev.figures("restore")
    meta = _first(metadata)
    if meta.get("kind") != "file":
        return None
    return CaveatHit("file-level", values={"reason": meta.get("reason") or "PostgreSQL not usable"})


def restore_non_durable(ev: RunEvidence) -> CaveatHit | None:
    _values, metadata = ev.figures("restore")
    if not any(meta.get("durable") is False or meta.get("fsync") == "off" for meta in metadata.values()):
        return None
    return CaveatHit("non-durable", values={"file_level": restore_file_level(ev) is not None})


# -- wording ---------------------------------------------------------------------------------------

def _write_cache_text(hit: CaveatHit) -> str:
    medium = "a disk the kernel reports as spinning" if hit.values["kind"] == "hdd" else "flash"
    where = "a write cache (on a virtual machine, the host's) may be absorbing them" if hit.values["virtual"] \
        else "a write cache may be absorbing them"
    return f"{hit.values['iops']:,.0f} flushed 4 KiB writes/s is fast for {medium} ({hit.values['disk']}): {where}."


def _status_text(hit: CaveatHit) -> str:
    error = hit.values["error"]
    return f"The run is {hit.values['status']}{': ' + error if error else ''}; its figures are partial."


STATUS = CaveatRule("status", "status", "", _status, None, _status_text)
CACHED = CaveatRule(
    "cached", "cached", "disk", _cached_jobs,
    lambda hit: f"Cached I/O (no O_DIRECT) in {hit.values['count']} job(s): the page cache may be measured, not "
                "the disk.",
    lambda hit: "Cached I/O (no O_DIRECT): the page cache may be measured, not the disk "
                f"({', '.join(hit.jobs or ())}).",
    ("O_DIRECT",))
SMALL_FILE = CaveatRule(
    "small_file", "file < RAM", "disk", _small_file, None,
    lambda _hit: "The test file is smaller than the RAM and the I/O was cached: reads may come from memory.",
    ("smaller than",))
WRITE_CACHE = CaveatRule("write_cache", "write cache?", "disk", _write_cache, None, _write_cache_text)
BUILTIN_ENGINE = CaveatRule(
    "builtin_engine", "built-in", "disk", _builtin_engine,
    lambda _hit: "Measured with the built-in engine (fio was not used): compare with results of the same engine.",
    None)
SEVERAL_ENGINES = CaveatRule(
    "several_engines", "engines", "disk", _several_engines,
    lambda hit: "Several engines in one run: " + ", ".join(hit.values["engines"]), None)
SYNTHETIC = CaveatRule(
    "synthetic", "synthetic", "mailstorm", _synthetic,
    lambda hit: f"{SYNTHETIC_LABEL}: no MTA answered on {hit.values['server']}; the figures are file create, "
                "fsync, rename and unlink in the test directory, not mail accepted by a server.",
    lambda _hit: "Synthetic mail storm: no MTA was listening, the queue's file operations were timed on the test "
                 "directory instead.",
    ("synthetic",))
PARTIAL = CaveatRule(
    "partial", "partial", "mailstorm", _shortfall,
    lambda hit: f"Not all messages accepted: {hit.values['accepted']:,.0f} of {hit.values['asked']:,.0f}.",
    lambda hit: f"Only {hit.values['accepted']:,.0f} of {hit.values['asked']:,.0f} messages were accepted.",
    ("messages accepted",))
NON_DURABLE = CaveatRule(
    "non_durable", "non-durable", "restore", restore_non_durable,
    # a file-level restore is no database restore at all: the summary says that instead
    lambda hit: None if hit.values["file_level"] else
    f"{NON_DURABLE_LABEL}: the restore times are not those of a server that survives a crash.",
    lambda _hit: "Restore on a server with fsync off: the times are not durable.",
    ("fsync off",))
FILE_LEVEL = CaveatRule(
    "file_level", "file-level", "restore", restore_file_level,
    lambda hit: f"{FILE_LEVEL_LABEL}: {hit.values['reason']}; extracting an archive of small files, not a database "
                "restore.",
    lambda _hit: "File-level restore (no PostgreSQL): an archive of small files extracted and synced, not a "
                 "database restore.",
    ("file-level",))

# each view's order: the summary's by test, the comparison's from the run to its figures
SUMMARY_RULES = (CACHED, BUILTIN_ENGINE, SEVERAL_ENGINES, SYNTHETIC, PARTIAL, FILE_LEVEL, NON_DURABLE)
COMPARE_RULES = (STATUS, CACHED, SMALL_FILE, WRITE_CACHE, SYNTHETIC, PARTIAL, NON_DURABLE, FILE_LEVEL)


def summary_caveats(evidence: RunEvidence, tests: Iterable[str] | None = None) -> list[str]:
    """The run summary's caveat sentences (of some tests only, when named)."""
    wanted = None if tests is None else set(tests)
    out = []
    for rule in SUMMARY_RULES:
        if rule.summary_text is None or (wanted is not None and rule.test not in wanted):
            continue
        hit = rule.detect(evidence)
        text = rule.summary_text(hit) if hit is not None else None
        if text:
            out.append(text)
    return out


def compare_hits(evidence: RunEvidence) -> list[tuple[CaveatRule, CaveatHit]]:
    """The comparison's caveats of one run, in its order."""
    found = []
    for rule in COMPARE_RULES:
        if rule.compare_text is None:
            continue
        hit = rule.detect(evidence)
        if hit is not None:
            found.append((rule, hit))
    return found


def warnings_said(hits: Sequence[tuple[CaveatRule, CaveatHit]], message: str) -> bool:
    """Whether a caveat found already says what the agent's warning says."""
    return any(part in message for rule, _hit in hits for part in rule.absorbs_warning)
