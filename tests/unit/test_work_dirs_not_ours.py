"""The restore and synthetic mail tests name their work directory after the agent's pid: one of that name
that was already there (an earlier agent with the same pid, another user's in a shared test_dir) is not
the run's, and the cleanup must leave it and what it holds alone."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from remote.agent import bench_mailstorm, bench_restore
from remote.agent.run_context import EventWriter, RunContext


def _ctx(tmp_path: Path) -> RunContext:
    run_dir = tmp_path / "benchbay-run"
    run_dir.mkdir()
    return RunContext(EventWriter(str(run_dir / "events.jsonl")), str(run_dir), {})


def _theirs(test_dir: Path, name: str) -> Path:
    theirs = test_dir / f"{name}-{os.getpid()}"
    (theirs / "incoming").mkdir(parents=True)
    (theirs / "precious.txt").write_text("not the run's\n")
    return theirs


def test_restore_leaves_an_existing_work_dir_of_the_same_name_alone(tmp_path: Path) -> None:
    ctx, test_dir = _ctx(tmp_path), tmp_path / "shared"
    theirs = _theirs(test_dir, "benchbay-restore")
    with pytest.raises(FileExistsError):
        bench_restore._work_dir(ctx, {"test_dir": str(test_dir)})
    assert ctx.cleanup() == []
    assert (theirs / "precious.txt").read_text() == "not the run's\n"


def test_synthetic_mail_leaves_an_existing_work_dir_of_the_same_name_alone(tmp_path: Path) -> None:
    ctx, test_dir = _ctx(tmp_path), tmp_path / "shared"
    theirs = _theirs(test_dir, "benchbay-mailstorm")
    with pytest.raises(FileExistsError):
        bench_mailstorm.run_synthetic(ctx, {"test_dir": str(test_dir)}, "localhost:25", "nothing listens")
    assert ctx.cleanup() == []
    assert (theirs / "precious.txt").read_text() == "not the run's\n" and sorted(
        p.name for p in theirs.iterdir()) == ["incoming", "precious.txt"]
