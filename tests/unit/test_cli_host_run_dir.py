"""`host add/edit --run-dir`: stored with the host, shown by `host list --json`, checked when typed."""
from __future__ import annotations

import json

from app.cli import main


def _hosts(capsys) -> dict[str, dict]:
    assert main(["host", "list", "--json"]) == 0
    out = capsys.readouterr().out
    return {h["name"]: h for h in json.loads(out[out.index("["):])}


def test_run_dir_is_stored_changed_and_cleared(cli_env, capsys) -> None:
    assert main(["host", "add", "db1", "--address", "192.0.2.5", "--run-dir", "/srv/bench"]) == 0
    assert _hosts(capsys)["db1"]["run_dir"] == "/srv/bench"
    assert main(["host", "edit", "db1", "--run-dir", "~/bench"]) == 0
    assert _hosts(capsys)["db1"]["run_dir"] == "~/bench"
    assert main(["host", "edit", "db1", "--notes", "rack 4"]) == 0      # other edits keep it
    assert _hosts(capsys)["db1"]["run_dir"] == "~/bench"
    assert main(["host", "edit", "db1", "--run-dir", ""]) == 0
    assert _hosts(capsys)["db1"]["run_dir"] == ""


def test_a_relative_run_dir_is_refused_with_one_line(cli_env, capsys) -> None:
    assert main(["host", "add", "db2", "--address", "192.0.2.6", "--run-dir", "bench"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--run-dir" in err and "not an absolute path" in err
    assert "db2" not in _hosts(capsys)
