"""A comparison of stored runs: one row per server, one column per figure, the winner marked, ratios to a baseline.

Qt-free: the window, the PDF and the command line read the same Comparison. Runs of one host with
different tests share a row (disk and CPU of db-primary); a second run of the same test on the same
host gets a row of its own, labelled with its date (the same server over time), unless the runs are
repeats of one test (app.compare.rows): then the row shows their median with its spread across runs.

Every figure gets a verdict against one reference, the baseline or else the leader (app.compare.standings,
app.compare.ties): ahead by x (lo–hi), tie (within ±z) or can't tell yet, with what would settle it. A
figure is starred best only when it is ahead of every other complete server. A run that did not complete
is shown with its reason and never judged. With prices (the inventory's or the comparison's), the headline
figures are also given per price unit (app.compare.prices).

Ratios and factors say how many times better a figure is: value / reference where higher is better,
reference / value for times and latencies. So "3.4x" always means "3.4 times as good".
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.catalogue import CATALOGUE
from app.compare.caveats import Caveat, between_caveats, merged, run_caveats, scoped
from app.compare.host_noise import HostSpread, host_noise
from app.compare.metrics import HIGHER, METRICS, Figure, Metric
from app.compare.prices import base_key, is_price_metric, per_price, price_line, price_metric, priced
from app.compare.rows import group_rows, row_labels, unit_figures
from app.compare.source import RunSource
from app.compare.standings import Entry, Judged, Standing, judge_column, standing_line
from app.compare.steadiness import steadiness
from app.compare.ties import CANT_TELL, TIE
from app.engine.host_prices import host_prices
from app.engine.repeat_record import until_stable_missed
from app.summary.base import number, warning_messages
from app.summary.dns import DnsPass, dns_passes
from app.summary.facts import spec_line
from app.summary.spread_basis import FROM_REPEATS_ONLY, from_repeats_only
from storage.records import HostPrice, ResultSample, RunRecord, RunStatus, Spread

NO_VALUE = "—"


@dataclass(frozen=True)
class RunInput:
    """What the comparison needs of one stored run (plain data, loaded in a worker)."""

    record: RunRecord
    facts: dict[str, Any] | None
    results: list[ResultSample]
    warnings: list[str] = field(default_factory=list)
    price: HostPrice | None = None   # the host's price in the inventory, when it has one
    until_stable_missed: str = ""    # "RSE 18 % after 10 runs, target 2 %": repeats that ended unsettled
    host_noise: dict[str, HostSpread] = field(default_factory=dict)   # key -> the host's repeats' spread


@dataclass(frozen=True)
class Cell:
    value: float | None
    text: str                   # the value as shown: "18,123"
    note: str = ""              # what the value needs said with it: "16 workers"
    best: bool = False          # ahead of every other complete server
    ratio: float | None = None  # times as good as the baseline (the point factor; the verdict has its range)
    caveats: tuple[Caveat, ...] = ()
    spread: Spread | None = None    # within its run, or across the repeats it is the median of
    judged: Judged | None = None    # the verdict against the reference (app.compare.standings)
    partial: str = ""               # why the figure is partial ("cancelled run"): greyed, never judged
    repeats: int = 1                # runs the value is the median of
    steadiness: str = ""            # "variation 2.0 % · p99/p50 3.1x · steal 0.4 %" (headline figures)
    until_stable_missed: str = ""   # "RSE 18 %, target 2 %": until-stable ended at its cap, unsettled

    @property
    def ratio_text(self) -> str:
        return ratio_text(self.ratio)

    @property
    def verdict(self) -> str:
        """ "ahead of honA by 1.8x (1.6–2.0)", "tie with honA (within ±4.1 %)", "leader", "not compared: …":
        short enough for a table cell (what would settle a can't-tell is in `settle` and the summary)."""
        return self.judged.text(self.partial, with_settle=False) if self.judged is not None else ""

    @property
    def verdict_said(self) -> str:
        """The verdict as the summary says it: with what would settle a can't-tell."""
        return self.judged.text(self.partial) if self.judged is not None else ""

    @property
    def settle(self) -> str:
        return (self.judged.verdict.settle or "") if self.judged is not None else ""

    @property
    def kind(self) -> str:
        """reference, ahead, behind, tie or cant_tell ("" when the figure was not judged)."""
        return self.judged.kind if self.judged is not None else ""

    @property
    def tie(self) -> bool:
        return self.kind == TIE

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
    dns: tuple[DnsPass, ...] = ()       # a dns run's every resolver and pass (the cells compare one of them)

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
    standings: tuple[Standing, ...] = ()    # every row's standing on every headline figure

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
        """One sentence per headline figure: the reference (leader or baseline) and every other server's
        standing against it, with factor and range, tie or can't tell."""
        lines = []
        for item in self.metrics:
            if item.headline:
                found = self.standings_of(item.key)
            elif is_price_metric(item):   # figures per price unit: said the same way, not in the JSON standings
                found = list(standings_for([item], self.rows))
            else:
                continue
            line = standing_line(figure_name(item), item.unit, found)
            if line:
                lines.append(line)
        return lines

    def standings_of(self, key: str) -> list[Standing]:
        return [s for s in self.standings if s.figure == key]

    def summary(self) -> str:
        """The paragraph a customer reads first: who was compared, every server's standing on every headline
        figure, and how many caveats apply."""
        return self.overview(with_standings=True)

    def overview(self, with_standings: bool = False) -> str:
        """Who was compared and how many caveats apply (the PDF's first page lists the standings above it)."""
        names = ", ".join(row.label for row in self.rows)
        parts = [f"{len(self.rows)} server{'s' if len(self.rows) != 1 else ''} compared ({names})"
                 + (f", baseline {self.baseline.label}" if self.baseline else "") + "."]
        if with_standings:
            parts += self.winners()
        partial = [row.label for row in self.rows if any(c.partial for c in row.cells.values())]
        if partial:
            parts.append(f"Not judged (a run that did not complete): {', '.join(partial)}.")
        flagged = sum(1 for row in self.rows for c in row.caveats) + len(self.between)
        if flagged:
            parts.append(f"{flagged} caveat{'s apply' if flagged != 1 else ' applies'}: see the notes beside the "
                         "figures.")
        return " ".join(parts)

    def price_lines(self) -> list[str]:
        """Each priced server's price with its date and source; [] when no price is set."""
        return [price_line(row.label, row.price) for row in self.rows if row.price is not None]

    def settle_lines(self, test: str | None = None, label: Callable[[Metric], str] | None = None) -> list[str]:
        """Each "can't tell yet" with what would settle it, one line per server and remedy ("iops (Random read 4
        KiB, Random read 4 KiB p99): run 3 more repeats on each."): a cell has room for the verdict and its range
        only, and a range wholly below 1 reads as a verdict unless the reason is said beside it. `label` names a
        figure (the PDF's short labels under a test's heading)."""
        name = label or (lambda item: item.label)
        found: dict[tuple[str, str], list[str]] = {}
        for item in self.metrics:
            if test is not None and item.test != test:
                continue
            for row in self.rows:
                cell = row.cells.get(item.key)
                if cell is not None and cell.kind == CANT_TELL and not cell.partial and cell.settle:
                    found.setdefault((row.label, cell.settle), []).append(name(item))
        return [f"{row} ({', '.join(figures)}): {settle}." for (row, settle), figures in found.items()]

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


def figure_name(item: Metric) -> str:
    """ "CPU all cores", "Disk, random read 4 KiB": the figure with its test, once."""
    test = CATALOGUE.label(item.test)
    return item.label if item.label.lower().startswith(test.lower()) \
        else f"{test}, {item.label[0].lower()}{item.label[1:]}"


def _note(figure: Figure, test: str = "") -> str:
    repeats = f"median of {figure.repeats} runs" if figure.repeats > 1 else ""
    # a one-operation figure (a restore's time) has no spread within its run: never shown as if exact
    alone = FROM_REPEATS_ONLY if figure.repeats <= 1 and from_repeats_only(test, figure.spread) else ""
    return "; ".join(part for part in (figure.note, repeats, alone) if part)


def _unit_figures(unit: Sequence[RunInput]) -> tuple[dict[str, Figure], str]:
    """A unit's figures from its completed runs, and why they are partial ("" when a run completed): a
    cancelled or failed repeat never enters the median of the others."""
    done = [run for run in unit if run.record.status == RunStatus.DONE]
    if done:
        return unit_figures(done), ""
    first = unit[0].record
    return unit_figures(unit), f"{first.status} run" + (f" ({first.error[:80]})" if first.error else "")


def build(inputs: Sequence[RunInput], baseline_run_id: int | None = None,
          prices: Mapping[str, HostPrice] | None = None) -> Comparison:
    """The comparison of the given runs, in the order given; baseline_run_id picks the baseline row.

    prices: a price per host name for this comparison, over the inventory's (RunInput.price)."""
    if not inputs:
        raise ValueError("pick at least one run to compare")
    groups = group_rows(inputs)
    labels = row_labels(groups)
    raw: list[tuple[str, list[RunInput], dict[str, Figure], list[Any], list[Caveat]]] = []
    partial: dict[tuple[int, str], str] = {}     # (row, test) -> why its figures are partial
    missed: dict[tuple[int, str], str] = {}      # (row, test) -> until-stable ended unsettled
    measured: dict[tuple[int, str], dict[str, HostSpread]] = {}   # (row, test) -> the host's repeats' spread
    for label, group in zip(labels, groups, strict=True):
        runs = [run for unit in group for run in unit]
        found: dict[str, Figure] = {}
        for unit in group:
            figures_, why = _unit_figures(unit)
            found.update(figures_)
            if why:
                partial[(len(raw), unit[0].record.test)] = why
            if len(unit) == 1 and unit[0].host_noise:
                measured[(len(raw), unit[0].record.test)] = unit[0].host_noise
            unsettled = next((run.until_stable_missed for run in unit if run.until_stable_missed), "")
            if unsettled:
                missed[(len(raw), unit[0].record.test)] = unsettled
        notes: list[Caveat] = []
        for test in dict.fromkeys(run.record.test for run in runs):
            # a caveat of one run concerns that run's figures only, not the same host's other tests; the
            # repeats of one test say a caveat once
            notes += merged([scoped(run_caveats(run.results, run.facts, run.warnings, run.record.status,
                                                run.record.error), test)
                             for run in runs if run.record.test == test])
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

    columns = {item.key: judge_column(item, [Entry(i, label, found[item.key], partial.get((i, item.test), ""),
                                                   measured.get((i, item.test), {}).get(base_key(item.key)))
                                             for i, (label, _g, found, _r, _n) in enumerate(raw)
                                             if item.key in found], base_index)
               for item in shown}
    rows = []
    for index, (label, group, found, results, notes) in enumerate(raw):
        cells = {}
        for item in shown:
            figure = found.get(item.key)
            if figure is None:
                continue
            ratio = None
            reference = raw[base_index][2].get(item.key) if base_index is not None else None
            if reference is not None and not partial.get((index, item.test)) \
                    and not partial.get((base_index, item.test)):
                ratio = times_as_good(item, figure.value, reference.value)
            key = base_key(item.key)
            concerns = tuple(c for c in notes + between if not c.keys or key in c.keys)
            column = columns[item.key]
            cells[item.key] = Cell(figure.value, _text(figure.value, key != item.key), _note(figure, item.test),
                                   best=column.best == index, ratio=ratio, caveats=concerns, spread=figure.spread,
                                   judged=column.judged.get(index), partial=partial.get((index, item.test), ""),
                                   repeats=figure.repeats,
                                   steadiness=steadiness(item.key, results) if item.headline else "",
                                   until_stable_missed=missed.get((index, item.test), ""))
        facts = next((run.facts for run in reversed(group) if run.facts), None)
        rows.append(Row(label, group[0].record.host_name, tuple(run.record for run in group), facts,
                        spec_line(facts) if facts else "no facts stored", cells, tuple(notes),
                        baseline=index == base_index, price=row_prices[index], dns=tuple(dns_passes(results))))
    return Comparison(tuple(rows), shown, tuple(between), standings_for([m for m in shown if m.headline], rows))


def standings_for(items: Sequence[Metric], rows: Sequence[Row]) -> tuple[Standing, ...]:
    """Every row's standing on each of the figures, in the rows' order."""
    out = []
    for item in items:
        for row in rows:
            cell = row.cells.get(item.key)
            if cell is None or cell.judged is None:
                continue
            verdict = cell.judged.verdict
            out.append(Standing(item.key, item.label, item.unit, row.label, row.run_ids, cell.value, cell.text,
                                verdict.kind, verdict.factor, verdict.lo, verdict.hi,
                                cell.judged.against or row.label, verdict.settle, verdict.basis, cell.verdict_said,
                                cell.judged.baseline, cell.tags,
                                (verdict.pairs_won, verdict.pairs_total) if verdict.pairs_total else None))
    return tuple(out)


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


def load_inputs(source: RunSource, run_ids: Iterable[int]) -> list[RunInput]:
    """The stored runs, with their warnings and their host's price; facts fall back to the host's latest.
    NotFound for a missing id."""
    out = []
    noise: dict[tuple[str, str], dict[str, HostSpread]] = {}
    for run_id in run_ids:
        detail = source.run_detail(run_id)
        # also for a run of a repeat group: compared without the rest of its group it is a single run
        if (detail.run.host_name, detail.run.test) not in noise:
            noise[(detail.run.host_name, detail.run.test)] = host_noise(source, detail.run.host_name, detail.run.test)
        facts = detail.facts
        if facts is None:
            facts = source.latest_facts(detail.run.host_name)
        events = source.run_events(run_id)
        out.append(RunInput(detail.run, facts, list(detail.results), warning_messages(events),
                            until_stable_missed=until_stable_missed(events),
                            host_noise=noise[(detail.run.host_name, detail.run.test)]))
    prices = host_prices(source, [run.record.host_name for run in out])
    return [replace(run, price=prices.get(run.record.host_name)) for run in out]


def compare_runs(source: RunSource, run_ids: Sequence[int], baseline_run_id: int | None = None,
                 prices: Mapping[str, HostPrice] | None = None) -> Comparison:
    return build(load_inputs(source, run_ids), baseline_run_id, prices)
