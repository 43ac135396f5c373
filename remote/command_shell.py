"""One shell per connection that runs its commands in turn: the login shell's start-up files run once.

sshd runs every command through the account's login shell, and bash reads ~/.bashrc for each one:
`pyenv init` or `conda init` there cost 0.1-1 s of the host's CPU per command, and a run sends dozens.
So, as Ansible's pipelining and OpenSSH's ControlMaster avoid repeated set-up, a connection starts ONE
command channel (remote.login_shell.wrap_command: the login shell, then its marker, whatever it prints
first) that becomes `/bin/sh -s` reading requests on its stdin. Each request is a line of sh made only
of letters, digits and octal escapes in single quotes (nothing the command sends can end it early):

    ( eval "$(printf 'SCRIPT')" ) </dev/null                     # or: printf 'STDIN' | ( eval ... )
    bb_s=$?; printf '%s %s\\n' END "$bb_s"; printf '%s\\n' END >&2

The subshell keeps each command as separate as a channel of its own did (`exit`, `cd`, `set -e`,
variables, a syntax error end only it), /dev/null is its stdin unless it has one of its own, and a
per-request END token, which the command never sees, closes its stdout and stderr.
"""
from __future__ import annotations

import contextlib
import secrets
import select
import time

import paramiko
from paramiko.common import cMSG_CHANNEL_REQUEST

from remote.errors import CommandTimeout, ConnectError, RemoteCommandError
from remote.login_shell import MarkerFilter, _octal, did_not_run_message, new_marker, wrap_command

INLINE_STDIN = 256 * 1024     # larger inputs go on a channel of their own (a request is parsed by sh)
LOOP_SCRIPT = "exec /bin/sh -s"
START_TIMEOUT = 60.0          # the least the login shell gets to start (slow start-up files), while silent
_CHUNK = 64 * 1024


class ShellGone(RemoteCommandError):
    """The connection's command shell ended before it answered (the caller may use a channel per command)."""


def new_end() -> bytes:
    return b"BENCHBAY-END-" + secrets.token_hex(12).encode()


def request(script: str, end: bytes, stdin: bytes | None = None) -> bytes:
    """The request line(s) for the shell's stdin: runs `script` as `sh -c` would, then prints `end`."""
    feed = f"printf '{_octal(stdin, True)}' | " if stdin else ""
    redirect = "" if stdin else " </dev/null"
    token = end.decode()
    return (f"{feed}( eval \"$(printf '{_octal(script.encode(), True)}')\" ){redirect}\n"
            f"bb_s=$?; printf '%s %s\\n' {token} \"$bb_s\"; printf '%s\\n' {token} >&2\n").encode()


class EndParser:
    """Fed a request's stdout and stderr as they come; complete once both carried its END token."""

    def __init__(self, end: bytes) -> None:
        self._end = end
        self._out = bytearray()
        self._err = bytearray()
        self.stdout: bytes | None = None
        self.stderr: bytes | None = None
        self.status = -1

    def feed_stdout(self, chunk: bytes) -> None:
        if self.stdout is not None:
            return
        self._out += chunk
        at = self._out.find(self._end + b" ")
        if at < 0:
            return
        line_end = self._out.find(b"\n", at)
        if line_end < 0:
            return
        status = self._out[at + len(self._end) + 1:line_end].strip()
        self.status = int(status) if status.isdigit() else -1
        self.stdout = bytes(self._out[:at])

    def feed_stderr(self, chunk: bytes) -> None:
        if self.stderr is not None:
            return
        self._err += chunk
        at = self._err.find(self._end + b"\n")
        if at >= 0:
            self.stderr = bytes(self._err[:at])

    @property
    def complete(self) -> bool:
        return self.stdout is not None and self.stderr is not None

    def partial(self) -> tuple[bytes, bytes]:
        """What came so far (the shell ended before the token)."""
        return bytes(self._out) if self.stdout is None else self.stdout, \
            bytes(self._err) if self.stderr is None else self.stderr


class CommandShell:
    """The connection's shell: `run` sends one request and waits for its END on both streams.

    The wait has a limit that moves: `timeout` seconds after the request went, or after the last byte
    that came back, whichever is later. A host that is answering is never failed on a fixed limit.
    Not thread-safe: one worker owns it (as it owns the connection).
    """

    def __init__(self, channel: paramiko.Channel, host: str, user: str) -> None:
        self.channel = channel
        self.host = host
        self.user = user
        self.inline_stdin = False          # printf is the shell's own: a stdin may go in a request
        self._out = MarkerFilter(b"")      # replaced by start(): until the marker, what comes is start-up output
        self._err = MarkerFilter(b"")

    @classmethod
    def start(cls, transport: paramiko.Transport, host: str, timeout: float) -> CommandShell:
        """Start the login shell once and check that it runs requests (one round trip: the check goes along).
        RemoteCommandError with remote.login_shell's one line when the account has no shell that runs
        commands; ShellGone when it does but the shell did not stay (the caller then uses a channel each)."""
        channel = transport.open_session(timeout=min(timeout, 30.0))
        shell = cls(channel, host, transport.get_username() or "")
        try:
            marker = new_marker()
            shell._out, shell._err = MarkerFilter(marker), MarkerFilter(marker)
            channel.exec_command(wrap_command(LOOP_SCRIPT, marker))
            end = new_end()
            parser = shell._exchange(request("command -V printf", end), end, max(timeout, START_TIMEOUT))
            if not shell._out.found:
                shell._out.finish()
                shell._err.finish()
                status = channel.recv_exit_status() if channel.status_event.wait(5.0) else -1
                raise RemoteCommandError(did_not_run_message(host, shell.user, status,
                                                             shell._out.before, shell._err.before))
            if not parser.complete or parser.status != 0:
                raise ShellGone(f"{host}: the command shell did not start")
            # a stdin goes in the request as printf's argument: only where no `ps` can show it
            shell.inline_stdin = b"builtin" in (parser.stdout or b"")
        except BaseException:
            shell.close()
            raise
        return shell

    @property
    def usable(self) -> bool:
        return not (self.channel.closed or self.channel.eof_received)

    def takes(self, stdin: bytes | None) -> bool:
        """Whether a command with this stdin can go through this shell."""
        return stdin is None or (self.inline_stdin and len(stdin) <= INLINE_STDIN)

    def run(self, script: str, timeout: float, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
        """(exit status, stdout, stderr) of `script` run by /bin/sh with `stdin` (/dev/null without)."""
        end = new_end()
        parser = self._exchange(request(script, end, stdin), end, timeout)
        if not parser.complete:
            self.close()
            raise ShellGone(f"{self.host}: the command shell ended while a command ran")
        return parser.status, parser.stdout or b"", parser.stderr or b""

    def close(self) -> None:
        send_signal(self.channel, "TERM")   # what it runs stops too (OpenSSH refuses this for root)
        self.channel.close()

    def _exchange(self, payload: bytes, end: bytes, timeout: float) -> EndParser:
        """Send `payload`, read both streams until END came on both, the shell ended, or the limit passed."""
        channel, parser = self.channel, EndParser(end)
        pending = memoryview(payload)
        deadline = time.monotonic() + timeout
        while not parser.complete:
            if pending and channel.send_ready():
                try:
                    pending = pending[channel.send(pending[:_CHUNK]):]
                except OSError:
                    # the shell ended before it read the request (an account whose shell is /bin/false): what
                    # it said and its exit status tell why, below, not paramiko's "Socket is closed"
                    pending = memoryview(b"")
            if self._drain(parser):
                deadline = max(deadline, time.monotonic() + timeout)   # answering: the limit moves on
            if parser.complete or channel.closed or channel.eof_received:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.close()
                if not channel.get_transport().is_active():
                    raise ConnectError(f"{self.host}: the SSH connection was lost while a command ran")
                raise CommandTimeout(f"command did not finish within {timeout:g} s on {self.host}")
            select.select([channel], [], [], min(remaining, 0.02 if pending else 0.5))
        self._drain(parser)
        if not parser.complete and not channel.get_transport().is_active():
            raise ConnectError(f"{self.host}: the SSH connection was lost while a command ran")
        return parser

    def _drain(self, parser: EndParser) -> bool:
        """Feed what arrived; True when anything did."""
        got = False
        while self.channel.recv_ready():
            data = self.channel.recv(_CHUNK)
            if not data:
                break
            got = True
            parser.feed_stdout(self._out.feed(data))
        while self.channel.recv_stderr_ready():
            data = self.channel.recv_stderr(_CHUNK)
            if not data:
                break
            got = True
            parser.feed_stderr(self._err.feed(data))
        return got


def send_signal(channel: paramiko.Channel, name: str) -> None:
    """RFC 4254 "signal" request: OpenSSH delivers it to the command's process group.

    Best effort: OpenSSH refuses it for root logins (no privilege separation after login)
    and older servers ignore it. paramiko has no public call, so it is built as paramiko does.
    """
    if channel.closed:
        return
    message = paramiko.Message()
    message.add_byte(cMSG_CHANNEL_REQUEST)
    message.add_int(channel.remote_chanid)
    message.add_string("signal")
    message.add_boolean(False)
    message.add_string(name)
    with contextlib.suppress(Exception):
        channel.transport._send_user_message(message)
