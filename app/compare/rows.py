"""Which runs make one row of a comparison, and what the row is called.

A row is a host's runs of different tests (disk and CPU of db-primary). A test run again on the same host
starts another row (the same server over time), unless the runs repeat it: the runs of one repeat group
(records.RunRecord.repeat_group) are one unit, and their figure is the median with its spread across runs.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from app.compare.metrics import Figure, figures, median_figure
from storage.records import RunRecord


class StoredRun(Protocol):
    """What grouping reads of a run (model.RunInput)."""

    @property
    def record(self) -> RunRecord: ...

    @property
    def results(self) -> Sequence[Any]: ...


R = TypeVar("R", bound=StoredRun)


def repeat_units(inputs: Sequence[R]) -> list[list[R]]:
    """The runs of one repeat group together (in the order of their first run), every other run alone."""
    out: list[list[R]] = []
    by_group: dict[tuple[str, str, str], list[R]] = {}
    for run in inputs:
        group = run.record.repeat_group
        if not group:
            out.append([run])
            continue
        key = (group, run.record.host_name, run.record.test)
        if key not in by_group:
            by_group[key] = []
            out.append(by_group[key])
        by_group[key].append(run)
    return out


def group_rows(inputs: Sequence[R]) -> list[list[list[R]]]:
    """Rows: a host's tests together; a test run again on a host (not as a repeat) starts another row.

    A row is a list of units; a unit is one run or the runs of one repeat group."""
    groups: list[list[list[R]]] = []
    for unit in repeat_units(inputs):
        first = unit[0].record
        for group in groups:
            if group[0][0].record.host_name == first.host_name and \
                    all(u[0].record.test != first.test for u in group):
                group.append(unit)
                break
        else:
            groups.append([unit])
    return groups


def row_labels(groups: list[list[list[R]]]) -> list[str]:
    """The host's name; with the date for a host seen in several rows; with the run id when that is not enough."""
    named = []
    for group in groups:
        host = group[0][0].record.host_name
        if sum(1 for g in groups if g[0][0].record.host_name == host) == 1:
            named.append(host)
        else:
            named.append(f"{host} {group[0][0].record.started_at.strftime('%Y-%m-%d %H:%M')}")
    # runs of the same minute: the run id tells them apart
    return [f"{group[0][0].record.host_name} run {group[0][0].record.id}" if named.count(label) > 1 else label
            for label, group in zip(named, groups, strict=True)]


def unit_figures(unit: Sequence[StoredRun]) -> dict[str, Figure]:
    """One run's figures, or the median (and spread across runs) of a repeat group's."""
    if len(unit) == 1:
        return figures(unit[0].results)
    each = [figures(run.results) for run in unit]
    keys = dict.fromkeys(key for found in each for key in found)
    return {key: median_figure([found[key] for found in each if key in found]) for key in keys}
