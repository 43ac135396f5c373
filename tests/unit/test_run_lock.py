"""Who drives a run: a lock a live Benchbay holds, which the kernel drops when it dies (even on SIGKILL)."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.engine.lock import RunBusy, RunLock, claim, this_machine
from storage.records import RunOwner

HOLD = """
import sys, time
from pathlib import Path
from app.engine.lock import RunLock
lock = RunLock.create(Path(sys.argv[1]))
print(lock.path, flush=True)
time.sleep(120)
"""


def _holder(home: Path) -> tuple[subprocess.Popen, RunOwner]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(home)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    path = proc.stdout.readline().strip()
    assert path, "the holder did not start"
    return proc, RunOwner(this_machine(), proc.pid, path)


def test_a_run_of_a_live_benchbay_is_not_taken_and_one_of_a_killed_one_is(tmp_path: Path) -> None:
    proc, owner = _holder(tmp_path / "other-home")
    try:
        with pytest.raises(RunBusy, match=f"still driven by Benchbay pid {proc.pid} on this computer"):
            claim(7, owner, tmp_path / "home")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    lock = claim(7, owner, tmp_path / "home")
    try:
        assert lock is not None and str(lock.path) == owner.lock
        with pytest.raises(RunBusy):   # and now we hold it: a third Benchbay cannot take it from us
            claim(7, lock.owner, tmp_path / "home")
    finally:
        lock.release()
    assert not Path(owner.lock).exists()


def test_a_run_driven_from_another_computer_needs_force(tmp_path: Path) -> None:
    owner = RunOwner("some-other-laptop", 99, "/home/x/.config/benchbay/running/1.lock")
    with pytest.raises(RunBusy, match="driven from some-other-laptop.*--force"):
        claim(3, owner, tmp_path)
    lock = claim(3, owner, tmp_path, force=True)
    try:
        assert lock is not None and lock.path.parent == tmp_path / "running"
    finally:
        lock.release()


def test_a_run_stored_before_owners_were_recorded_can_be_taken(tmp_path: Path) -> None:
    lock = claim(5, None, tmp_path)
    assert lock is not None
    lock.release()


def test_released_lock_leaves_no_file(tmp_path: Path) -> None:
    lock = RunLock.create(tmp_path)
    assert lock.path.exists() and lock.owner.machine == this_machine()
    lock.release()
    lock.release()   # twice is harmless
    assert list((tmp_path / "running").iterdir()) == []
