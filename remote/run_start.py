"""The first steps of a run on its host, each folded into as few commands as it can be.

A command costs a round trip and, on a host whose login shell has slow start-up files (pyenv, conda and
the like in ~/.bashrc, read for every command sshd runs), tens of milliseconds of the host's CPU: with a
hundred hosts started from one workbench, that is what spreads their starts apart. So the run directory's
candidates and the host's python3 are looked up together, and the uploads are checked by the command
that starts the run.
"""
from __future__ import annotations

from remote.agent_run import split_python_lookup, with_python_lookup
from remote.errors import RemoteCommandError
from remote.run_dir import probe_script
from remote.transport import CommandResult, Transport
from remote.upload_check import guard_problem, guard_script


def look_around(transport: Transport, wants_python: bool, timeout: float) -> tuple[str, str | None]:
    """What remote.run_dir.probe_script prints (for Transport.make_private_dir), and the path of the host's
    python3 when `wants_python` (NoPython as find_python says it), in one command."""
    probe = probe_script(transport.run_dir_base)
    if not wants_python:
        return transport.run(probe, timeout=timeout).text(), None
    return split_python_lookup(transport.name, transport.run(with_python_lookup(probe), timeout=timeout))


def put_run_files(transport: Transport, files: list[tuple[bytes, str, int]]) -> bool:
    """The run's uploads; True when they still need the check on the host (SSHTransport.put_files_unchecked:
    the start command checks them), False when they were checked already or need none (the local host)."""
    unchecked = getattr(transport, "put_files_unchecked", None)
    if unchecked is not None:
        return bool(unchecked(files))
    put_files = getattr(transport, "put_files", None)
    if put_files is not None:
        put_files(files)
        return False
    for data, remote_path, mode in files:
        transport.put_bytes(data, remote_path, mode=mode)
    return False



def start_checked(transport: Transport, script: str, stdin: bytes | None, uploads: list[tuple[bytes, str]],
                  unchecked: bool, timeout: float) -> CommandResult:
    """Run the start script; with `unchecked` uploads (data, remote path) it checks them on the host first, in
    the same command, and starts nothing unless each arrived whole (RemoteCommandError names the first that
    did not)."""
    if not unchecked:
        return transport.run(script, timeout=timeout, stdin=stdin)
    result = transport.run(guard_script(uploads) + script, timeout=timeout, stdin=stdin)
    found = guard_problem(result.text(), uploads, transport.name)
    if found is None:
        return result
    verdict, problem = found
    if problem or verdict != "unverified":
        raise RemoteCommandError(problem or f"{transport.name}: the uploads could not be checked: "
                                            f"{result.error_text() or verdict}")
    # no SHA-256 tool on the host: the sizes and cksum CRCs it printed matched here, so start now
    return transport.run(script, timeout=timeout, stdin=stdin)
