"""`benchbay export`, `benchbay import`, `benchbay runs note|tag` through app.cli.main."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from storage.db import open_store
from tests.unit.test_storage_exchange import make_full_run


@pytest.fixture
def stored_runs(cli_env: dict[str, Path]) -> list[int]:
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        return [make_full_run(store), make_full_run(store, "web-2")]
    finally:
        store.close()


def _other_db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'laptop-b.sqlite3'}"


def test_export_then_import_elsewhere(stored_runs: list[int], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.json"
    assert main(["export", *map(str, stored_runs), "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"exported 2 runs to {out}\n"
    document = json.loads(out.read_text())
    assert [run["host_name"] for run in document["runs"]] == ["db-primary", "web-2"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".runs.json")] == []   # no temp file left

    assert main(["--db", _other_db(tmp_path), "import", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("imported run 1 (db-primary disk, ") and lines[1].startswith("imported run 2 (web-2")

    assert main(["--db", _other_db(tmp_path), "import", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("skipped run (db-primary disk, ") and lines[0].endswith("already stored as run 1")

    assert main(["--db", _other_db(tmp_path), "export", "1", "2", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == document


def test_export_replaces_a_file_whole(stored_runs: list[int], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.json"
    out.write_text("old content")
    assert main(["export", "4242", "--out", str(out)]) == 1
    assert "no run with id 4242" in capsys.readouterr().err
    assert out.read_text() == "old content"
    assert main(["export", str(stored_runs[0]), "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())["runs"]) == 1
    assert main(["export", str(stored_runs[0]), "--out", str(tmp_path / "no-such-dir" / "x.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("benchbay: cannot write ") and err.count("\n") == 1


def test_export_needs_runs(cli_env: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--out", "-"]) == 2
    assert "RUN_ID" in capsys.readouterr().err


@pytest.mark.parametrize("content", [
    b"not json at all {",
    b'{"format": "something-else", "version": 1, "runs": []}',
    b'{"format": "benchbay-runs", "version": 1, "runs": [{"uid": "x"}]}',
    b"\xff\xfe\x00garbage",
], ids=["not-json", "other-format", "broken-run", "binary"])
def test_import_garbage_fails_in_one_line(stored_runs: list[int], tmp_path: Path, content: bytes,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(content)
    assert main(["import", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("benchbay: ") and err.count("\n") == 1 and "nothing was imported" in err
    assert main(["runs", "list", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_import_missing_file(cli_env: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(tmp_path / "nope.json")]) == 1
    assert capsys.readouterr().err == f"benchbay: cannot read {tmp_path / 'nope.json'}: No such file or directory\n"


def test_runs_note_and_tag(stored_runs: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    run_id = str(stored_runs[1])
    assert main(["runs", "note", run_id, "rack 4, BIOS 2.1"]) == 0
    assert main(["runs", "tag", run_id, "acme", "sas"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"run {run_id}: tags customer-x, nvme, acme, sas"
    assert main(["runs", "tag", run_id, "--remove", "nvme", "customer-x"]) == 0
    assert main(["runs", "show", run_id, "--json"]) == 0
    removed, shown = capsys.readouterr().out.split("\n", 1)
    assert removed == f"run {run_id}: tags acme, sas"
    run = json.loads(shown)["run"]
    assert (run["notes"], run["tags"]) == ("rack 4, BIOS 2.1", ["acme", "sas"])
    assert main(["runs", "list", "--tag", "sas", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [stored_runs[1]]
    assert main(["runs", "list", "--since", "2999-01-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["runs", "list", "--since", "last week"]) == 2
    assert main(["runs", "note", "4242", "x"]) == 1
    assert "no run with id 4242" in capsys.readouterr().err


def test_export_saved_comparison(stored_runs: list[int], cli_env: dict[str, Path], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        uids = [store.runs.get(run_id).run.uid for run_id in stored_runs]
        saved = store.comparisons.save("Primary vs web-2", uids, baseline_uid=uids[0], customer="ACME")
    finally:
        store.close()
    out = tmp_path / "comparison.json"
    assert main(["export", "--comparison", str(saved.id), "--out", str(out)]) == 0
    assert main(["--db", _other_db(tmp_path), "import", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "saved comparison 1 re-created"
    other = open_store(_other_db(tmp_path))
    try:
        assert [(c.title, c.customer, c.run_uids) for c in other.comparisons.list()] == [
            ("Primary vs web-2", "ACME", tuple(uids))]
    finally:
        other.close()
