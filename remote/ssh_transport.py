"""Transport over an authenticated paramiko connection: commands on channels, files over SFTP."""
from __future__ import annotations

import contextlib
import logging
import posixpath
import select
import shlex
import time
from collections.abc import Sequence

import paramiko
from paramiko.sftp import SFTPError

from remote.command_shell import INLINE_STDIN, CommandShell, ShellGone, send_signal
from remote.errors import CommandTimeout, ConnectError, RemoteCommandError, RemoteError
from remote.exec_files import get_over_exec, put_over_exec
from remote.login_shell import MarkerFilter, did_not_run_message, new_marker, wrap_command
from remote.transport import CommandResult, Transport, to_shell
from remote.upload_check import check_script, free_space_text, mismatch, parse_check, verify_upload

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15
IDLE_WAKE_SECONDS = 1.0
_CHECK_SEPARATOR = "@@benchbay-next-upload@@"
SFTP_START_TIMEOUT = 15.0
_CHUNK = 64 * 1024


class RemoteFileNotFound(RemoteCommandError, FileNotFoundError):
    """A missing remote file: a RemoteCommandError like other file errors, and a FileNotFoundError
    for code tailing a file that may not exist yet."""


class SSHTransport(Transport):
    """One SSH connection (possibly through jump hosts). Not thread-safe: one worker owns it."""

    def __init__(
        self,
        client: paramiko.SSHClient,
        name: str,
        jump_clients: Sequence[paramiko.SSHClient] = (),
        keepalive: int = KEEPALIVE_SECONDS,
    ):
        self.name = name
        self._client = client
        self._jump_clients = list(jump_clients)
        self._sftp: paramiko.SFTPClient | None = None
        self._exec_files = False      # SFTP is unusable on this host: files go over command channels
        self._tails: dict[str, paramiko.SFTPFile] = {}   # growing files kept open by tail_bytes
        # the shell that runs this connection's commands in turn (remote.command_shell); False: a channel
        # per command, because this host's shell did not stay
        self._shell: CommandShell | None | bool = None
        transport = client.get_transport()
        if transport is not None:
            # Keepalives stop NAT boxes and firewalls from dropping a connection during a long test.
            transport.set_keepalive(keepalive)
            # paramiko's reader thread wakes every 0.1 s to look for a close; once logged in, once a
            # second does (a close wakes it anyway): a hundred idle connections cost ten times less CPU
            with contextlib.suppress(AttributeError, OSError):
                transport.sock.settimeout(IDLE_WAKE_SECONDS)

    @property
    def client(self) -> paramiko.SSHClient:
        return self._client

    @property
    def one_shell(self) -> bool:
        """Commands run in the connection's one shell (remote.command_shell), not a login shell each."""
        return self._shell is not False

    def is_active(self) -> bool:
        transport = self._client.get_transport()
        return transport is not None and transport.is_active()

    def _transport(self) -> paramiko.Transport:
        transport = self._client.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectError(f"{self.name}: the SSH connection is closed")
        return transport

    def run(
        self,
        command: str | Sequence[str],
        timeout: float = 60.0,
        stdin: bytes | None = None,
    ) -> CommandResult:
        """Through the connection's command shell: the login shell's start-up files ran once, when it
        started. A channel of its own for a large stdin, or where that shell does not stay."""
        script = to_shell(command)
        if self._shell is not False and (stdin is None or len(stdin) <= INLINE_STDIN):
            try:
                shell = self._command_shell(timeout)
                if shell is not None and shell.takes(stdin):
                    return CommandResult(*shell.run(script, timeout, stdin))
            except ShellGone:
                # the command may have run: never sent again; the next command starts another shell
                self._shell = None
                if not self.is_active():
                    raise ConnectError(f"{self.name}: the SSH connection was lost while a command ran") from None
                raise
            except CommandTimeout:
                self._shell = None     # closed: the next command starts another
                raise
            except (paramiko.SSHException, OSError, EOFError) as exc:
                self._shell = None
                raise self._failure("cannot run the command", exc) from None
        return self._run_once(script, timeout, stdin)

    def _command_shell(self, timeout: float) -> CommandShell | None:
        shell = self._shell
        if isinstance(shell, CommandShell) and shell.usable:
            return shell
        if shell is False:
            return None
        self._shell = None
        try:
            self._shell = CommandShell.start(self._transport(), self.name, timeout)
        except ShellGone:
            if not self.is_active():
                raise ConnectError(f"{self.name}: the SSH connection was lost") from None
            log.info("%s: the command shell did not start; a channel per command", self.name)
            self._shell = False
            return None
        return self._shell

    def _run_once(self, script: str, timeout: float, stdin: bytes | None) -> CommandResult:
        """The command on a channel of its own (the login shell and its start-up files run for it)."""
        deadline = time.monotonic() + timeout
        channel: paramiko.Channel | None = None
        marker = new_marker()
        try:
            channel = self._transport().open_session(timeout=min(timeout, 30.0))
            # never the login shell's own syntax: /bin/sh runs it, after a marker on both streams
            channel.exec_command(wrap_command(script, marker))
            raw = self._collect(channel, stdin, deadline, timeout)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise self._failure("cannot run the command", exc) from None
        finally:
            if channel is not None:
                channel.close()
        return self._after_marker(raw, marker)

    def _after_marker(self, raw: CommandResult, marker: bytes) -> CommandResult:
        """Drop what start-up files printed before the marker; no marker: the command never ran."""
        out, err = MarkerFilter(marker), MarkerFilter(marker)
        stdout, stderr = out.feed(raw.stdout), err.feed(raw.stderr)
        out.finish()
        err.finish()
        if not out.found:
            user = self._transport().get_username() or ""
            raise RemoteCommandError(did_not_run_message(self.name, user, raw.exit_status, out.before, err.before))
        return CommandResult(raw.exit_status, stdout, stderr if err.found else err.before)

    def _failure(self, what: str, exc: BaseException) -> RemoteError:
        """A dropped connection is a ConnectError (the caller may reconnect); anything else is not."""
        if not self.is_active():
            return ConnectError(f"{self.name}: the SSH connection was lost ({what})")
        return RemoteCommandError(f"{self.name}: {what}: {_reason(exc)}")

    def _collect(
        self, channel: paramiko.Channel, stdin: bytes | None, deadline: float, timeout: float,
    ) -> CommandResult:
        # One loop serves stdin, stdout and stderr, so a command that fills one pipe while
        # we wait on another cannot deadlock. paramiko's fileno() wakes select for both streams.
        out: list[bytes] = []
        err: list[bytes] = []
        pending = memoryview(stdin) if stdin else None
        if pending is None:
            channel.shutdown_write()  # the command sees EOF on stdin, as with </dev/null
        while True:
            if pending is not None and (channel.closed or channel.eof_received):
                pending = None  # the command ended without reading all its input, as with a pipe
            if pending is not None and channel.send_ready():
                try:
                    pending = pending[channel.send(pending[:_CHUNK]):] or None
                except OSError:
                    if not channel.closed:
                        raise
                    pending = None  # closed between the check and the send: as above
                if pending is None:
                    channel.shutdown_write()  # a no-op once paramiko has closed the channel
            if self._drain(channel, out, err):
                deadline = max(deadline, time.monotonic() + timeout)   # answering: the limit moves on
            if channel.eof_received or channel.closed:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._timed_out(channel, timeout)
            # With stdin pending we cannot select for "window open again": poll briefly instead.
            wait = min(remaining, 0.02 if pending is not None else 0.5)
            select.select([channel], [], [], wait)
        self._drain(channel, out, err)
        # The exit status arrives after EOF; only now, with both streams drained, wait for it.
        if not channel.status_event.wait(max(deadline - time.monotonic(), 0)) and not channel.closed:
            self._timed_out(channel, timeout)
        self._drain(channel, out, err)
        status = channel.recv_exit_status()  # -1 when the server sent none (e.g. killed by a signal)
        if status == -1 and not channel.get_transport().is_active():
            raise ConnectError(f"{self.name}: the SSH connection was lost while a command ran")
        return CommandResult(status, b"".join(out), b"".join(err))

    @staticmethod
    def _drain(channel: paramiko.Channel, out: list[bytes], err: list[bytes]) -> bool:
        """What arrived, appended; True when anything did."""
        got = False
        while channel.recv_ready():
            data = channel.recv(_CHUNK)
            if not data:
                break
            out.append(data)
            got = True
        while channel.recv_stderr_ready():
            data = channel.recv_stderr(_CHUNK)
            if not data:
                break
            err.append(data)
            got = True
        return got

    def _timed_out(self, channel: paramiko.Channel, timeout: float) -> None:
        send_signal(channel, "TERM")  # closing alone leaves the command running on the host
        channel.close()
        raise CommandTimeout(f"command did not finish within {timeout:g} s on {self.name}")

    def _files_over_exec(self) -> bool:
        """SFTP when it works; command channels when the host has no SFTP, or when start-up output of
        the login shell corrupts it (sshd starts an external sftp-server through the login shell)."""
        if self._sftp is not None or self._exec_files:
            return self._exec_files
        channel: paramiko.Channel | None = None
        try:
            channel = self._transport().open_session(timeout=30.0)
            channel.settimeout(SFTP_START_TIMEOUT)   # garbage that looks like a packet length: no hang
            channel.invoke_subsystem("sftp")
            self._sftp = paramiko.SFTPClient(channel)
            channel.settimeout(None)
        except (paramiko.SSHException, SFTPError, OSError, EOFError) as exc:
            if channel is not None:
                channel.close()
            if not self.is_active():
                raise self._failure("cannot start SFTP", exc) from None
            log.info("%s: SFTP unusable (%s); files go over command channels", self.name, _reason(exc))
            self._exec_files = True
        return self._exec_files

    def _sftp_client(self) -> paramiko.SFTPClient:
        if self._sftp is None:
            try:
                self._sftp = self._client.open_sftp()
            except (paramiko.SSHException, OSError, EOFError) as exc:
                raise self._failure("cannot start SFTP", exc) from None
        return self._sftp

    def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o600) -> None:
        """Write over SFTP, then check size and hash on the host: a full disk may cut it short silently."""
        if self._files_over_exec():
            return put_over_exec(self, data, remote_path, mode, RemoteFileNotFound)
        self._sftp_write(data, remote_path, mode)
        verify_upload(self, data, remote_path)

    def put_files(self, files: Sequence[tuple[bytes, str, int]]) -> None:
        """put_bytes for several files (data, remote path, mode), checked on the host by ONE command: a run's
        start-up then costs one round trip instead of one per file, which counts with a hundred hosts."""
        if len(files) < 2 or self._files_over_exec():
            for data, remote_path, mode in files:
                self.put_bytes(data, remote_path, mode)
            return
        for data, remote_path, mode in files:
            self._sftp_write(data, remote_path, mode)
        script = "; ".join(f"( {check_script(path)} ); echo {_CHECK_SEPARATOR}" for _data, path, _mode in files)
        parts = self.run(script, timeout=60).text().split(_CHECK_SEPARATOR)
        problems = [mismatch(data, parse_check(part), self.name, path)
                    for (data, path, _mode), part in zip(files, parts + [""] * len(files), strict=False)]
        problems = [problem for problem in problems if problem]
        if problems:   # nothing must run a damaged upload: remove them all
            self.run("rm -f -- " + " ".join(shlex.quote(path) for _data, path, _mode in files), timeout=30)
            raise RemoteCommandError(problems[0])

    def put_files_unchecked(self, files: Sequence[tuple[bytes, str, int]]) -> bool:
        """Write (data, remote path, mode) over SFTP without reading them back: True, and the caller checks them
        on the host within its next command (remote.upload_check.guard_script). False when the files went over
        command channels instead, which checks each one as it goes."""
        if self._files_over_exec():
            for data, remote_path, mode in files:
                self.put_bytes(data, remote_path, mode)
            return False
        for data, remote_path, mode in files:
            self._sftp_write(data, remote_path, mode)
        return True

    def _sftp_write(self, data: bytes, remote_path: str, mode: int) -> None:
        sftp = self._sftp_client()
        try:
            with sftp.open(remote_path, "wb") as handle:
                handle.chmod(mode)  # before the data goes in, so it is never readable by others
                handle.set_pipelined(True)
                handle.write(data)
        except FileNotFoundError:
            raise RemoteFileNotFound(f"{self.name}: cannot write {remote_path}: no such directory") from None
        except (paramiko.SSHException, OSError, EOFError) as exc:
            failure = self._failure(f"cannot write {remote_path}", exc)
            if isinstance(failure, ConnectError):
                raise failure from None
            # ENOSPC reaches SFTP clients as a bare "Failure": say how much room there was
            raise RemoteCommandError(self._upload_failed(remote_path, _reason(exc))) from None

    def _upload_failed(self, remote_path: str, reason: str) -> str:
        """Remove what arrived (nothing must run it) and describe the failure with the free space left."""
        directory, name = posixpath.split(remote_path)
        result = self.run(f"rm -f -- {shlex.quote(remote_path)}; df -Pk -- {shlex.quote(directory)}", timeout=30)
        free = free_space_text(result.text(), directory)
        return (f"upload of {name} to {self.name}:{directory} failed (SFTP: {reason})"
                + (f"; {free}: no space left?" if free else ""))

    def get_bytes(self, remote_path: str, offset: int = 0, limit: int | None = None) -> bytes:
        """Raises RemoteFileNotFound (also a FileNotFoundError) for a missing file."""
        if self._files_over_exec():
            return get_over_exec(self, remote_path, offset, limit, RemoteFileNotFound)
        sftp = self._sftp_client()
        try:
            with sftp.open(remote_path, "rb") as handle:
                if offset:
                    handle.seek(offset)
                return handle.read(limit) if limit is not None else handle.read()
        except FileNotFoundError:
            raise RemoteFileNotFound(f"{self.name}: cannot read {remote_path}: no such file") from None
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise self._failure(f"cannot read {remote_path}", exc) from None

    def tail_bytes(self, remote_path: str, offset: int = 0, limit: int | None = None) -> bytes:
        """What a growing file holds from `offset` on, as get_bytes. The file stays open between calls and
        each call is one SFTP read per 32 KiB (a read at the end answers "end of file"), against four
        requests to open, read, hit the end and close: what lets one workbench tail a hundred runs."""
        if self._files_over_exec():
            return get_over_exec(self, remote_path, offset, limit, RemoteFileNotFound)
        handle = self._tails.get(remote_path)
        try:
            if handle is None:
                handle = self._sftp_client().open(remote_path, "rb")
                self._tails[remote_path] = handle
            return _read_at(handle, offset, limit)
        except FileNotFoundError:
            raise RemoteFileNotFound(f"{self.name}: cannot read {remote_path}: no such file") from None
        except (paramiko.SSHException, OSError, EOFError) as exc:
            self._tails.pop(remote_path, None)   # opened afresh next time
            raise self._failure(f"cannot read {remote_path}", exc) from None

    def close(self) -> None:
        """Drop the connection at once, without a round trip: closing SFTP handles first would send a request
        per handle and wait for each answer, forever on a link that died silently. The host frees the
        handles with the connection; the socket goes first, so the handles' own clean-up fails fast."""
        self._client.close()
        for jump in reversed(self._jump_clients):
            jump.close()
        self._jump_clients = []
        self._tails = {}
        self._sftp = None
        self._shell = None


def _read_at(handle: paramiko.SFTPFile, offset: int, limit: int | None) -> bytes:
    """Bytes from `offset` up to the current end (at most `limit`), one READ request per chunk: paramiko's
    read() asks once more to learn that a short answer was the end. Without its one-request _read
    (another paramiko), the size is asked first instead."""
    read_once = getattr(handle, "_read", None)
    if read_once is None:
        size = handle.stat().st_size or 0
        handle.seek(offset)
        return handle.read(max(0, size - offset) if limit is None else max(0, min(limit, size - offset)))
    chunk_size = handle.MAX_REQUEST_SIZE
    parts: list[bytes] = []
    got = 0
    while limit is None or got < limit:
        want = chunk_size if limit is None else min(chunk_size, limit - got)
        handle.seek(offset + got)
        try:
            chunk = read_once(want)
        except EOFError:
            break
        parts.append(chunk)
        got += len(chunk)
        if len(chunk) < want:
            break   # a short answer: the end of what the file holds now
    return b"".join(parts)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__
