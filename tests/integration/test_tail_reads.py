"""Tailing a growing file over SFTP with the file kept open (how a hundred runs are read cheaply)."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from remote.connect import connect
from remote.ssh_transport import RemoteFileNotFound, SSHTransport
from tests.fixtures.sshd import SshTestHost, known_hosts_for

pytestmark = pytest.mark.integration


@pytest.fixture
def transport(ssh_hosts: list[SshTestHost], tmp_path) -> Iterator[SSHTransport]:
    host = ssh_hosts[0]
    with connect(host.spec(), known_hosts=known_hosts_for(tmp_path, host), timeout=5) as opened:
        yield opened


def test_a_growing_file_is_read_from_each_offset_without_losing_or_repeating_bytes(transport) -> None:
    run_dir = transport.make_private_dir()
    path = f"{run_dir}/samples.raw"
    try:
        with pytest.raises(RemoteFileNotFound):
            transport.tail_bytes(path, 0)          # not written yet: as get_bytes says it
        transport.run(f"printf 'tick 1\\n' >> {path}", timeout=20)
        assert transport.tail_bytes(path, 0) == b"tick 1\n"
        assert transport.tail_bytes(path, 7) == b""     # nothing new
        transport.run(f"printf 'tick 2\\n' >> {path}", timeout=20)
        assert transport.tail_bytes(path, 7) == b"tick 2\n"    # the same open file sees it grow
        # more than one SFTP read's worth (32 KiB) arrives between two polls: all of it, in order
        transport.run(f"head -c 100000 /dev/zero | tr '\\0' x >> {path}", timeout=20)
        big = transport.tail_bytes(path, 14)
        assert big == b"x" * 100_000
        assert transport.tail_bytes(path, 14, limit=40_000) == b"x" * 40_000
        assert transport.tail_bytes(path, 0) == transport.get_bytes(path)
    finally:
        transport.remove_dir(run_dir)


def test_several_uploads_are_checked_by_one_command(transport, ssh_hosts) -> None:
    run_dir = transport.make_private_dir()
    files = [(b"#!/bin/sh\necho sampler\n", f"{run_dir}/sampler.sh", 0o700),
             (b"x" * 70_000, f"{run_dir}/agent.pyz", 0o600), (b'{"test": "idle"}', f"{run_dir}/spec.json", 0o600)]
    try:
        commands: list[str] = []
        run = transport.run

        def counted(command: str, *args, **kwargs):
            commands.append(command)
            return run(command, *args, **kwargs)

        # a connection's commands share one shell (no sshd session each): count what is sent instead
        transport.run = counted
        try:
            transport.put_files(files)
        finally:
            del transport.run
        assert len(commands) == 1   # one check for three files
        assert all(path in commands[0] for _data, path, _mode in files)
        for data, path, mode in files:
            assert transport.get_bytes(path) == data
            assert transport.run(f"stat -c %a {path}", timeout=20).text().strip() == oct(mode)[2:]
    finally:
        transport.remove_dir(run_dir)
