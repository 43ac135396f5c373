"""`benchbay run --test shared-storage` on `local`, and the arguments it refuses, as a user types them."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main


@pytest.mark.parametrize("args, words", [
    (["--test", "shared-storage"], "name the shared directory (--dir PATH"),
    (["--test", "shared-storage", "--dir", "/mnt/shared", "--clients", "1,2"], "clients goes up to 2 but 1 host"),
    (["--test", "shared-storage", "--dir", "/mnt/shared", "--threads", "1,lots"], "--threads takes whole numbers"),
    (["--test", "shared-storage", "--dir", "/mnt/shared", "--threads", "0"], "threads must each be 1-256"),
    (["--test", "shared-storage", "--dir", "mnt"], "test_dir must be an absolute path"),
    (["--test", "shared-storage", "--dir", "/mnt/shared", "--set", "client_index=1"], "set by the workbench"),
    (["--test", "shared-storage", "--dir", "/a", "--set", "test_dir=/b"], "--dir /a and --set test_dir=/b disagree"),
    (["--test", "shared-storage", "--dir", "/a", "--repeat", "3"], "--repeat does not go with"),
    (["--test", "shared-storage", "--preset", "quick"], "the shared-storage test has no presets"),
    (["--test", "idle", "--dir", "/mnt/shared"], "--dir, --clients and --threads go with --test shared-storage"),
])
def test_bad_arguments_are_one_line_usage_errors(cli_env, capsys, args: list[str], words: str) -> None:
    assert main(["run", "local", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("benchbay: ") and len(err.strip().splitlines()) == 1 and words in err, err
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []   # nothing was started or stored


def test_a_sweep_on_local_prints_totals_and_the_knee(cli_env, capsys, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    code = main(["run", "local", "--test", "shared-storage", "--dir", str(shared), "--threads", "1,2",
                 "--set", "runtime=2", "--set", "gap=0.5", "--set", "bs=4k", "--set", "file_size=64k"])
    out, err = capsys.readouterr()
    assert code == 0, err[-2000:]
    lines = out.splitlines()
    assert lines[0].startswith("shared storage, 1 client host (runs tagged shared-")
    assert lines[1].startswith("  local: clock ") and " ms ± " in lines[1] and "done" in lines[1]
    # when the sweep began and how long it lasted, as planned
    assert re.fullmatch(r"  sweep: started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+, 2 steps of 2 s, 0\.5 s apart: "
                        r"4\.5 s in all", lines[2]), lines[2]
    steps = [line for line in lines if line.startswith("  1 client x ")]
    assert [line.split()[3:5] for line in steps] == [["1", "thread"], ["2", "threads"]]
    assert any(line.startswith("  knee at ") or line.startswith("  no knee within the sweep") for line in lines)
    assert any(line.startswith("  totals stored as run ") for line in lines)
    assert list(shared.iterdir()) == []
    assert main(["runs", "list", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    hosts = sorted(r["host"] if "host" in r else r["host_name"] for r in runs)
    assert hosts == [f"TOTAL {shared} (1 client)", "local"]
