"""SSHTransport against real sshd: commands, streams, timeouts, quoting, SFTP."""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from remote.connect import connect
from remote.errors import CommandTimeout, ConnectError, RemoteCommandError
from remote.ssh_transport import SSHTransport
from tests.fixtures.sshd import SshTestHost, known_hosts_for

pytestmark = pytest.mark.integration

MB = 1024 * 1024


@pytest.fixture(scope="module")
def transport(ssh_hosts: list[SshTestHost], tmp_path_factory: pytest.TempPathFactory) -> Iterator[SSHTransport]:
    host = ssh_hosts[0]
    known = known_hosts_for(tmp_path_factory.mktemp("known"), host)
    with connect(host.spec(), known_hosts=known, timeout=5) as opened:
        yield opened


@pytest.fixture
def run_dir(transport: SSHTransport) -> Iterator[str]:
    path = transport.make_private_dir()
    yield path
    transport.remove_dir(path)


def test_exit_status_and_streams(transport: SSHTransport) -> None:
    result = transport.run("echo out; echo err >&2; exit 7", timeout=20)
    assert (result.exit_status, result.stdout, result.stderr) == (7, b"out\n", b"err\n")
    assert not result.ok
    assert transport.run("true", timeout=20).ok


def test_a_megabyte_on_each_stream_at_once(transport: SSHTransport) -> None:
    # Both writers run together: reading only one stream at a time would deadlock here.
    command = "head -c 1048576 /dev/zero | tr '\\0' e >&2 & head -c 1048576 /dev/zero | tr '\\0' o; wait"
    result = transport.run(command, timeout=60)
    assert result.ok
    assert result.stdout == b"o" * MB
    assert result.stderr == b"e" * MB


def test_stdin_is_sent_and_closed(transport: SSHTransport) -> None:
    data = bytes(range(256)) * (3 * MB // 256)
    result = transport.run("cat; echo done >&2", timeout=60, stdin=data)
    assert result.stdout == data
    assert result.stderr == b"done\n"


def test_stdin_the_command_does_not_read(transport: SSHTransport) -> None:
    result = transport.run("echo quick", timeout=20, stdin=b"x" * (4 * MB))
    assert (result.exit_status, result.stdout) == (0, b"quick\n")


def test_without_stdin_the_command_sees_eof(transport: SSHTransport) -> None:
    result = transport.run("cat; echo after", timeout=20)
    assert result.stdout == b"after\n"


def test_timeout_is_enforced_and_the_connection_survives(transport: SSHTransport) -> None:
    started = time.monotonic()
    with pytest.raises(CommandTimeout, match=f"command did not finish within 1 s on {transport.name}"):
        transport.run("sleep 4", timeout=1)  # short: sshd ignores the TERM signal for root logins
    assert time.monotonic() - started < 3
    assert transport.run(["echo", "still here"], timeout=20).text() == "still here\n"


def test_a_command_that_keeps_answering_is_not_cut_at_its_limit(transport: SSHTransport) -> None:
    # 6 s of work, a line every 0.2 s, under a 3 s limit: the limit counts from the last answer
    result = transport.run("i=0; while [ $i -lt 30 ]; do echo $i; sleep 0.2; i=$((i + 1)); done", timeout=3)
    assert (result.exit_status, result.text().split()) == (0, [str(i) for i in range(30)])


def test_a_command_that_ends_the_shell_fails_alone(transport: SSHTransport) -> None:
    with pytest.raises(RemoteCommandError, match="the command shell ended while a command ran"):
        transport.run("echo before; kill -9 $$", timeout=20)     # $$: the connection's shell itself
    assert transport.run(["echo", "next"], timeout=20).text() == "next\n"     # in a new shell


def test_arguments_arrive_as_literal_words(transport: SSHTransport, run_dir: str) -> None:
    canary = f"{run_dir}/x"
    transport.put_bytes(b"keep me", canary)
    words = ["a b; rm -rf x", f"$(rm -f {canary})", "`id`", "'", '"', "*", "new\nline", "-n", ""]
    result = transport.run(["sh", "-c", 'cd "$1" && shift && printf "%s\\0" "$@"', "sh", run_dir, *words],
                           timeout=20)
    assert result.ok, result.error_text()
    assert result.stdout.split(b"\0")[:-1] == [word.encode() for word in words]
    assert transport.get_bytes(canary) == b"keep me"


def test_put_and_get_bytes(transport: SSHTransport, run_dir: str) -> None:
    data = bytes(range(256)) * 1000
    path = f"{run_dir}/blob.bin"
    transport.put_bytes(data, path, mode=0o600)
    assert transport.run(["stat", "-c", "%a", path], timeout=20).text().strip() == "600"
    assert transport.get_bytes(path) == data
    assert transport.get_bytes(path, offset=1000) == data[1000:]
    assert transport.get_bytes(path, offset=1000, limit=10) == data[1000:1010]
    assert transport.get_bytes(path, offset=len(data)) == b""
    transport.put_bytes(b"#!/bin/sh\necho ran\n", f"{run_dir}/tool", mode=0o700)
    assert transport.run([f"{run_dir}/tool"], timeout=20).text() == "ran\n"


def test_get_bytes_of_a_missing_file(transport: SSHTransport, run_dir: str) -> None:
    with pytest.raises(FileNotFoundError):
        transport.get_bytes(f"{run_dir}/not-yet-written")
    with pytest.raises(RemoteCommandError, match="no such file"):
        transport.get_bytes(f"{run_dir}/not-yet-written")
    with pytest.raises(RemoteCommandError, match="no such directory"):
        transport.put_bytes(b"x", f"{run_dir}/missing-dir/file")


def test_nopython_host_has_a_shell_but_no_python(ssh_host_nopython: SshTestHost, tmp_path: Path) -> None:
    host = ssh_host_nopython
    with connect(host.spec(), known_hosts=known_hosts_for(tmp_path, host), timeout=5) as nopython:
        assert not nopython.run("command -v python3", timeout=20).ok
        path = nopython.make_private_dir()
        nopython.put_bytes(b"data", f"{path}/f")
        assert nopython.run(["cat", f"{path}/f"], timeout=20).text() == "data"
        nopython.remove_dir(path)


def test_closed_transport_says_so(ssh_host: SshTestHost, tmp_path: Path) -> None:
    opened = connect(ssh_host.spec(), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)
    opened.close()
    with pytest.raises(ConnectError, match="closed"):
        opened.run("true")


def test_connection_lost_during_a_command(ssh_host: SshTestHost, tmp_path: Path) -> None:
    opened = connect(ssh_host.spec(), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)
    try:
        with pytest.raises(ConnectError, match="lost"):
            opened.run("kill -9 $PPID; sleep 5", timeout=20)  # the sshd serving this connection
        with pytest.raises(ConnectError, match="closed"):
            opened.run("true")
    finally:
        opened.close()
