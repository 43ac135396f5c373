"""Which workbench drives a run: an flock held for as long as a process drives it.

While a workbench drives a run it holds an flock on a lock file of its own (RunLock); the run's row
names that file (storage RunOwner). A run stored as "running" whose lock nobody holds lost its
workbench: the next Benchbay takes the lock (claim), so two Benchbays never drive one run
(app.engine.attach does the rest).

The kernel drops an flock when its process dies, even on SIGKILL: no pid can be mistaken for a
live one after reuse. A lock on another machine cannot be checked from here: such runs are left alone
unless the user forces it.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import socket
from pathlib import Path

from app.errors import AppError
from storage.records import RunOwner

try:
    import fcntl
except ImportError:  # not POSIX: no locks, so no automatic re-attach (by hand with --force only)
    fcntl = None  # type: ignore[assignment]

LOCK_DIR = "running"   # under the Benchbay home directory


class RunBusy(AppError):
    """Another live workbench drives this run (or one whose liveness cannot be checked from here)."""


def this_machine() -> str:
    return socket.gethostname()


class RunLock:
    """An exclusive flock held for as long as this process drives one run."""

    def __init__(self, path: Path, handle: object) -> None:
        self.path = path
        self._handle = handle

    @classmethod
    def create(cls, home: Path) -> RunLock | None:
        """A new lock for a run this process starts; None where locks are not available."""
        if fcntl is None:
            return None
        directory = Path(home) / LOCK_DIR
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        lock = cls.take(directory / f"{secrets.token_hex(8)}.lock")
        assert lock is not None, "a brand-new lock file is locked by nobody"
        return lock

    @classmethod
    def take(cls, path: Path | str) -> RunLock | None:
        """Lock `path` (created if needed) without waiting; None when a live process holds it."""
        if fcntl is None:
            return None
        path = Path(path)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle = open(path, "a+")   # noqa: SIM115 - held open as long as the run is driven
        except OSError as exc:
            raise RunBusy(f"cannot open the run's lock file {path} ({exc.strerror or exc}); "
                          "is it another user's Benchbay?") from None
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return None
        return cls(path, handle)

    @property
    def owner(self) -> RunOwner:
        return RunOwner(this_machine(), os.getpid(), str(self.path))

    def release(self) -> None:
        """The run is stored: remove the file, then drop the lock (closing the file drops it)."""
        handle, self._handle = self._handle, None
        if handle is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        handle.close()   # type: ignore[attr-defined]


def claim(run_id: int, owner: RunOwner | None, home: Path, force: bool = False) -> RunLock | None:
    """Take over a run whose workbench went away; RunBusy when one may still drive it.

    Returns the lock now held (None where locks are not available and force was given).
    """
    if owner is not None and owner.machine != this_machine() and not force:
        raise RunBusy(f"run {run_id} is driven from {owner.machine} (pid {owner.pid}); re-attach there, or use "
                      "--force if that workbench is gone")
    if fcntl is None:
        if force:
            return None
        raise RunBusy(f"run {run_id}: this system has no file locks to tell whether its workbench is alive; "
                      "use --force if it is gone")
    if owner is not None and owner.machine == this_machine():
        lock = RunLock.take(owner.lock)
        if lock is None:
            raise RunBusy(f"run {run_id} is still driven by Benchbay pid {owner.pid} on this computer")
        return lock
    # no owner recorded (a run stored before 0004), or forced from another machine: a lock of our own
    return RunLock.create(home)
