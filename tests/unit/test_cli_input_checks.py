"""What a user types or feeds the command line that is out of range or hostile: one line each, exit 1 or 2,
nothing stored, and nothing printed raw that a terminal would obey."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from app.cli import main
from storage.db import open_store
from tests.unit.test_storage_exchange import make_full_run


def _one_line(err: str) -> str:
    assert err.startswith("benchbay: ") and err.count("\n") == 1, err
    return err


@pytest.fixture
def run_id(cli_env: dict[str, Path]) -> int:
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        return make_full_run(store)
    finally:
        store.close()


@pytest.mark.parametrize("args, expected", [
    (["runs", "show", "99999999999999999999999"], "no id is 99999999999999999999999: ids are 1 to"),
    (["runs", "show", "0"], "no id is 0"),
    (["export", "1" * 5000, "--out", "-"], "no id is 1111"),
    (["runs", "list", "--limit", "-5"], "--limit: expected a whole number of at least 1, not '-5'"),
    (["runs", "list", "--limit", "0"], "at least 1"),
])
def test_out_of_range_numbers_are_usage_errors(run_id: int, capsys: pytest.CaptureFixture[str],
                                               args: list[str], expected: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    err = _one_line(capsys.readouterr().err)
    assert expected in err and "--help" in err


def test_limit_limits(run_id: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "list", "--limit", "1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1


@pytest.mark.parametrize("args, expected", [
    (["monitor", "local", "--seconds", "nan"], "--seconds must be a positive number of seconds, not nan"),
    (["monitor", "local", "--seconds", "1e400"], "not inf"),
    (["run", "local", "--test", "disk", "--set", "file_size=1e400"], "--set file_size: 1e400 is beyond the range"),
    (["run", "local", "--test", "disk", "--set", "file_size=NaN"], "NaN is not a number a test can use"),
    (["run", "local", "--test", "disk", "--set", "file_size=" + "9" * 5000], "5000 digits is too large"),
    (["run", "local", "--test", "disk", "--set", "file_size=" + "[" * 100_000], "nested too deeply"),
])
def test_non_finite_durations_and_settings_refused_before_anything_runs(
        cli_env: dict[str, Path], capsys: pytest.CaptureFixture[str], args: list[str], expected: str) -> None:
    assert main(args) == 2
    err = _one_line(capsys.readouterr().err)
    assert expected in err
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []   # nothing was started or stored


@pytest.mark.parametrize("name", ["a;b", "../../etc", "db\U0001F680", "x\x1b]0;owned\x07", "x-", ".hidden",
                                  "web.", "a" * 201, "a..b", "db 1"])
def test_bad_host_names_refused_on_add_and_rename(cli_env: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                                  name: str) -> None:
    assert main(["host", "add", name, "--address", "192.0.2.1"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "invalid host name" in err and "letters, digits, dots, dashes and underscores" in err
    assert "\x1b" not in err and "\x07" not in err
    assert main(["host", "add", "web_1.example-2", "--address", "192.0.2.1"]) == 0
    assert main(["host", "edit", "web_1.example-2", "--rename", name]) == 2
    assert "invalid host name" in _one_line(capsys.readouterr().err)
    assert main(["host", "list", "--json"]) == 0
    assert [h["name"] for h in json.loads(capsys.readouterr().out)] == ["local", "web_1.example-2"]


def test_control_characters_are_never_printed_raw(run_id: int, cli_env: dict[str, Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # a store written before names were checked, or a run imported from elsewhere
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        with store.engine.begin() as conn:
            conn.execute(text("UPDATE runs SET host_name = :name, notes = :notes"),
                         {"name": "evil\x1b[2J\x9b31m", "notes": "line\rover\u202ewritten"})
            conn.execute(text("INSERT INTO hosts (name, address, user, auth, key_path, jump, keyring, test_dir, "
                              "notes, tags, created_at, updated_at, run_dir) VALUES (:name, '192.0.2.1', '', "
                              "'auto', '', '', 0, '', '', '[]', '2025-01-01', '2025-01-01', '')"),
                         {"name": "old\x1b[31mname"})
    finally:
        store.close()
    for args in (["runs", "list"], ["runs", "show", str(run_id)], ["host", "list"], ["runs", "list", "--json"],
                 ["export", str(run_id), "--out", "-"], ["runs", "show", str(run_id), "--json"]):
        assert main(args) == 0, args
        out = capsys.readouterr().out
        assert not any(c in out for c in "\x1b\x9b\r\u202e"), args
        assert "\\u001b" in out, args
    assert main(["export", str(run_id), "--out", "-"]) == 0
    document = json.loads(capsys.readouterr().out)    # escaped output stays valid JSON, meaning unchanged
    assert document["runs"][0]["host_name"] == "evil\x1b[2J\x9b31m"
    assert main(["runs", "show", "4242"]) == 1
    assert main(["host", "remove", "old\x1b[31mname"]) == 0
    assert capsys.readouterr().out == "removed old\\u001b[31mname (its stored runs are kept)\n"


def _export(run_id: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    out = tmp_path / "runs.json"
    assert main(["export", str(run_id), "--out", str(out)]) == 0
    capsys.readouterr()
    return json.loads(out.read_text())


def test_import_of_a_changed_run_says_it_differs(run_id: int, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    document = _export(run_id, tmp_path, capsys)
    document["runs"][0]["results"][0]["value"] = 1.0
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(document))
    assert main(["import", str(changed)]) == 0
    out = capsys.readouterr().out
    assert out == (f"not imported: run {document['runs'][0]['uid']} in the file differs from run {run_id}, stored "
                   f"with the same uid; the stored run was kept (see `benchbay runs show {run_id}`; the file's copy "
                   "cannot be stored beside it)\n")


@pytest.mark.parametrize("change, expected", [
    (lambda text: text.replace('"parameters": {', '"parameters": {"x": ' + "[" * 50_000 + "]" * 50_000 + ", ", 1),
     "nested too deeply"),
    (lambda text: text.replace('"seq": 1,', f'"seq": {2**63},', 1), "a sequence number is 0 to"),
    (lambda text: text.replace('"value": 48211.53125', '"value": ' + "7" * 5000, 1), "digits"),
    (lambda text: text.replace('"os": "Debian', '"os": "\\udc80 Debian', 1), "lone UTF-16 surrogate"),
    (lambda text: text.replace('"value": 48211.53125', '"value": "NaN"', 1), None),
])
def test_import_of_hostile_values(run_id: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], change,
                                  expected: str | None) -> None:
    document = _export(run_id, tmp_path, capsys)
    document["runs"][0]["uid"] = "a" * 32
    path = tmp_path / "in.json"
    original = json.dumps(document, indent=1)
    path.write_text(change(original))
    assert path.read_text() != original
    assert main(["--db", f"sqlite:///{tmp_path / 'other.sqlite3'}", "import", str(path)]) == (1 if expected else 0)
    captured = capsys.readouterr()
    if expected:
        err = _one_line(captured.err)
        assert expected in err and err.endswith("nothing was imported\n")
    else:
        assert captured.out.startswith("imported run 1 ")


@pytest.mark.parametrize("url, expected", [
    ("not a url", "'not a url' is not a database URL; use sqlite:///"),
    ("mysql://bench@127.0.0.1/bench", "Benchbay keeps its store in SQLite or PostgreSQL, not 'mysql'"),
    ("oracle+cx_oracle://u@127.0.0.1/x", "not 'oracle'"),
])
def test_unusable_store_urls_are_one_line(cli_env: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                          url: str, expected: str) -> None:
    assert main(["--db", url, "runs", "list"]) == 1
    assert expected in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_import_from_a_device_ends_in_one_line(cli_env: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                               device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    assert main(["import", device]) == 1
    err = _one_line(capsys.readouterr().err)
    assert err.startswith(f"benchbay: {device} is not a Benchbay run document (") and "nothing was imported" in err


def test_host_stored_with_a_bad_name_can_only_be_renamed(cli_env: dict[str, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        with store.engine.begin() as conn:    # written before names were checked
            conn.execute(text("INSERT INTO hosts (name, address, user, auth, key_path, jump, keyring, test_dir, "
                              "notes, tags, created_at, updated_at, run_dir) VALUES ('a;b', '192.0.2.1', '', "
                              "'auto', '', '', 0, '', '', '[]', '2025-01-01', '2025-01-01', '')"))
    finally:
        store.close()
    assert main(["host", "edit", "a;b", "--port", "2222"]) == 1
    err = _one_line(capsys.readouterr().err)
    assert "invalid host name 'a;b'" in err and err.endswith("; rename the host to change it\n")
    assert main(["host", "edit", "a;b", "--rename", "a-b", "--port", "2222"]) == 0
    assert main(["host", "list", "--json"]) == 0
    hosts = json.loads(capsys.readouterr().out[len("updated a-b\n"):])
    assert [(h["name"], h["port"]) for h in hosts] == [("local", None), ("a-b", 2222)]
