"""A comparison of stored runs: one row per server, one column per figure, the best marked, ratios to a baseline.

Qt-free: the window, the PDF and the command line read the same Comparison. Runs of one host with
different tests share a row (disk and CPU of db-primary); a second run of the same test on the same
host gets a row of its own, labelled with its date (the same server over time).

Ratios say how many times better than the baseline a figure is: value / baseline where higher is
better, baseline / value for times and latencies. So "3.4x" always means "3.4 times as good".
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.catalogue import CATALOGUE
from app.compare.caveats import Caveat, between_caveats, run_caveats
from app.compare.metrics import HIGHER, METRICS, Figure, Metric, figures
from app.compare.source import RunSource
from app.summary.base import number, warning_messages
from app.summary.facts import spec_line
from storage.records import ResultSample, RunRecord

NO_VALUE = "—"


@dataclass(frozen=True)
class RunInput:
    """What the comparison needs of one stored run (plain data, loaded in a worker)."""

    record: RunRecord
    facts: dict[str, Any] | None
    results: list[ResultSample]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Cell:
    value: float | None
    text: str                   # the value as shown: "18,123"
    note: str = ""              # what the value needs said with it: "16 workers"
    best: bool = False
    ratio: float | None = None  # times as good as the baseline
    caveats: tuple[Caveat, ...] = ()

    @property
    def ratio_text(self) -> str:
        return ratio_text(self.ratio)

    @property
    def tags(self) -> str:
        return ", ".join(dict.fromkeys(c.tag for c in self.caveats))


@dataclass(frozen=True)
class Row:
    label: str                          # "db-primary", or "db-primary 2026-11-21 10:44" for a host seen twice
    host: str
    runs: tuple[RunRecord, ...]
    facts: dict[str, Any] | None
    spec: str
    cells: dict[str, Cell]
    caveats: tuple[Caveat, ...]
    baseline: bool = False

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(run.id for run in self.runs)

    @property
    def tests(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(run.test for run in self.runs))


@dataclass(frozen=True)
class Comparison:
    rows: tuple[Row, ...]
    metrics: tuple[Metric, ...]         # only those at least one row has
    between: tuple[Caveat, ...]         # differences between the servers (engines, library versions)

    @property
    def baseline(self) -> Row | None:
        return next((row for row in self.rows if row.baseline), None)

    @property
    def tests(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.test for m in self.metrics))

    def test_label(self, test: str) -> str:
        """What a reader calls a test in a table or heading: "Disk", "Mail storm"."""
        return CATALOGUE.label(test)

    def column(self, key: str) -> list[tuple[Row, Cell]]:
        return [(row, row.cells[key]) for row in self.rows if key in row.cells and row.cells[key].value is not None]

    def winners(self) -> list[str]:
        """One sentence per test (its headline figures): who leads and by how much."""
        lines = []
        for item in self.metrics:
            if not item.headline:
                continue
            line = winner_line(self, item)
            if line:
                lines.append(line)
        return lines

    def summary(self) -> str:
        """The paragraph a customer reads first."""
        names = ", ".join(row.label for row in self.rows)
        parts = [f"{len(self.rows)} server{'s' if len(self.rows) != 1 else ''} compared ({names})"
                 + (f", baseline {self.baseline.label}" if self.baseline else "") + "."]
        parts += self.winners()
        flagged = sum(1 for row in self.rows for c in row.caveats) + len(self.between)
        if flagged:
            parts.append(f"{flagged} caveat{'s apply' if flagged != 1 else ' applies'}: see the notes beside the "
                         "figures.")
        return " ".join(parts)

    def caveat_lines(self) -> list[str]:
        """Every caveat once, with whom it concerns: "mail-01: Cached I/O ..."."""
        lines = [f"{row.label}: {c.text}" for row in self.rows for c in row.caveats]
        lines += [f"All servers: {c.text}" for c in self.between]
        return list(dict.fromkeys(lines))


def ratio_text(ratio: float | None) -> str:
    if ratio is None or not math.isfinite(ratio):
        return ""
    if ratio >= 10:
        return f"{ratio:.0f}x"
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2f}x"


def times_as_good(item: Metric, value: float, reference: float) -> float | None:
    """value / reference where higher is better, reference / value for times and latencies."""
    if item.better == HIGHER:
        result = value / reference if reference > 0 else None
    else:
        result = reference / value if value > 0 else None
    return result if result is None or math.isfinite(result) else None


@dataclass(frozen=True)
class Lead:
    """Who leads a figure, and against whom it is measured: the baseline when the leader is not the
    baseline itself, else the runner-up."""

    best_row: Row
    best: Cell
    runner_up_row: Row
    runner_up: Cell
    other_row: Row           # the baseline or the runner-up
    other: Cell
    ratio: float | None      # best against other, "times as good"
    against_baseline: bool   # other is the baseline (which may also be the runner-up)


def lead(comparison: Comparison, item: Metric) -> Lead | None:
    """The leader of a figure at least two servers have; None otherwise."""
    column = comparison.column(item.key)
    if len(column) < 2:
        return None
    ordered = sorted(column, key=lambda rc: rc[1].value, reverse=item.better == HIGHER)
    (best_row, best), (next_row, runner_up) = ordered[0], ordered[1]
    other_row, other = next_row, runner_up
    base = comparison.baseline
    against_baseline = base is not None and base is not best_row and base.cells.get(item.key) is not None \
        and base.cells[item.key].value is not None
    if against_baseline:
        other_row, other = base, base.cells[item.key]
    ratio = times_as_good(item, best.value, other.value) if best.value != other.value else None
    return Lead(best_row, best, next_row, runner_up, other_row, other, ratio, against_baseline)


def winner_line(comparison: Comparison, item: Metric) -> str:
    found = lead(comparison, item)
    if found is None:
        return ""
    test = CATALOGUE.label(item.test)
    what = f"{test}, {item.label[0].lower()}{item.label[1:]}" if not item.label.lower().startswith(test.lower()) \
        else item.label
    best = found.best
    if best.value == found.runner_up.value:
        return f"{what}: {found.best_row.label} and {found.runner_up_row.label} tie at {best.text} {item.unit}."
    baseline = "the baseline " if found.against_baseline else ""
    # a lead that rests on a caveated figure says so in the same sentence, not only in the notes
    flagged = f" (caveat: {best.tags})" if best.tags else ""
    return (f"{what}: {found.best_row.label} leads with {best.text} {item.unit}{flagged}, "
            f"{ratio_text(found.ratio)} {baseline}{found.other_row.label}.")


def _group(inputs: Sequence[RunInput]) -> list[list[RunInput]]:
    """Rows: a host's runs of different tests together; a repeated test on a host starts another row."""
    groups: list[list[RunInput]] = []
    for run in inputs:
        for group in groups:
            if group[0].record.host_name == run.record.host_name and \
                    all(r.record.test != run.record.test for r in group):
                group.append(run)
                break
        else:
            groups.append([run])
    return groups


def _label(group: list[RunInput], groups: list[list[RunInput]]) -> str:
    host = group[0].record.host_name
    if sum(1 for g in groups if g[0].record.host_name == host) == 1:
        return host
    return f"{host} {group[0].record.started_at.strftime('%Y-%m-%d %H:%M')}"


def build(inputs: Sequence[RunInput], baseline_run_id: int | None = None) -> Comparison:
    """The comparison of the given runs, in the order given; baseline_run_id picks the baseline row."""
    if not inputs:
        raise ValueError("pick at least one run to compare")
    groups = _group(inputs)
    raw: list[tuple[str, list[RunInput], dict[str, Figure], list[Any], list[Caveat]]] = []
    for group in groups:
        results = [r for run in group for r in run.results]
        found: dict[str, Figure] = {}
        for run in group:
            found.update(figures(run.results))
        notes: list[Caveat] = []
        for run in group:
            notes += run_caveats(run.results, run.facts, run.warnings, run.record.status, run.record.error)
        raw.append((_label(group, groups), group, found, results, list(dict.fromkeys(notes))))
    between = between_caveats([(label, results) for label, _g, _f, results, _n in raw])
    shown = tuple(m for m in METRICS if any(m.key in found for _l, _g, found, _r, _n in raw))
    base_index = next((i for i, (_l, group, *_rest) in enumerate(raw)
                       if baseline_run_id is not None and any(r.record.id == baseline_run_id for r in group)), None)
    if baseline_run_id is not None and base_index is None:
        raise ValueError(f"the baseline run {baseline_run_id} is not one of the compared runs")

    best: dict[str, float] = {}
    for item in shown:
        values = [found[item.key].value for _l, _g, found, _r, _n in raw if item.key in found]
        if len(values) > 1:
            best[item.key] = max(values) if item.better == HIGHER else min(values)
    rows = []
    for index, (label, group, found, _results, notes) in enumerate(raw):
        cells = {}
        for item in shown:
            figure = found.get(item.key)
            if figure is None:
                continue
            ratio = None
            if base_index is not None:
                reference = raw[base_index][2].get(item.key)
                ratio = times_as_good(item, figure.value, reference.value) if reference else None
            concerns = tuple(c for c in notes + between if not c.keys or item.key in c.keys)
            cells[item.key] = Cell(figure.value, number(figure.value), figure.note,
                                   best=best.get(item.key) == figure.value, ratio=ratio, caveats=concerns)
        facts = next((run.facts for run in reversed(group) if run.facts), None)
        rows.append(Row(label, group[0].record.host_name, tuple(run.record for run in group), facts,
                        spec_line(facts) if facts else "no facts stored", cells, tuple(notes),
                        baseline=index == base_index))
    return Comparison(tuple(rows), shown, tuple(between))


def load_inputs(source: RunSource, run_ids: Iterable[int]) -> list[RunInput]:
    """The stored runs, with their warnings; facts fall back to the host's latest. NotFound for a missing id."""
    out = []
    for run_id in run_ids:
        detail = source.run_detail(run_id)
        facts = detail.facts
        if facts is None:
            facts = source.latest_facts(detail.run.host_name)
        out.append(RunInput(detail.run, facts, list(detail.results), warning_messages(source.run_events(run_id))))
    return out


def compare_runs(source: RunSource, run_ids: Sequence[int], baseline_run_id: int | None = None) -> Comparison:
    return build(load_inputs(source, run_ids), baseline_run_id)
