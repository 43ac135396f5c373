"""What a reader must know before trusting a compared figure, placed beside the figures it concerns.

A caveat has a short tag shown next to the number ("cached") and a sentence for the list under the
table. Caveats of one run concern some of its figures (metric keys) or the whole run (no keys);
caveats between runs (engines or library versions differ) concern a column.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.compare.metrics import METRICS, Figure
from app.summary.run import engine_text, result_field, version_differences
from app.summary.services import mail_shortfall, mail_synthetic, restore_kind, restore_non_durable
from storage.records import RUN_DONE

# Flushed 4 KiB writes faster than this usually land in a volatile write cache, not on the medium:
# a spinning disk does one per rotation (~100-250/s), flash without power-loss protection a few thousand.
SUSPICIOUS_SYNC_IOPS = {"hdd": 1_000.0, "ssd": 30_000.0}

# the agent's warnings that a caveat above already says in its own words: (part of the warning, caveat tag)
WARNINGS_SAID = (("fsync off", "non-durable"), ("synthetic", "synthetic"), ("file-level", "file-level"),
                 ("messages accepted", "partial"), ("smaller than", "file < RAM"), ("O_DIRECT", "cached"))


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


def _test_disk(facts: Mapping[str, Any] | None) -> dict[str, Any] | None:
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


def run_caveats(test_results: Mapping[str, Figure], results: Sequence[Any], facts: Mapping[str, Any] | None,
                warnings: Sequence[str], status: str, error: str = "") -> list[Caveat]:
    """The caveats of one run (or of one server's runs taken together)."""
    out: list[Caveat] = []
    if status != RUN_DONE:
        out.append(Caveat(status, f"The run is {status}{': ' + error if error else ''}; its figures are partial."))
    cached_jobs, small_file_jobs = set(), set()
    memory = ((facts or {}).get("memory") or {}).get("total_bytes")
    for result in results:
        meta = _meta(result)
        if result_field(result, "test") == "disk" and (meta.get("cached") or meta.get("direct") is False):
            job = str(result_field(result, "metric")).partition(".")[0]
            cached_jobs.add(job)
            size = meta.get("file_size")
            if isinstance(size, (int, float)) and isinstance(memory, (int, float)) and size < memory:
                small_file_jobs.add(job)
    if cached_jobs:
        jobs = sorted(cached_jobs)
        out.append(Caveat("cached", "Cached I/O (no O_DIRECT): the page cache may be measured, not the disk "
                          f"({', '.join(jobs)}).", _keys("disk", jobs)))
    if small_file_jobs:
        out.append(Caveat("file < RAM", "The test file is smaller than the RAM and the I/O was cached: reads may "
                          "come from memory.", _keys("disk", sorted(small_file_jobs))))
    sync = test_results.get("disk:syncwrite_4k.iops")
    disk = _test_disk(facts)
    if sync is not None and disk is not None:
        kind = "hdd" if disk.get("rotational") else "ssd"
        if sync.value > SUSPICIOUS_SYNC_IOPS[kind]:
            medium = "a disk the kernel reports as spinning" if kind == "hdd" else "flash"
            virtual = (facts or {}).get("virtualization") not in (None, "", "none")
            where = "a write cache (on a virtual machine, the host's) may be absorbing them" if virtual \
                else "a write cache may be absorbing them"
            out.append(Caveat("write cache?", f"{sync.value:,.0f} flushed 4 KiB writes/s is fast for {medium} "
                              f"({disk.get('name')}): {where}.",
                              ("disk:syncwrite_4k.iops", "disk:syncwrite_4k.lat_p99")))
    if mail_synthetic(results):
        out.append(Caveat("synthetic", "Synthetic mail storm: no MTA was listening, the queue's file operations "
                          "were timed on the test directory instead.", _keys("mailstorm")))
    shortfall = mail_shortfall(results)
    if shortfall:
        out.append(Caveat("partial", f"Only {shortfall[0]:,.0f} of {shortfall[1]:,.0f} messages were accepted.",
                          _keys("mailstorm")))
    if restore_non_durable(results):
        out.append(Caveat("non-durable", "Restore on a server with fsync off: the times are not durable.",
                          _keys("restore")))
    if restore_kind(results) == "file":
        out.append(Caveat("file-level", "File-level restore (no PostgreSQL): an archive of small files extracted "
                          "and synced, not a database restore.", _keys("restore")))
    tags = {c.tag for c in out}
    for message in dict.fromkeys(warnings):
        said = any(part in message and tag in tags for part, tag in WARNINGS_SAID)
        if not said:
            out.append(Caveat("warning", message))
    return out


def between_caveats(rows: Sequence[tuple[str, Sequence[Any]]]) -> list[Caveat]:
    """Differences between the compared servers that make a column less comparable.

    rows: (row label, that row's results)."""
    out: list[Caveat] = []
    engines: dict[str, list[str]] = {}
    for label, results in rows:
        found = {engine_text(_meta(r)) for r in results if result_field(r, "test") == "disk"}
        for engine in found:
            engines.setdefault(engine, []).append(label)
    if len(engines) > 1:
        groups = "; ".join(f"{engine} on {', '.join(labels)}" for engine, labels in engines.items())
        out.append(Caveat("engines differ", f"Disk figures measured with different engines ({groups}).",
                          _keys("disk")))
    for line in version_differences([(label, results) for label, results in rows]):
        out.append(Caveat("versions differ", line + ".", _keys("cpu")))
    return out



def _meta(result: Any) -> dict[str, Any]:
    return dict(result_field(result, "metadata") or {})
