"""Files over plain command channels, for hosts where SFTP cannot be used.

sshd starts an external sftp-server (Debian's default `Subsystem sftp /usr/lib/openssh/sftp-server`)
through the user's login shell, so a start-up file that prints corrupts the SFTP stream; some hosts
have no SFTP subsystem at all. Commands still work there (see remote.login_shell), so files go as
the stdin of `cat` and come back as the stdout of `tail`; uploads are checked on the host afterwards.
"""
from __future__ import annotations

import posixpath
import shlex

from remote.errors import RemoteCommandError
from remote.transport import Transport
from remote.upload_check import verify_upload

_MISSING = 44   # exit status of the scripts below for "no such file or directory"


def put_over_exec(transport: Transport, data: bytes, remote_path: str, mode: int, missing: type) -> None:
    """Write `data` to a temporary name (private from the start), set `mode`, rename; then verify."""
    path = shlex.quote(remote_path)
    directory = shlex.quote(posixpath.dirname(remote_path) or ".")
    temporary = shlex.quote(remote_path + ".part")
    script = (f"[ -d {directory} ] || exit {_MISSING}; umask 077; "
              f"cat > {temporary} && chmod {mode:o} {temporary} && mv -f {temporary} {path} "
              f"|| {{ rm -f {temporary}; exit 1; }}")
    result = transport.run(script, timeout=max(60.0, len(data) / 100_000), stdin=data)
    if result.exit_status == _MISSING:
        raise missing(f"{transport.name}: cannot write {remote_path}: no such directory")
    if not result.ok:
        raise RemoteCommandError(f"{transport.name}: cannot write {remote_path}: "
                                 f"{result.error_text() or f'exit {result.exit_status}'}")
    verify_upload(transport, data, remote_path)


def get_over_exec(transport: Transport, remote_path: str, offset: int, limit: int | None, missing: type) -> bytes:
    """The file's bytes from `offset`, at most `limit` of them."""
    path = shlex.quote(remote_path)
    read = f"tail -c +{int(offset) + 1} {path}"
    if limit is not None:
        read += f" | head -c {int(limit)}"
    result = transport.run(f"[ -f {path} ] || exit {_MISSING}; {read}", timeout=60)
    if result.exit_status == _MISSING:
        raise missing(f"{transport.name}: cannot read {remote_path}: no such file")
    if not result.ok:
        raise RemoteCommandError(f"{transport.name}: cannot read {remote_path}: "
                                 f"{result.error_text() or f'exit {result.exit_status}'}")
    return result.stdout if limit is None else result.stdout[:limit]
