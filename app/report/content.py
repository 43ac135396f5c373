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
from app.compare.caveats import Caveat
from app.compare.dbload import OPS_OVERLAY, P99_OVERLAY, DbLoadRun, dbload_runs, overlays_of
from app.compare.dbload_server import CLIENT, overlay_curves
from app.compare.dns import DnsLine, dns_comparison
from app.compare.model import Comparison, RunInput, build, figure_name, load_inputs
from app.compare.overlay import OVERLAYS, AlignedSeries, aligned, overlay_runs
from app.compare.standings import Standing, leads
from app.compare.ties import REFERENCE
from app.errors import AppError
from app.report.consistency import consistency
from app.report.methodology import Methodology, MethodRun, methodology_of
from app.report.sweep import Sweep, sweeps
from app.summary.dbload_series import DBLOAD
from app.summary.mail_series import mail_series
from storage.records import HostPrice
from widgets.format import human_bytes
from widgets.host_colours import colours_by_host, host_colour

PAGE_SIZES = ("A4", "Letter")
# the telemetry charts of each test, in order: a CPU test shows how busy the CPU was, a mail storm first its
# accepts and queue
# a database load: its server's disks, CPU, steal and load, then its client's CPU and load (app.compare.dbload_server)
TEST_OVERLAYS = {"cpu": ("cpu.busy", "load.1"), "mailstorm": ("mail.accepted", "mail.queue", "disk.util", "load.1"),
                 "dbload": ("disk.util", "cpu.busy", "cpu.steal", "load.1", "client.cpu.busy", "client.load.1")}
DEFAULT_OVERLAYS = ("disk.util", "load.1")


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
    """One headline figure on page 1: the reference (the leader, or the baseline) with its figure, then every
    other server's standing against it ("honH: 0.46x of honA (0.42–0.50)"), as the summary says it."""

    what: str                       # "CPU all cores"
    winner: str                     # the reference server (the leader, or the baseline)
    detail: str                     # "10.8 ops/s, higher is better"
    standings: tuple[Standing, ...] = ()   # the other servers, in the comparison's order
    baseline: bool = False          # the reference is the baseline
    tags: str = ""                  # caveat tags of the reference's figure
    value: str = ""                 # "10.8 ops/s"
    unit: str = ""

    @property
    def alone(self) -> bool:
        return not self.standings

    @property
    def reference_text(self) -> str:
        """ "honA leads with 10.8 ops/s", "honT (baseline) has 5.4 ops/s", "90,000 IOPS on db-01"."""
        if self.alone:
            return f"{self.value} on {self.winner}"
        return f"{self.winner} {self.role} {self.value}"

    @property
    def role(self) -> str:
        """ "leads with" only beside a server that is behind it: next to ties and "can't tell yet" it "has"."""
        return "(baseline) has" if self.baseline else ("leads with" if leads(self.standings) else "has")

    @property
    def text(self) -> str:
        return f"{self.what}: " + "; ".join([self.reference_text] + [f"{s.row}: {s.text}" for s in self.standings])


@dataclass(frozen=True)
class CaveatNote:
    """A caveat sentence, shown once beside the figures of its test and once in the appendix."""

    test: str
    whom: str            # "db-01, cloud-vm" or "All servers"
    text: str

    @property
    def line(self) -> str:
        return f"{self.whom}: {self.text}"


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
    methods: tuple[Methodology, ...]
    overlays: tuple[Overlay, ...]
    caveats: tuple[CaveatNote, ...] = ()
    colours: Mapping[str, str] = field(default_factory=dict)    # row label -> "#rrggbb", as in the window
    steadiness: Mapping[tuple[str, str], str] = field(default_factory=dict)   # (row label, figure key) -> text
    sweeps: tuple[Sweep, ...] = ()     # the shared-storage totals' sweep curves
    dbload: tuple[DbLoadRun, ...] = ()  # the database-load runs: their sweep curves
    dns: tuple[DnsLine, ...] = ()      # the dns runs: a line per resolver and pass (app.compare.dns)

    def caveats_of(self, test: str) -> list[CaveatNote]:
        return [note for note in self.caveats if note.test == test]

    def colour(self, label: str) -> str:
        # "db-01: database server pg-01" is drawn in its row's colour (app.compare.dbload_server)
        row = label.split(": database server ", 1)[0].split(": load client", 1)[0]
        return self.colours.get(label) or self.colours.get(row) or host_colour(label, list(self.colours))


def gather(store: Any, run_ids: Sequence[int], baseline_run_id: int | None = None,
           options: ReportOptions | None = None, prices: Mapping[str, HostPrice] | None = None) -> ReportData:
    """Everything the report shows, read from the store (a storage Store); no Qt involved.

    prices: a price per host for this comparison, over the inventory's (figures per price unit)."""
    options = options or ReportOptions()
    if options.logo_path and not Path(options.logo_path).is_file():
        raise ReportError(f"no logo file {options.logo_path}")
    inputs = load_inputs(store, run_ids)
    comparison = build(inputs, baseline_run_id, prices)
    by_id = {item.record.id: item for item in inputs}
    runs = [(row.label if len(row.runs) == 1 else f"{row.label} ({run.test})", run)
            for row in comparison.rows for run in row.runs]
    notes = tuple((label, run.test, run.notes.strip()) for label, run in runs if run.notes.strip())
    # each server in its host's colour, as in the window: the inventory's place (list_hosts) decides
    list_hosts = getattr(store, "list_hosts", None)
    known = [host.name for host in list_hosts()] if callable(list_hosts) else None
    colours = colours_by_host({row.label: row.host for row in comparison.rows}, known)
    overlays = gather_overlays(store, comparison)
    stored = {overlay.name for overlay in overlays if overlay.test == "mailstorm"}
    # runs stored before the storm's rates were series of their own keep them in their results
    overlays += [o for o in mail_overlays(comparison, by_id) if o.name not in stored]
    loads = dbload_runs(comparison, {run_id: item.results for run_id, item in by_id.items()})
    overlays += [Overlay(DBLOAD, name, title, unit, tuple(series)) for name, title, unit, series in overlays_of(loads)]
    overlays.sort(key=_overlay_order)
    return ReportData(options, comparison, tuple(headlines(comparison)), notes, tuple(methods(comparison, by_id)),
                      tuple(overlays), tuple(caveat_notes(comparison, by_id)), colours,
                      consistency(comparison, by_id),
                      tuple(sweeps([(row.label, run) for row in comparison.rows for run in row.runs],
                                   {run_id: item.results for run_id, item in by_id.items()})), tuple(loads),
                      dns_comparison(((item.record.id, item.record.host_name, item.results) for item in inputs),
                                     {item.record.id: item.record.started_at for item in inputs}).lines)


def _overlay_order(overlay: Overlay) -> int:
    if overlay.test == DBLOAD:   # the load's own curves first: throughput, then each operation's p99
        own = (OPS_OVERLAY, P99_OVERLAY)
        first = [i for i, prefix in enumerate(own) if overlay.name.startswith(prefix)]
        if first:
            return first[0] - len(own)
    names = TEST_OVERLAYS.get(overlay.test, DEFAULT_OVERLAYS)
    return names.index(overlay.name) if overlay.name in names else len(names)


def methods(comparison: Comparison, inputs: Mapping[int, RunInput]) -> list[Methodology]:
    """The methodology sentences of each compared test, in the order of the results."""
    tests = list(dict.fromkeys(list(comparison.tests) + [run.test for row in comparison.rows for run in row.runs]))
    out = []
    for test in tests:
        runs = [MethodRun(row.label, run, inputs[run.id].results) for row in comparison.rows for run in row.runs
                if run.test == test and run.id in inputs]
        if runs:
            out.append(methodology_of(test, runs))
    return out


def caveat_notes(comparison: Comparison, inputs: Mapping[int, RunInput]) -> list[CaveatNote]:
    """Each caveat sentence once, under the test it concerns, with the servers it concerns."""
    whom: dict[tuple[str, str], list[str]] = {}
    for row in comparison.rows:
        # the row's caveats: each run's, scoped to its test, a repeat group's said once (app.compare.model)
        for caveat in row.caveats:
            test = _caveat_test(caveat, row.runs[0].test if row.runs else "")
            labels = whom.setdefault((test, caveat.text), [])
            if row.label not in labels:
                labels.append(row.label)
    for caveat in comparison.between:
        whom.setdefault((_caveat_test(caveat, comparison.tests[0] if comparison.tests else ""), caveat.text),
                        ["All servers"])
    order = {test: i for i, test in enumerate(comparison.tests)}
    notes = [CaveatNote(test, ", ".join(labels), text) for (test, text), labels in whom.items()]
    return sorted(notes, key=lambda note: order.get(note.test, len(order)))


def _caveat_test(caveat: Caveat, fallback: str) -> str:
    """The test of the figures a caveat concerns (a figure's key is "test:metric"), else the run's own."""
    tests = [key.partition(":")[0] for key in caveat.keys if key.partition(":")[0]]
    return tests[0] if tests else fallback


def mail_overlays(comparison: Comparison, inputs: Mapping[int, RunInput]) -> list[Overlay]:
    """Accepted messages per second and queue depth of each mail storm, from its first second."""
    accepts, depths = [], []
    for row in comparison.rows:
        for run in row.runs:
            if run.test != "mailstorm" or run.id not in inputs:
                continue
            series = mail_series(inputs[run.id].results)
            if series.accepts:
                accepts.append(AlignedSeries(row.label, run.id, "mail.accepted", "", "msg/s",
                                             list(series.seconds), list(series.accepts)))
            if series.depths:
                depths.append(AlignedSeries(row.label, run.id, "mail.queue", "", "messages",
                                            list(series.polled_at), list(series.depths)))
    out = []
    if accepts:
        out.append(Overlay("mailstorm", "mail.accepted", "Accepted messages per second", "msg/s", tuple(accepts)))
    if depths:
        out.append(Overlay("mailstorm", "mail.queue", "Queue depth", "messages", tuple(depths)))
    return out


def gather_overlays(store: Any, comparison: Comparison) -> list[Overlay]:
    """Per test of the comparison, the telemetry curves of its runs aligned on the test start."""
    titles = {name: (title, unit) for name, title, unit in OVERLAYS}
    out = []
    tests = list(dict.fromkeys(run.test for row in comparison.rows for run in row.runs))
    for test in tests:
        labelled = overlay_runs(comparison, test)
        prefix = f"{CATALOGUE.label(test)}: "
        for name in TEST_OVERLAYS.get(test, DEFAULT_OVERLAYS):
            if test == DBLOAD:
                out += _dbload_overlay(store, comparison, name)
                continue
            series = aligned(store, labelled, name)
            if series:
                title, unit = titles[name]
                title = title.removeprefix(prefix)   # under the test's own heading
                out.append(Overlay(test, name, title[:1].upper() + title[1:], unit, tuple(series)))
    return out


def _dbload_overlay(store: Any, comparison: Comparison, name: str) -> list[Overlay]:
    """A database load's chart: the database server's curves (a client's where the server was not recorded),
    or, for a "client." name, the load clients'; the title says whose."""
    series = overlay_curves(store, comparison, name, DBLOAD)
    if not series:
        return []
    title, unit = {n: (t, u) for n, t, u in OVERLAYS}[name.removeprefix(CLIENT)]
    servers = any(": database server " in s.label for s in series)
    whose = "load client" if name.startswith(CLIENT) else "database server" if servers else "load client"
    if not name.startswith(CLIENT) and not servers:
        return []   # no server recorded: the client's curves come under their own names
    return [Overlay(DBLOAD, name, f"{title} — {whose}", unit, tuple(series))]


def names_text(names: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def headlines(comparison: Comparison) -> list[Headline]:
    """One entry per headline figure: the reference's figure and every other server's standing (the
    comparison's standings: the same numbers as the summary, the CSV and the JSON)."""
    out = []
    for item in comparison.metrics:
        if not item.headline:
            continue
        found = comparison.standings_of(item.key)
        reference = next((s for s in found if s.verdict == REFERENCE), None)
        if reference is None:
            continue
        what = figure_name(item) if item.test != "disk" else item.label
        cell = next(c for row, c in comparison.column(item.key) if row.label == reference.row)
        out.append(Headline(what, reference.row, f"{item.better} is better", tuple(s for s in found
                                                                                   if s is not reference),
                            reference.baseline, cell.tags, f"{reference.value_text} {item.unit}".strip(), item.unit))
    return out


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
