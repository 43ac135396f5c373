"""Run statuses and exit codes as a user and a script see them: plain words in the store and the JSON."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.cli.exits import Exit
from storage.errors import NotFound
from storage.records import RunStatus
from widgets.run_data import RunState


def test_a_status_is_stored_and_printed_as_its_plain_word(cli_env: dict[str, Path], workbench,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run_id = workbench.store.runs.create("db-primary", "disk", {})
    workbench.store.runs.finish(run_id, RunStatus.CANCELLED, error="stopped by the user")
    with sqlite3.connect(cli_env["db"]) as db:
        assert db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone() == ("cancelled",)

    assert main(["runs", "list", "--json"]) == Exit.OK
    assert [run["status"] for run in json.loads(capsys.readouterr().out)] == ["cancelled"]
    assert main(["runs", "show", str(run_id)]) == Exit.OK
    assert capsys.readouterr().out.startswith(f"run {run_id}: disk on db-primary — cancelled\n")


def test_a_run_cannot_be_finished_as_running(workbench) -> None:
    run_id = workbench.store.runs.create("db-primary", "disk", {})
    with pytest.raises(ValueError, match="one of done, failed, cancelled, interrupted, not 'running'"):
        workbench.store.runs.finish(run_id, RunStatus.RUNNING)


def test_every_stored_status_is_a_state_the_views_can_show() -> None:
    assert {status.value for status in RunStatus} <= {state.value for state in RunState}


def test_exit_codes_scripts_rely_on(cli_env: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert (Exit.OK, Exit.FAILED, Exit.USAGE, Exit.CANCELLED) == (0, 1, 2, 130)
    assert main(["runs", "show", "4242"]) == Exit.FAILED
    assert capsys.readouterr().err == "benchbay: no run with id 4242: see `benchbay runs list`\n"
    assert main(["runs", "list", "--since", "last week"]) == Exit.USAGE


def test_a_saved_comparison_is_changed_in_place(workbench) -> None:
    first = workbench.store.runs.create("db-primary", "disk", {})
    uid = workbench.run_detail(first).run.uid
    saved = workbench.save_comparison(None, title="Old disks", run_uids=[uid], baseline_uid=None)
    changed = workbench.save_comparison(saved.id, title="New disks", run_uids=[uid], baseline_uid=uid,
                                        notes="idle hosts", options={"page_size": "Letter"})
    assert [c.title for c in workbench.list_comparisons()] == ["New disks"]
    assert (changed.id, changed.baseline_uid, changed.notes, changed.options) == (saved.id, uid, "idle hosts",
                                                                                  {"page_size": "Letter"})
    with pytest.raises(NotFound, match="no saved comparison with id 999"):
        workbench.get_comparison(999)
