"""The figures of a repeated test as one group: the median of its runs and how far they spread.

The results window shows this above the run's own figures when the run belongs to a repeat group of two
or more finished runs, so the user reads the group (what the comparison and the PDF use), not the last repeat.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.compare.metrics import METRICS, Figure, figures, median_figure
from app.summary.base import number
from widgets.results_data import Align, CellData, TableData

HEADERS = ("Figure", "Median", "Lowest – highest", "Spread (CV)", "Each run")


def group_title(indices: Sequence[int], count_asked: int | None = None) -> str:
    done = len(indices)
    asked = f" of {count_asked}" if count_asked and count_asked != done else ""
    return (f"<b>Repeated test: {done}{asked} runs</b> — the median of the runs, as the comparison and the "
            "report use it, and how far the runs landed apart")


def group_table(runs: Sequence[tuple[int, Sequence[Any]]]) -> TableData:
    """runs: (run id, its result samples) of each finished run of the group, in their order."""
    each = [(run_id, figures(results)) for run_id, results in runs]
    rows: list[list[CellData]] = []
    for spec in METRICS:
        found: list[tuple[int, Figure]] = [(run_id, figs[spec.key]) for run_id, figs in each if spec.key in figs]
        if len(found) < 2:
            continue
        median = median_figure([figure for _run_id, figure in found])
        values = [figure.value for _run_id, figure in found]
        spread = median.spread
        cv = ""
        if spread is not None and spread.mean:
            cv = f"{100.0 * spread.sd / abs(spread.mean):.1f} %"
        unit = f" {spec.unit}" if spec.unit else ""
        runs_text = ", ".join(f"#{run_id}: {number(figure.value)}" for run_id, figure in found)
        rows.append([CellData(f"{spec.label}{f' ({spec.unit})' if spec.unit else ''}", align=Align.LEFT),
                     CellData(f"{number(median.value)}{unit}"),
                     CellData(f"{number(min(values))} – {number(max(values))}"),
                     CellData(cv, tip="standard deviation across the runs / their mean"),
                     CellData(runs_text, align=Align.LEFT)])
    return TableData(HEADERS, rows)
