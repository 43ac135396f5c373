"""Where `benchbay export --out` writes: regular files replaced whole, symlinks written through, devices and
FIFOs written into, directories refused; each failure one line."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.cli import main
from app.util.atomic_file import write_text_atomically
from storage.db import open_store
from tests.unit.test_storage_exchange import make_full_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run_id(cli_env: dict[str, Path]) -> int:
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        return make_full_run(store)
    finally:
        store.close()


def _one_error_line(err: str) -> str:
    assert err.startswith("benchbay: ") and err.count("\n") == 1, err
    return err


def test_symlink_is_written_through(run_id: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "runs.json"
    target.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    assert main(["export", str(run_id), "--out", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(json.loads(target.read_text())["runs"]) == 1
    # the temporary file went beside the target, and is gone
    assert sorted(p.name for p in real_dir.iterdir()) == ["runs.json"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []

    dangling = tmp_path / "new-link.json"
    dangling.symlink_to(real_dir / "created.json")
    assert main(["export", str(run_id), "--out", str(dangling)]) == 0
    assert dangling.is_symlink() and json.loads((real_dir / "created.json").read_text())["runs"]


def test_full_device_is_one_line_and_stays_a_device(run_id: int, capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    assert main(["export", str(run_id), "--out", "/dev/full"]) == 1
    err = _one_error_line(capsys.readouterr().err)
    assert err == "benchbay: cannot write /dev/full: No space left on device\n"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_null_device_takes_the_export(run_id: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(run_id), "--out", "/dev/null"]) == 0
    assert capsys.readouterr().out == "exported 1 run to /dev/null\n"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_fifo_receives_the_whole_document(run_id: int, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert main(["export", str(run_id), "--out", str(fifo)]) == 0
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert len(json.loads(received[0])["runs"]) == 1


def test_directory_is_refused(run_id: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    assert main(["export", str(run_id), "--out", str(folder)]) == 1
    err = _one_error_line(capsys.readouterr().err)
    assert err.startswith(f"benchbay: cannot write {folder}: Is a directory")
    assert list(folder.iterdir()) == [] and list(tmp_path.glob(".*.tmp")) == []


def test_csv_and_pdf_writers_share_the_rules(tmp_path: Path) -> None:
    target = tmp_path / "table.csv"
    target.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    write_text_atomically(link, "a,b\n")
    assert link.is_symlink() and target.read_text() == "a,b\n"
    with pytest.raises(OSError) as caught:
        write_text_atomically("/dev/full", "a,b\n")
    assert caught.value.strerror == "No space left on device"


def test_dev_stdout_into_a_pipe_and_an_appended_file(run_id: int, cli_env: dict[str, Path], tmp_path: Path) -> None:
    env = {**os.environ, "BENCHBAY_HOME": str(cli_env["home"]), "BENCHBAY_DB": f"sqlite:///{cli_env['db']}"}
    command = [sys.executable, str(ROOT / "main.py"), "export", str(run_id), "--out", "/dev/stdout"]
    piped = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert len(json.loads(piped.stdout[:piped.stdout.rindex("}") + 1])["runs"]) == 1
    assert piped.stdout.endswith("exported 1 run to /dev/stdout\n")

    log = tmp_path / "log.txt"
    log.write_text("before\n")
    with log.open("a") as appended:
        done = subprocess.run(command, env=env, stdout=appended, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert log.read_text().startswith("before\n{\n")    # appended to, not replaced
