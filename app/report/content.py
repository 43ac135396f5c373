"""What the customer report shows, gathered from the store as plain data (Qt-free, runs in a worker).

The PDF writer only lays this out; every figure, ratio and caveat comes from app.compare, so the
report, the window and `benchbay compare` never disagree.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from app.catalogue import CATALOGUE
from app.compare.model import Comparison, build, lead, load_inputs, ratio_text
from app.compare.overlay import OVERLAYS, AlignedSeries, aligned, overlay_runs
from app.errors import AppError
from app.summary.disk_cpu import cpu_versions, engine_text
from storage.records import RunRecord
from widgets.format import human_bytes

PAGE_SIZES = ("A4", "Letter")
# overlays per test; a CPU test also shows how busy the CPU was
TEST_OVERLAYS = {"cpu": ("cpu.busy", "load.1")}
DEFAULT_OVERLAYS = ("disk.util", "load.1")
SECRET_WORDS = ("password", "secret", "token", "passphrase")


class ReportError(AppError):
    """The report cannot be made (unreadable logo, unwritable file): one line for the user."""


@dataclass(frozen=True)
class ReportOptions:
    title: str = "Server comparison"
    customer: str = ""
    author: str = ""
    date: date = field(default_factory=date.today)
    logo_path: str | None = None
    page_size: str = "A4"          # "A4" or "Letter"
    notes: str = ""                # the comparison's notes, shown on page 1

    def __post_init__(self) -> None:
        if self.page_size not in PAGE_SIZES:
            raise ValueError(f"page size {self.page_size!r}: use one of {', '.join(PAGE_SIZES)}")


@dataclass(frozen=True)
class Headline:
    """One large line of page 1: "Random read 4 KiB: new-server 3.4x old-server"."""

    what: str           # "Random read 4 KiB"
    winner: str
    ratio: str          # "3.4x"; "" for a tie
    other: str          # the server it is compared with
    detail: str         # "17,000 vs 5,000 IOPS, higher is better"
    tags: str = ""      # caveat tags of the winning figure

    @property
    def text(self) -> str:
        if not self.ratio:
            return f"{self.what}: {self.winner} and {self.other} tie"
        return f"{self.what}: {self.winner} {self.ratio} {self.other}"


@dataclass(frozen=True)
class MethodRow:
    """How one run was made, for the methodology appendix."""

    run_id: int
    server: str
    test: str
    parameters: str      # "size=2G, runtime=30" (secrets never shown)
    engine: str          # "fio 3.33", "python 3.11.2, zlib 1.2.13"
    agent_version: str
    started: str         # "2026-11-21 09:00 UTC"
    duration: str        # "2 min 05 s"
    status: str


@dataclass(frozen=True)
class Overlay:
    test: str
    name: str            # "disk.util"
    title: str           # "%util of the busiest disk"
    unit: str
    series: tuple[AlignedSeries, ...]


@dataclass(frozen=True)
class ReportData:
    options: ReportOptions
    comparison: Comparison
    headlines: tuple[Headline, ...]
    run_notes: tuple[tuple[str, str, str], ...]     # (server, test, note) per run that has notes
    methods: tuple[MethodRow, ...]
    overlays: tuple[Overlay, ...]


def gather(store: Any, run_ids: Sequence[int], baseline_run_id: int | None = None,
           options: ReportOptions | None = None) -> ReportData:
    """Everything the report shows, read from the store (a storage Store); no Qt involved."""
    options = options or ReportOptions()
    if options.logo_path and not Path(options.logo_path).is_file():
        raise ReportError(f"no logo file {options.logo_path}")
    inputs = load_inputs(store, run_ids)
    comparison = build(inputs, baseline_run_id)
    results = {item.record.id: item.results for item in inputs}
    runs = [(row.label if len(row.runs) == 1 else f"{row.label} ({run.test})", run)
            for row in comparison.rows for run in row.runs]
    notes = tuple((label, run.test, run.notes.strip()) for label, run in runs if run.notes.strip())
    methods = tuple(method_row(label, run, results[run.id]) for label, run in runs)
    return ReportData(options, comparison, tuple(headlines(comparison)), notes, methods,
                      tuple(gather_overlays(store, comparison)))


def gather_overlays(store: Any, comparison: Comparison) -> list[Overlay]:
    """Per test of the comparison, the telemetry curves of its runs aligned on the test start."""
    titles = {name: (title, unit) for name, title, unit in OVERLAYS}
    out = []
    tests = list(dict.fromkeys(run.test for row in comparison.rows for run in row.runs))
    for test in tests:
        labelled = overlay_runs(comparison, test)
        for name in TEST_OVERLAYS.get(test, DEFAULT_OVERLAYS):
            series = aligned(store, labelled, name)
            if series:
                title, unit = titles[name]
                out.append(Overlay(test, name, title, unit, tuple(series)))
    return out


def headlines(comparison: Comparison) -> list[Headline]:
    """One line per headline figure that at least two servers have: who wins and by how much."""
    out = []
    for item in comparison.metrics:
        found = lead(comparison, item) if item.headline else None
        if found is None:
            continue
        best, other = found.best, found.other
        test = CATALOGUE.label(item.test)
        what = item.label if item.test == "disk" or item.label.lower().startswith(test.lower()) \
            else f"{test}: {item.label}"
        detail = f"{best.text} vs {other.text} {item.unit}, {item.better} is better".replace("  ", " ")
        out.append(Headline(what, found.best_row.label, ratio_text(found.ratio) if found.ratio is not None else "",
                            found.other_row.label, detail, best.tags))
    return out


def is_secret(name: str) -> bool:
    low = name.lower()
    return name in CATALOGUE.secret_params() or any(word in low for word in SECRET_WORDS)


def parameters_text(parameters: Mapping[str, Any]) -> str:
    """ "size=2G, runtime=30"; secret parameters are left out entirely, not even masked."""
    # a stored run keeps the test's own parameters under "params", beside how it was run (interval, margin)
    inner = parameters.get("params")
    merged = {**{k: v for k, v in parameters.items() if k != "params"}, **(inner if isinstance(inner, dict) else {})}
    shown = [f"{key}={_value_text(value)}" for key, value in sorted(merged.items())
             if not is_secret(str(key)) and value not in (None, "")]
    return ", ".join(shown) or "defaults"


def _value_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    if isinstance(value, dict):
        return " ".join(f"{k}:{v}" for k, v in value.items() if not is_secret(str(k)))
    return str(value)


def engine_of(run: RunRecord, results: Sequence[Any]) -> str:
    """The engine and its version, or for CPU the interpreter and libraries that did the work."""
    if run.test == "cpu":
        versions = cpu_versions(r for r in results if getattr(r, "test", "") == "cpu")
        if versions:
            return ", ".join(v if v.lower().startswith(k) else f"{k} {v}" for k, v in versions.items())
    engines = list(dict.fromkeys(engine_text(dict(r.metadata)) for r in results
                                 if r.test == run.test and r.metadata.get("engine")))
    if engines:
        return ", ".join(engines)
    if run.engine:
        return f"{run.engine} {run.engine_version.removeprefix(run.engine + '-')}".strip()
    return "built into the agent"


def duration_text(run: RunRecord) -> str:
    if run.finished_at is None:
        return "unfinished"
    seconds = max((run.finished_at - run.started_at).total_seconds(), 0.0)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def method_row(label: str, run: RunRecord, results: Sequence[Any]) -> MethodRow:
    return MethodRow(run.id, label, CATALOGUE.label(run.test), parameters_text(run.parameters or {}),
                     engine_of(run, results), run.agent_version or "?",
                     run.started_at.strftime("%Y-%m-%d %H:%M UTC"), duration_text(run), run.status)


def host_spec(facts: Mapping[str, Any] | None) -> dict[str, str]:
    """The columns of the host specs table, from a facts snapshot."""
    if not facts:
        return {"cpu": "no facts stored", "topology": "", "ram": "", "disks": "", "virt": "", "os": ""}
    cpu = facts.get("cpu") or {}
    memory = facts.get("memory") or {}
    disks = []
    for disk in (facts.get("disks") or [])[:6]:
        kind = "HDD" if disk.get("rotational") else "SSD"
        model = f" {disk.get('model')}" if disk.get("model") else ""
        size = human_bytes(disk.get("size_bytes"), binary=False, missing="?")
        disks.append(f"{disk.get('dm_name') or disk.get('name')} {size} {kind}{model}")
    arrays = [f"{a.get('name')} {a.get('level')}" for a in ((facts.get("raid") or {}).get("arrays") or [])]
    kernel = facts.get("kernel")
    return {
        "cpu": str(cpu.get("model") or "unknown"),
        "topology": f"{cpu.get('sockets', '?')} / {cpu.get('cores', '?')} / {cpu.get('threads', '?')}",
        "ram": human_bytes(memory.get("total_bytes")) if memory.get("total_bytes") else "?",
        "disks": "; ".join(disks + arrays) or "?",
        "virt": str(facts.get("virtualization") or "none detected"),
        "os": " ".join(p for p in (str(facts.get("os") or ""), f"kernel {kernel}" if kernel else "") if p) or "?",
    }
