"""The runs table: every stored status has a display state; an interrupted run stands out, quietly."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from PySide6.QtCore import Qt

from storage.records import RunRecord, RunStatus
from widgets.run_data import RunState
from widgets.runs_table import RunsTable

pytestmark = pytest.mark.gui


def _run(run_id: int, status: str) -> RunRecord:
    started = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
    finished = None if status == RunStatus.RUNNING else started + timedelta(minutes=3)
    return RunRecord(run_id, "db1", "disk", status, {}, started, finished, "1", "fio", "3.36", "", (), "")


def test_every_stored_status_is_a_display_state():
    assert {s.value for s in RunStatus} <= {s.value for s in RunState}


def test_interrupted_run_is_coloured_apart_from_failed_and_cancelled(qtbot):
    table = RunsTable()
    qtbot.addWidget(table)
    table.set_runs([_run(i, status) for i, status in enumerate(RunStatus, start=1)])
    model = table.runs_model
    colours = {}
    for row in range(model.rowCount()):
        status = model.data(model.index(row, 3))
        brush = model.data(model.index(row, 3), Qt.ItemDataRole.ForegroundRole)
        colours[status] = None if brush is None else brush.name()
    assert colours["interrupted"] is not None
    assert colours["interrupted"] not in {colours["failed"], colours["cancelled"], colours["running"]}
    assert colours["done"] is None     # the normal case keeps the normal ink
    assert model.data(model.index(list(colours).index("interrupted"), 5)) == "3 min"


def test_a_reload_keeps_the_selection_and_says_so_only_when_it_changed(qtbot):
    table = RunsTable()
    qtbot.addWidget(table)
    table.set_runs([_run(i, RunStatus.DONE) for i in range(1, 6)] + [_run(6, RunStatus.RUNNING)])
    table.select_runs([3, 6])
    changes = []
    table.selectionModel().selectionChanged.connect(lambda *_: changes.append([r.id for r in table.selected_runs()]))

    # a new run stored elsewhere: the same runs stay selected, nothing to load again
    table.set_runs([_run(i, RunStatus.DONE) for i in range(1, 6)] + [_run(6, RunStatus.RUNNING), _run(7, "done")])
    assert [r.id for r in table.selected_runs()] == [3, 6] and changes == []

    # run 6 ended: its results are worth loading
    table.set_runs([_run(i, RunStatus.DONE) for i in range(1, 8)])
    assert changes == [[3, 6]]

    # run 3 deleted: the selection shrinks, and says so
    table.set_runs([_run(i, RunStatus.DONE) for i in (1, 2, 4, 5, 6, 7)])
    assert changes[-1] == [6]
