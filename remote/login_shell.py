"""Remote commands that do not depend on the account's login shell or on start-up files that print.

sshd runs every command as `$SHELL -c STRING`. The login shell may be bash, dash, zsh, fish or
tcsh, and its start-up files may print a banner first. So the STRING is made only of characters
all these shells read the same way inside single quotes (letters, digits, `\\`, `"`, `$`, `(`, `)`,
`/`, space): `exec /bin/sh -c 'eval "$(printf "\\101...")"'`. The POSIX script travels as printf
octal escapes (no base64 needed on the host), and starts by printing a per-call marker on stdout
and stderr; whatever comes before the marker (a motd, a greeting) is dropped, never parsed.
"""
from __future__ import annotations

import secrets

# The largest single argument Linux passes to a program (MAX_ARG_STRLEN) is 128 KiB.
MAX_COMMAND_BYTES = 120_000
_LITERAL = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_KEPT_BEFORE = 4096   # bytes of start-up output kept to explain a command that never ran


def new_marker() -> bytes:
    return b"BENCHBAY-BEGIN-" + secrets.token_hex(12).encode()


def _octal(data: bytes, keep_letters: bool) -> str:
    return "".join(chr(b) if keep_letters and b in _LITERAL else f"\\{b:03o}" for b in data)


def wrap_command(script: str, marker: bytes) -> str:
    """The string for `$SHELL -c`: runs `script` with /bin/sh after printing `marker` on both streams.

    The marker itself is fully escaped, so a shell that echoes its command (tcsh's `verbose`,
    `set -x` in a start-up file) cannot print it early. The exit status is the script's own.
    """
    header = _octal(b"printf '%s\\n' " + marker + b"; printf '%s\\n' " + marker + b" >&2\n", keep_letters=False)
    command = "exec /bin/sh -c 'eval \"$(printf \"" + header + _octal(script.encode(), True) + "\")\"'"
    if len(command) > MAX_COMMAND_BYTES:
        raise ValueError(f"remote script too long ({len(script)} bytes): pass data on stdin or in a file")
    return command


class MarkerFilter:
    """Fed one stream's chunks as they arrive; passes on only what follows the marker line."""

    def __init__(self, marker: bytes) -> None:
        self._needle = marker + b"\n"
        self._pending = b""          # not yet known to be before the marker
        self.found = False
        self.before = b""            # the start of what came before the marker (for messages)

    def feed(self, chunk: bytes) -> bytes:
        if self.found:
            return chunk
        data = self._pending + chunk
        at = data.find(self._needle)
        if at >= 0:
            self.found = True
            self._keep(data[:at])
            self._pending = b""
            return data[at + len(self._needle):]
        # the marker may be split across reads: keep a tail shorter than the marker line
        cut = max(len(data) - (len(self._needle) - 1), 0)
        self._keep(data[:cut])
        self._pending = data[cut:]
        return b""

    def finish(self) -> bytes:
        """At the end of the stream: without a marker, what came is kept in `before`."""
        if not self.found:
            self._keep(self._pending)
            self._pending = b""
        return b""

    def _keep(self, skipped: bytes) -> None:
        room = _KEPT_BEFORE - len(self.before)
        if room > 0 and skipped:
            self.before += skipped[:room]


def did_not_run_message(host: str, user: str, status: int, stdout_before: bytes, stderr_before: bytes) -> str:
    """One line for a command the login shell never ran (nologin, /bin/false, a broken shell)."""
    said = [line.strip() for text in (stderr_before, stdout_before)
            for line in text.decode("utf-8", "replace").splitlines() if line.strip()]
    detail = f"exit {status}" + (f": {said[-1][:200]}" if said else ", no output")
    who = f"the account {user}" if user else "the login account"
    return (f"{host}: {who} has no login shell that runs commands ({detail}); "
            "give it a shell such as /bin/bash, or connect as another user")
