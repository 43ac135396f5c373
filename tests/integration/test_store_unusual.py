"""Stores as users have them: a PostgreSQL URL whose server accepts and never answers, an SQLite store on a
read-only mount (read-only mounts need root: a bind mount, since root ignores file modes)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from storage.db import open_store
from storage.engine import CONNECT_TIMEOUT_S
from tests.fixtures.tarpit import Tarpit
from tests.unit.test_storage_exchange import make_full_run
from tests.unit.test_storage_result_nan import check_nan_round_trip
from tests.unit.test_storage_run_uid import store_at_revision

pytestmark = pytest.mark.integration


def test_silent_postgres_server_fails_in_bounded_time(cli_env: dict[str, Path], tarpit: Tarpit,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    began = time.monotonic()
    assert main(["--db", f"postgresql://bench@{tarpit.address}:{tarpit.port}/bench", "runs", "list"]) == 1
    waited = time.monotonic() - began
    err = capsys.readouterr().err
    assert err.startswith("benchbay: cannot read the store at postgresql") and err.count("\n") == 1
    assert "timeout expired" in err
    assert waited < CONNECT_TIMEOUT_S * 4
    assert tarpit.accepted, "the connection reached the listener"


def test_nan_result_round_trips_through_postgres(pg_url: str, tmp_path: Path) -> None:
    sqlite_url = f"sqlite:///{tmp_path / 'laptop.sqlite3'}"
    check_nan_round_trip(pg_url, sqlite_url)
    check_nan_round_trip(f"sqlite:///{tmp_path / 'other.sqlite3'}", pg_url)


def _require_root() -> None:
    if os.geteuid() != 0:
        reason = "a read-only bind mount needs root"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(writable source folder, the same folder mounted read-only)."""
    _require_root()
    source, mounted = tmp_path / "source", tmp_path / "mounted"
    source.mkdir()
    mounted.mkdir()
    subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(mounted)], check=True, capture_output=True)
    try:
        yield source, mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=True, capture_output=True)


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_read_only_store_reads_and_refuses_writes(cli_env: dict[str, Path], read_only_dir: tuple[Path, Path],
                                                  tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source, mounted = read_only_dir
    store = open_store(f"sqlite:///{source / 'benchbay.sqlite3'}")
    run_id = make_full_run(store)
    store.close()
    before = _digest(source)
    db = ["--db", f"sqlite:///{mounted / 'benchbay.sqlite3'}"]

    assert main([*db, "runs", "list", "--json"]) == 0
    captured = capsys.readouterr()
    assert [run["id"] for run in json.loads(captured.out)] == [run_id]
    assert captured.err == (f"benchbay: note: the store {mounted / 'benchbay.sqlite3'} is read-only (it is on a "
                            "read-only filesystem): runs can be listed, shown, compared and exported; nothing can "
                            "be saved\n")
    assert main([*db, "runs", "show", str(run_id)]) == 0
    assert f"run {run_id}: disk on db-primary" in capsys.readouterr().out
    out = tmp_path / "copy.json"
    assert main([*db, "export", str(run_id), "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert len(document["runs"]) == 1
    document["runs"][0]["uid"] = "f" * 32   # a run the store does not hold: importing it must write
    out.write_text(json.dumps(document))
    capsys.readouterr()

    for command in (["runs", "note", str(run_id), "changed"], ["host", "add", "web-1", "--address", "127.0.0.1"],
                    ["import", str(out)]):
        assert main([*db, *command]) == 1, command
        err = capsys.readouterr().err.splitlines()[-1]
        assert err.startswith(f"benchbay: the store {mounted / 'benchbay.sqlite3'} is read-only: nothing was "
                              "saved"), err
    assert _digest(source) == before


def test_read_only_store_that_needs_an_upgrade(cli_env: dict[str, Path], read_only_dir: tuple[Path, Path],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    source, mounted = read_only_dir
    store_at_revision(f"sqlite:///{source / 'old.sqlite3'}", "0003")
    before = _digest(source)
    assert main(["--db", f"sqlite:///{mounted / 'old.sqlite3'}", "runs", "list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"benchbay: the store {mounted / 'old.sqlite3'} is read-only (it is on a read-only "
                          "filesystem) and needs an upgrade this Benchbay cannot write (revision 0003")
    assert _digest(source) == before
