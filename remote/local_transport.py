"""The built-in host `local`: the same Transport interface as SSH, run as subprocesses of the workbench."""
from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

from remote.errors import CommandTimeout, RemoteCommandError
from remote.hostspec import LOCAL_HOST_NAME
from remote.transport import CommandResult, Transport, to_shell
from remote.upload_check import Uploaded, mismatch

_DRAIN_AFTER_KILL = 5.0  # seconds to collect output once the process group is killed


class LocalTransport(Transport):
    """Runs commands with /bin/sh on this computer.

    `env` adds or overrides environment variables for every command (tests use it to hide
    python3 from PATH, as on a host without it).
    """

    def __init__(self, env: Mapping[str, str] | None = None, name: str = LOCAL_HOST_NAME) -> None:
        self.name = name
        self._env = {**os.environ, **env} if env is not None else None
        self._closed = False

    def run(
        self,
        command: str | Sequence[str],
        timeout: float = 60.0,
        stdin: bytes | None = None,
    ) -> CommandResult:
        self._check_open()
        shell_code = to_shell(command)
        # A session of its own: on timeout the whole process group goes, grandchildren included.
        proc = subprocess.Popen(
            ["/bin/sh", "-c", shell_code],
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(input=stdin, timeout=timeout)  # drains both pipes concurrently
        except subprocess.TimeoutExpired:
            self._kill_and_drain(proc)
            raise CommandTimeout(
                f"{self.name}: command did not finish within {timeout:g} s and was stopped: "
                f"{_short(shell_code)}"
            ) from None
        except BaseException:  # interrupted: never leave the command running behind us
            self._kill_and_drain(proc)
            raise
        status = proc.returncode
        if status < 0:  # killed by a signal: report it as a shell would (128 + signal number)
            status = 128 - status
        return CommandResult(status, out, err)

    @staticmethod
    def _kill_and_drain(proc: subprocess.Popen) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        try:
            proc.communicate(timeout=_DRAIN_AFTER_KILL)
        except subprocess.TimeoutExpired:
            # Something left the process group and still holds our pipes: stop reading them.
            for pipe in (proc.stdout, proc.stderr):
                if pipe:
                    pipe.close()
            proc.wait()

    def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o600) -> None:
        """Write atomically: a temp file in the same directory, created with `mode`, then renamed."""
        self._check_open()
        path = os.path.expanduser(remote_path)
        directory = os.path.dirname(os.path.abspath(path))
        try:
            fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=".benchbay-put-")
        except OSError as exc:
            raise RemoteCommandError(f"{self.name}: cannot write {remote_path}: {exc.strerror}") from exc
        try:
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(handle.fileno(), mode)  # explicit: mkstemp's 0600 and the umask do not decide
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_path, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp_path)
            raise RemoteCommandError(f"{self.name}: cannot write {remote_path}: {exc.strerror}") from exc
        # read back as on SSH hosts: what runs it must be what was sent
        try:
            with open(path, "rb") as handle:
                back = handle.read()
        except OSError:
            back = None
        problem = mismatch(data, Uploaded(None if back is None else len(back), "sha256",
                                          hashlib.sha256(back or b"").hexdigest()), self.name, remote_path)
        if problem:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise RemoteCommandError(problem)

    def get_bytes(self, remote_path: str, offset: int = 0, limit: int | None = None) -> bytes:
        self._check_open()
        try:
            with open(os.path.expanduser(remote_path), "rb") as handle:
                handle.seek(offset)
                return handle.read() if limit is None else handle.read(limit)
        except OSError as exc:
            raise RemoteCommandError(f"{self.name}: cannot read {remote_path}: {exc.strerror}") from exc

    def close(self) -> None:
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise RemoteCommandError(f"{self.name}: the connection was closed")


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
