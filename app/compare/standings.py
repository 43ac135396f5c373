"""Every server's standing on a figure against one reference: the baseline, else the leader.

One column of the comparison is judged here (app.compare.ties decides each verdict); the cells, the
standings of the headline figures, the summary, the CSV, the JSON, the window and the PDF's first
page all read the result, so they say the same numbers.

Like with like: a run that did not complete (cancelled, failed, interrupted) is never the reference,
never starred and never judged: its cell says why. The best point of a disk sweep is judged only
against the reference's best at the same worker count.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.compare.host_noise import HostSpread
from app.compare.metrics import SWEEP_BEST, Figure, Metric
from app.compare.noise_floors import floor_for
from app.compare.prices import base_key
from app.compare.ties import (
    AHEAD,
    BASIS_FLOOR,
    BASIS_REPEATS,
    BEHIND,
    CANT_TELL,
    MIN_BOOTSTRAP_RUNS,
    REFERENCE,
    Runs,
    Verdict,
    best_index,
    judge,
)


@dataclass(frozen=True)
class Entry:
    """One row's figure in a column."""

    index: int            # the row's position in the comparison
    label: str
    figure: Figure
    partial: str = ""     # why the figure is partial ("cancelled run"); "" when its runs completed
    host_spread: HostSpread | None = None   # a single run: how much the host's own repeats in the store varied


@dataclass(frozen=True)
class Judged:
    """A cell's verdict and whom it is against."""

    verdict: Verdict
    against: str             # the reference row's label ("" for the reference itself)
    baseline: bool           # the reference is the baseline (else the leader)
    alone: bool = False      # the only server with this figure: nothing to compare it with

    @property
    def kind(self) -> str:
        return self.verdict.kind

    def text(self, partial: str = "", with_settle: bool = True) -> str:
        if self.verdict.kind == REFERENCE:
            return "" if self.alone else "baseline" if self.baseline else "leader"
        if partial:
            return f"not compared: {partial}"
        return self.verdict.text(self.against, with_settle)


@dataclass(frozen=True)
class Column:
    judged: dict[int, Judged]    # row index -> verdict
    best: int | None             # the row starred best: complete and ahead of every other complete row


def judged_runs(entry: Entry, key: str) -> Runs:
    """What a verdict knows of `entry`'s figure `key`. The host's own repeats stand in for the figure's floor
    where they varied more (with the few degrees of freedom they were measured with), never narrow it: three
    runs can agree closely by chance."""
    floor = floor_for(base_key(key)).log_sd
    spread = entry.host_spread
    if spread is not None and spread.log_sd > floor:
        return Runs(entry.figure.runs, spread.log_sd, entry.figure.steal, entry.label, floor_df=spread.df)
    return Runs(entry.figure.runs, floor, entry.figure.steal, entry.label)


def _basis(entry: Entry) -> str:
    return BASIS_REPEATS if len(entry.figure.runs) >= MIN_BOOTSTRAP_RUNS else BASIS_FLOOR


def _unlike(entry: Entry, reference: Entry, key: str) -> str:
    """Why two figures are not like with like ("" when they are)."""
    if key.startswith("dbload:best.") and key.endswith("_p99_ms"):
        mine, theirs = entry.figure.workers, reference.figure.workers
        if mine is not None and theirs is not None and mine != theirs:
            # a tail at 8 clients against one at 2 says more about the load than about the servers
            return (f"p99 at its best step ({mine} client{'s' if mine != 1 else ''}), {reference.label} at "
                    f"{theirs}: compare the same client count")
        return ""
    if not key.endswith(SWEEP_BEST):
        return ""
    mine, theirs = entry.figure.workers, reference.figure.workers
    if mine is None or theirs is None:
        return "the best sweep points of its runs are at different worker counts: compare one worker count"
    if mine != theirs:
        return (f"best at {mine} worker{'s' if mine != 1 else ''}, {reference.label} at {theirs}: compare the "
                "same worker count in the sweep")
    return ""


def judge_column(item: Metric, entries: Sequence[Entry], base_index: int | None) -> Column:
    """The verdict of every row of one column against its reference."""
    complete = [e for e in entries if not e.partial and math.isfinite(e.figure.value)]
    judged: dict[int, Judged] = {}
    higher = item.higher_is_better
    base = next((e for e in complete if e.index == base_index), None)
    leader = complete[best_index([e.figure.value for e in complete], higher)] if complete else None
    reference = base or leader
    for entry in entries:
        if reference is None or entry.partial or not math.isfinite(entry.figure.value):
            why = entry.partial or "no finite figure"
            judged[entry.index] = Judged(Verdict(CANT_TELL, None, None, None, _basis(entry),
                                                 f"{why}: run the test again to completion"),
                                         reference.label if reference is not None else "", base is not None)
            continue
        if entry is reference:
            judged[entry.index] = Judged(Verdict(REFERENCE, 1.0, None, None, _basis(entry)), "", base is not None,
                                         alone=len(entries) == 1)
            continue
        unlike = _unlike(entry, reference, item.key)
        if unlike:
            judged[entry.index] = Judged(Verdict(CANT_TELL, None, None, None, _basis(entry), unlike),
                                         reference.label, base is not None)
            continue
        found = judge(judged_runs(entry, item.key), judged_runs(reference, item.key), higher)
        judged[entry.index] = Judged(found, reference.label, base is not None)
    return Column(judged, _best(item, complete, leader, reference, judged))


def _best(item: Metric, complete: Sequence[Entry], leader: Entry | None, reference: Entry | None,
          judged: dict[int, Judged]) -> int | None:
    """The leader, when it is ahead of every other complete row (a tie is no one's win)."""
    if leader is None or len(complete) < 2:
        return None
    for entry in complete:
        if entry is leader:
            continue
        if leader is reference:
            if judged[entry.index].kind != BEHIND:
                return None
            continue
        if _unlike(entry, leader, item.key):
            return None
        if judge(judged_runs(leader, item.key), judged_runs(entry, item.key), item.higher_is_better).kind != AHEAD:
            return None
    return leader.index


@dataclass(frozen=True)
class Standing:
    """One server's standing on one headline figure (the `standings` of `benchbay compare --json`)."""

    figure: str              # the metric key
    label: str               # the figure's label
    unit: str
    row: str                 # the server (row label)
    run_ids: tuple[int, ...]
    value: float | None
    value_text: str
    verdict: str             # reference, ahead, behind, tie or cant_tell
    factor: float | None     # times as good as the reference (> 1 better)
    lo: float | None
    hi: float | None
    against: str             # the reference row's label
    settle: str | None
    basis: str               # repeats or noise_floor
    text: str                # "0.46x of honA (0.42–0.50)", "leader", "tie with honA (within ±4.1 %)"
    baseline: bool = False   # the reference is the baseline (else the leader)
    tags: str = ""           # caveat tags of this figure: a standing that rests on one says so
    pairs: tuple[int, int] | None = None   # repeats: run pairs this server won, of all pairs (U of Mann–Whitney)

    def to_json(self) -> dict[str, Any]:
        return {"figure": self.figure, "label": self.label, "row": self.row, "run_ids": list(self.run_ids),
                "verdict": self.verdict, "factor": self.factor, "lo": self.lo, "hi": self.hi,
                "against": self.against, "settle": self.settle, "basis": self.basis, "text": self.text,
                "value": self.value, "unit": self.unit, "caveats": self.tags,
                "pairs_won": self.pairs[0] if self.pairs else None, "pairs": self.pairs[1] if self.pairs else None}


def standing_line(what: str, unit: str, standings: Sequence[Standing]) -> str:
    """The summary's sentence of one figure: the reference with its figure, then every other server's standing:
    "CPU all cores: honA leads with 10.8 ops/s; honT: tie with honA (within ±4.1 %); honH: 0.46x of honA
    (0.42–0.50)."."""
    if not standings:
        return ""
    reference = next((s for s in standings if s.verdict == REFERENCE), None)
    if reference is not None and len(standings) == 1:   # one server: its figure, nothing to compare
        return f"{what}: {reference.value_text} {unit} on {reference.row}{_caveat(reference)}."
    parts = []
    if reference is not None:
        role = "(baseline) has" if reference.baseline else ("leads with" if leads(standings) else "has")
        parts.append(f"{reference.row} {role} {reference.value_text} {unit}".rstrip() + _caveat(reference))
    parts += [f"{s.row}: {s.text}{_caveat(s)}" for s in standings if s.verdict != REFERENCE]
    return f"{what}: " + "; ".join(parts) + "."


def leads(standings: Sequence[Standing]) -> bool:
    """Whether the leader is ahead of anyone at all: beside only ties and "can't tell yet" the highest figure
    is no lead, and "leads with" would sell noise as a win."""
    return any(s.verdict == BEHIND for s in standings)


def _caveat(standing: Standing) -> str:
    return f" (caveat: {standing.tags})" if standing.tags else ""
