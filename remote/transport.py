"""The interface every way of reaching a host offers: SSH and the built-in `local` host."""
from __future__ import annotations

import abc
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from remote.run_dir import RunDirChoice


@dataclass(frozen=True)
class CommandResult:
    exit_status: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    def error_text(self) -> str:
        return self.stderr.decode("utf-8", "replace").strip()


def to_shell(command: str | Sequence[str]) -> str:
    """A list is an argv: every argument is quoted. A string is taken as shell code as it is."""
    if isinstance(command, str):
        return command
    return shlex.join(str(arg) for arg in command)


class Transport(abc.ABC):
    """One open connection to a host. Not thread-safe: one worker owns it."""

    name: str
    run_dir_base = ""                              # where the user wants run directories ("" = $TMPDIR ...)
    run_dir_choice: RunDirChoice | None = None     # where make_private_dir put the last one, and why

    @abc.abstractmethod
    def run(
        self,
        command: str | Sequence[str],
        timeout: float = 60.0,
        stdin: bytes | None = None,
    ) -> CommandResult:
        """Run a command through the host's POSIX shell (/bin/sh, whatever the account's login shell;
        what the login shell's start-up files print is not part of the result).

        stdout and stderr are read concurrently; the exit status is taken only after both
        are drained. Raises CommandTimeout when it runs longer than `timeout` seconds
        (the command is killed on the local host; the channel is closed on SSH).
        """

    @abc.abstractmethod
    def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o600) -> None:
        """Write a file on the host (SFTP on SSH)."""

    @abc.abstractmethod
    def get_bytes(self, remote_path: str, offset: int = 0, limit: int | None = None) -> bytes:
        """Read a file on the host from `offset` (for tailing files the agent writes)."""

    @abc.abstractmethod
    def close(self) -> None:
        ...

    def make_private_dir(self, prefix: str = "benchbay-", need_bytes: int = 0, probed: str | None = None) -> str:
        """Create a run directory only the login user can enter (mode 0700); returns its path.

        It goes in the first candidate with `need_bytes` plus RUN_DIR_HEADROOM free (see remote.run_dir:
        the host's configured run_dir_base, $TMPDIR, /tmp, /var/tmp, ~/.cache/benchbay); where and why is
        left in `run_dir_choice`. NoSpaceError, one line naming each candidate, when none fits.
        `probed`: what remote.run_dir.probe_script printed, when the caller ran it within a command of its own.
        """
        from remote import run_dir as rd
        from remote.errors import RemoteCommandError

        need = need_bytes + rd.RUN_DIR_HEADROOM
        probe = None if probed is not None else self.run(rd.probe_script(self.run_dir_base), timeout=30)
        text = probe.text() if probe is not None else probed or ""
        candidates = rd.parse_probe(text)
        if not candidates:
            said = probe.error_text() if probe is not None else ""
            raise RemoteCommandError(f"{self.name}: could not look for a run directory: "
                                     f"{said or text.strip() or 'no output'}")
        passed_over = [c.why_not(need) for c in candidates if not c.fits(need)]
        errors: list[str] = []
        for base in rd.usable(candidates, need):
            result = self.run(rd.make_dir_script(base.path, prefix), timeout=30)
            path = result.text().strip()
            if result.ok and path.startswith("/"):
                self.run_dir_choice = rd.RunDirChoice(path, base, tuple(passed_over))
                return path
            why = result.error_text().splitlines()[-1:] or ["mktemp failed"]
            errors.append(f"{base.path}: {why[0]}")
            passed_over.append(f"{base.path}: {why[0]}")
        if errors:
            raise RemoteCommandError(f"{self.name}: could not create a private run directory: {'; '.join(errors)}")
        raise rd.NoSpaceError(rd.no_space_message(self.name, candidates, need))

    def remove_dir(self, path: str) -> None:
        """Remove a run directory this session created; refuses anything that is not one."""
        if not path.startswith("/") or "/benchbay-" not in path or path.rstrip("/").count("/") < 2:
            raise ValueError(f"refusing to remove {path!r}: not a Benchbay run directory")
        parent = path.rstrip("/").rsplit("/", 1)[0]
        if parent.endswith("/.cache/benchbay"):   # made for this run in the home directory: gone when empty
            self.run(f"rm -rf -- {shlex.quote(path)}; rmdir -- {shlex.quote(parent)} 2>/dev/null; true", timeout=120)
            return
        self.run(["rm", "-rf", "--", path], timeout=120)

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
