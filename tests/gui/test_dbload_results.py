"""A stored database load run in the results view: the summary lines and one row per step of the sweep, with the
figures as stored."""
from __future__ import annotations

import os

import pytest

from app.gui.run_controller import load_run_results
from app.summary.results_page import results_page
from storage.records import ResultSample
from tests.unit.test_dbload_summary import RESULTS
from widgets.results_view import ResultsView

pytestmark = pytest.mark.gui


def test_a_database_load_run_shows_its_steps_and_knee(qtbot, workbench, tmp_path) -> None:
    runs = workbench.store.runs
    run_id = runs.create("local", "dbload", {"params": {"engine": "postgresql", "target": "10.0.0.5:5432"}})
    runs.add_results(run_id, [ResultSample(r["test"], r["metric"], r["value"], r["unit"], r["metadata"])
                              for r in RESULTS])
    runs.finish(run_id, "done")
    loaded = load_run_results(workbench, run_id)
    view = ResultsView()
    qtbot.addWidget(view)
    view.set_page(results_page(loaded.run, loaded.results, loaded.warnings))
    view.resize(1400, 700)
    view.show()
    qtbot.waitExposed(view)
    assert [view.cell(r, 1) for r in range(view.table.rowCount())] == ["1", "2", "4"]
    assert [view.cell(2, c) for c in range(8)] == ["3", "4", "800", "5.0", "4", "40.25", "80", "3"]
    shot = os.environ.get("BENCHBAY_SCREENSHOT_DIR")
    if shot:   # for a person to look at: BENCHBAY_SCREENSHOT_DIR=/some/dir
        view.grab().save(os.path.join(shot, "dbload-results.png"))
