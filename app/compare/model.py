"""A comparison of stored runs: one row per server, one column per figure, the winner marked, ratios to a baseline.

Qt-free: the window, the PDF and the command line read the same Comparison. Runs of one host with
different tests share a row (disk and CPU of db-primary); a second run of the same test on the same
host gets a row of its own, labelled with its date (the same server over time), unless the runs are
repeats of one test (app.compare.rows): then the row shows their median with its spread across runs.

A figure is marked best only when no other server's range overlaps its range (app.compare.ties);
otherwise the figures that overlap the leader's read "tie (within ±X %)". With prices (the inventory's
or the comparison's), the headline figures are also given per price unit (app.compare.prices).

Ratios say how many times better than the baseline a figure is: value / baseline where higher is
better, baseline / value for times and latencies. So "3.4x" always means "3.4 times as good".
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.catalogue import CATALOGUE
from app.compare.caveats import Caveat, between_caveats, run_caveats
from app.compare.metrics import HIGHER, METRICS, Figure, Metric
from app.compare.prices import base_key, is_price_metric, per_price, price_line, price_metric, priced
from app.compare.rows import group_rows, row_labels, unit_figures
from app.compare.source import RunSource
from app.compare.steadiness import steadiness
from app.compare.ties import margin, standing, tie_text, within_text
from app.engine.host_prices import host_prices
from app.summary.base import number, warning_messages
from app.summary.facts import spec_line
from app.summary.spread_basis import FROM_REPEATS_ONLY, from_repeats_only
from storage.records import HostPrice, ResultSample, RunRecord, Spread

NO_VALUE = "—"


@dataclass(frozen=True)
class RunInput:
    """What the comparison needs of one stored run (plain data, loaded in a worker)."""

    record: RunRecord
    facts: dict[str, Any] | None
    results: list[ResultSample]
    warnings: list[str] = field(default_factory=list)
    price: HostPrice | None = None   # the host's price in the inventory, when it has one


@dataclass(frozen=True)
class Cell:
    value: float | None
    text: str                   # the value as shown: "18,123"
    note: str = ""              # what the value needs said with it: "16 workers"
    best: bool = False
    ratio: float | None = None  # times as good as the baseline
    caveats: tuple[Caveat, ...] = ()
    spread: Spread | None = None    # within its run, or across the repeats it is the median of
    margin: float | None = None     # ± how far the value could be off by chance (app.compare.ties)
    measured: bool = False          # the margin comes from a measured spread, not the assumed one
    verdict: str = ""               # "tie (within ±4.1 %)" when no server is ahead on this figure
    repeats: int = 1                # runs the value is the median of
    steadiness: str = ""            # "variation 2.0 % · p99/p50 3.1x · steal 0.4 %" (headline figures)

    @property
    def ratio_text(self) -> str:
        return ratio_text(self.ratio)

    @property
    def spread_text(self) -> str:
        """ "±2.1 %": the measured margin in % of the value; "" when none was measured."""
        if not self.measured or self.margin is None or not self.value:
            return ""
        return within_text(100.0 * self.margin / abs(self.value))

    @property
    def tie(self) -> bool:
        return self.verdict.startswith("tie")

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
    price: HostPrice | None = None

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
        """One sentence per test (its headline figures, and those per price unit when prices are set): who
        leads and by how much, or who ties."""
        lines = []
        for item in self.metrics:
            if not item.headline and not is_price_metric(item):
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

    def price_lines(self) -> list[str]:
        """Each priced server's price with its date and source; [] when no price is set."""
        return [price_line(row.label, row.price) for row in self.rows if row.price is not None]

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
    baseline itself, else the runner-up. When the leader's range overlaps another's (app.compare.ties)
    no one wins: `tied` holds the rows that tie, the leader first."""

    best_row: Row
    best: Cell
    runner_up_row: Row
    runner_up: Cell
    other_row: Row           # the baseline or the runner-up
    other: Cell
    ratio: float | None      # best against other, "times as good"
    against_baseline: bool   # other is the baseline (which may also be the runner-up)
    tied: tuple[Row, ...] = ()
    within_percent: float = 0.0

    @property
    def is_tie(self) -> bool:
        return bool(self.tied)

    @property
    def verdict(self) -> str:
        """ "tie (within ±4.1 %)", or "" when the leader wins."""
        return tie_text(self.within_percent) if self.tied else ""


def _ranked(column: list[tuple[Row, Cell]], item: Metric) -> list[tuple[Row, Cell]]:
    finite = [(row, cell) for row, cell in column if cell.value is not None and math.isfinite(cell.value)]
    return sorted(finite, key=lambda rc: rc[1].value, reverse=item.better == HIGHER)


def lead(comparison: Comparison, item: Metric) -> Lead | None:
    """The leader of a figure at least two servers have; None otherwise."""
    ordered = _ranked(comparison.column(item.key), item)
    if len(ordered) < 2:
        return None
    found = standing([c.value for _r, c in ordered], [c.margin or 0.0 for _r, c in ordered],
                     item.better == HIGHER)
    assert found is not None
    (best_row, best), (next_row, runner_up) = ordered[0], ordered[1]
    other_row, other = next_row, runner_up
    base = comparison.baseline
    base_cell = base.cells.get(item.key) if base is not None else None
    against_baseline = base is not None and base is not best_row and base_cell is not None \
        and base_cell.value is not None and math.isfinite(base_cell.value)
    if against_baseline:
        other_row, other = base, base_cell
    ratio = times_as_good(item, best.value, other.value) if best.value != other.value else None
    tied = tuple(ordered[i][0] for i in found.tied)
    return Lead(best_row, best, next_row, runner_up, other_row, other, ratio, against_baseline, tied,
                found.within_percent)


def _names(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def winner_line(comparison: Comparison, item: Metric) -> str:
    found = lead(comparison, item)
    if found is None:
        return ""
    test = CATALOGUE.label(item.test)
    what = f"{test}, {item.label[0].lower()}{item.label[1:]}" if not item.label.lower().startswith(test.lower()) \
        else item.label
    best = found.best
    if found.is_tie:
        behind = [row.label for row, _c in _ranked(comparison.column(item.key), item) if row not in found.tied]
        ahead = f", ahead of {_names(behind)}" if behind else ""
        return (f"{what}: {_names([row.label for row in found.tied])} {found.verdict} at about {best.text} "
                f"{item.unit}{ahead}.")
    baseline = "the baseline " if found.against_baseline else ""
    # a lead that rests on a caveated figure says so in the same sentence, not only in the notes
    flagged = f" (caveat: {best.tags})" if best.tags else ""
    return (f"{what}: {found.best_row.label} leads with {best.text} {item.unit}{flagged}, "
            f"{ratio_text(found.ratio)} {baseline}{found.other_row.label}.")


def _note(figure: Figure, test: str = "") -> str:
    repeats = f"median of {figure.repeats} runs" if figure.repeats > 1 else ""
    # a one-operation figure (a restore's time) has no spread within its run: never shown as if exact
    alone = FROM_REPEATS_ONLY if figure.repeats <= 1 and from_repeats_only(test, figure.spread) else ""
    return "; ".join(part for part in (figure.note, repeats, alone) if part)


def build(inputs: Sequence[RunInput], baseline_run_id: int | None = None,
          prices: Mapping[str, HostPrice] | None = None) -> Comparison:
    """The comparison of the given runs, in the order given; baseline_run_id picks the baseline row.

    prices: a price per host name for this comparison, over the inventory's (RunInput.price)."""
    if not inputs:
        raise ValueError("pick at least one run to compare")
    groups = group_rows(inputs)
    labels = row_labels(groups)
    raw: list[tuple[str, list[RunInput], dict[str, Figure], list[Any], list[Caveat]]] = []
    for label, group in zip(labels, groups, strict=True):
        runs = [run for unit in group for run in unit]
        found: dict[str, Figure] = {}
        for unit in group:
            found.update(unit_figures(unit))
        notes: list[Caveat] = []
        for run in runs:
            notes += run_caveats(run.results, run.facts, run.warnings, run.record.status, run.record.error)
        raw.append((label, runs, found, [r for run in runs for r in run.results], list(dict.fromkeys(notes))))
    row_prices = [_row_price(runs, prices) for _l, runs, *_rest in raw]
    price_columns: dict[str, Metric] = {}
    for (_l, _g, found, _r, _n), price in zip(raw, row_prices, strict=True):
        for item in METRICS:
            figure = found.get(item.key)
            if price is None or figure is None or not priced(item):
                continue
            column = price_metric(item, price)   # one per currency and period: EUR is not compared with USD
            divided = per_price(figure, price)
            if divided is not None:
                found[column.key] = divided
                price_columns.setdefault(column.key, column)
    between = between_caveats([(label, results) for label, _g, _f, results, _n in raw])
    shown = tuple(m for m in (*METRICS, *price_columns.values())
                  if any(m.key in found for _l, _g, found, _r, _n in raw))
    base_index = next((i for i, (_l, group, *_rest) in enumerate(raw)
                       if baseline_run_id is not None and any(r.record.id == baseline_run_id for r in group)), None)
    if baseline_run_id is not None and base_index is None:
        raise ValueError(f"the baseline run {baseline_run_id} is not one of the compared runs")

    verdicts = _verdicts(shown, [found for _l, _g, found, _r, _n in raw])
    rows = []
    for index, (label, group, found, results, notes) in enumerate(raw):
        cells = {}
        for item in shown:
            figure = found.get(item.key)
            if figure is None:
                continue
            ratio = None
            if base_index is not None:
                reference = raw[base_index][2].get(item.key)
                ratio = times_as_good(item, figure.value, reference.value) if reference else None
            key = base_key(item.key)
            concerns = tuple(c for c in notes + between if not c.keys or key in c.keys)
            found_margin = margin(figure.value, figure.spread)
            best, verdict = verdicts.get((item.key, index), (False, ""))
            cells[item.key] = Cell(figure.value, _text(figure.value, key != item.key), _note(figure, item.test),
                                   best=best,
                                   ratio=ratio, caveats=concerns, spread=figure.spread, margin=found_margin.value,
                                   measured=found_margin.basis != "assumed", verdict=verdict,
                                   repeats=figure.repeats,
                                   steadiness=steadiness(item.key, results) if item.headline else "")
        facts = next((run.facts for run in reversed(group) if run.facts), None)
        rows.append(Row(label, group[0].record.host_name, tuple(run.record for run in group), facts,
                        spec_line(facts) if facts else "no facts stored", cells, tuple(notes),
                        baseline=index == base_index, price=row_prices[index]))
    return Comparison(tuple(rows), shown, tuple(between))


def _text(value: float, per_price: bool = False) -> str:
    """The value as shown; a small figure per price unit with three significant figures, not "0.000"."""
    if per_price and value and math.isfinite(value) and abs(value) < 1:
        return f"{value:.3g}"
    return number(value)


def _row_price(runs: Sequence[RunInput], prices: Mapping[str, HostPrice] | None) -> HostPrice | None:
    host = runs[0].record.host_name
    if prices and host in prices:
        return prices[host]
    return next((run.price for run in runs if run.price is not None), None)


def _verdicts(shown: Sequence[Metric], found: Sequence[dict[str, Figure]]) -> dict[tuple[str, int], tuple[bool, str]]:
    """(column key, row index) -> (the sole winner, "tie (within ±X %)" for the rows tied with the leader)."""
    out: dict[tuple[str, int], tuple[bool, str]] = {}
    for item in shown:
        indices = [i for i, figures_ in enumerate(found)
                   if item.key in figures_ and math.isfinite(figures_[item.key].value)]
        values = [found[i][item.key].value for i in indices]
        margins = [margin(found[i][item.key].value, found[i][item.key].spread).value for i in indices]
        result = standing(values, margins, item.better == HIGHER)
        if result is None:
            continue
        if result.winner is not None:
            out[(item.key, indices[result.winner])] = (True, "")
        for position in result.tied:
            out[(item.key, indices[position])] = (False, tie_text(result.within_percent))
    return out


def load_inputs(source: RunSource, run_ids: Iterable[int]) -> list[RunInput]:
    """The stored runs, with their warnings and their host's price; facts fall back to the host's latest.
    NotFound for a missing id."""
    out = []
    for run_id in run_ids:
        detail = source.run_detail(run_id)
        facts = detail.facts
        if facts is None:
            facts = source.latest_facts(detail.run.host_name)
        out.append(RunInput(detail.run, facts, list(detail.results), warning_messages(source.run_events(run_id))))
    prices = host_prices(source, [run.record.host_name for run in out])
    return [replace(run, price=prices.get(run.record.host_name)) for run in out]


def compare_runs(source: RunSource, run_ids: Sequence[int], baseline_run_id: int | None = None,
                 prices: Mapping[str, HostPrice] | None = None) -> Comparison:
    return build(load_inputs(source, run_ids), baseline_run_id, prices)
