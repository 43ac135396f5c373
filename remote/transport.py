"""The interface every way of reaching a host offers: SSH and the built-in `local` host."""
from __future__ import annotations

import abc
import shlex
from collections.abc import Sequence
from dataclasses import dataclass


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

    @abc.abstractmethod
    def run(
        self,
        command: str | Sequence[str],
        timeout: float = 60.0,
        stdin: bytes | None = None,
    ) -> CommandResult:
        """Run a command through the host's POSIX shell.

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

    def make_private_dir(self, prefix: str = "benchbay-") -> str:
        """Create a run directory only the login user can enter (mode 0700); returns its path."""
        result = self.run(
            "umask 077; d=$(mktemp -d \"${TMPDIR:-/tmp}/\"" + shlex.quote(prefix + "XXXXXXXX")
            + ") && chmod 700 \"$d\" && printf %s \"$d\"",
            timeout=30,
        )
        path = result.text().strip()
        if not result.ok or not path.startswith("/"):
            from remote.errors import RemoteCommandError

            raise RemoteCommandError(
                f"{self.name}: could not create a private run directory: {result.error_text() or 'mktemp failed'}"
            )
        return path

    def remove_dir(self, path: str) -> None:
        """Remove a run directory this session created; refuses anything that is not one."""
        if not path.startswith("/") or "/benchbay-" not in path or path.rstrip("/").count("/") < 2:
            raise ValueError(f"refusing to remove {path!r}: not a Benchbay run directory")
        self.run(["rm", "-rf", "--", path], timeout=120)

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
