"""Host key checks against real sshd: unknown, accepted, changed, key type negotiation."""
from __future__ import annotations

import socket
import stat
import subprocess
import threading
from pathlib import Path

import paramiko
import pytest

from remote.connect import connect, scan_host_key
from remote.errors import ConnectError, ConnectTimeout, HostKeyChanged, UnknownHostKey
from remote.hostkeys import KnownHosts, fetch_host_key, fingerprint_sha256
from tests.fixtures.sshd import SSH_KEYGEN, SshTestHost, known_hosts_for, ssh_keygen_fingerprint

pytestmark = pytest.mark.integration


def test_unknown_key_shows_the_ssh_keygen_fingerprint(ssh_host: SshTestHost, tmp_path: Path) -> None:
    with pytest.raises(UnknownHostKey) as caught:
        connect(ssh_host.spec(), known_hosts=known_hosts_for(tmp_path), timeout=5)
    error = caught.value
    assert error.fingerprint == ssh_keygen_fingerprint(ssh_host.host_key_path)
    assert error.key_type == "ssh-ed25519"
    assert error.known_as == ssh_host.host_id == f"[{ssh_host.address}]:{ssh_host.port}"
    assert error.key_blob == ssh_host.host_key().asbytes()
    assert error.fingerprint in str(error)


def test_accepted_key_lets_the_connection_through(ssh_host: SshTestHost, tmp_path: Path) -> None:
    known = known_hosts_for(tmp_path)
    with pytest.raises(UnknownHostKey) as caught:
        connect(ssh_host.spec(), known_hosts=known, timeout=5)
    error = caught.value
    known.add(error.known_as, paramiko.PKey.from_type_string(error.key_type, error.key_blob))
    assert stat.S_IMODE(known.own_path.stat().st_mode) == 0o600
    with connect(ssh_host.spec(), known_hosts=known, timeout=5) as transport:
        assert transport.run("true", timeout=20).ok


def test_changed_key_is_refused_and_trust_is_kept(fresh_ssh_host: SshTestHost, tmp_path: Path) -> None:
    host = fresh_ssh_host
    known = known_hosts_for(tmp_path, host)
    old_fingerprint = host.host_key_fingerprint
    with connect(host.spec(), known_hosts=known, timeout=5):
        pass
    stored = known.own_path.read_bytes()

    host.restart(new_host_key=True)
    with pytest.raises(HostKeyChanged) as caught:
        connect(host.spec(), known_hosts=known, timeout=5)
    assert caught.value.fingerprint == ssh_keygen_fingerprint(host.host_key_path) != old_fingerprint
    assert caught.value.expected_fingerprint == old_fingerprint
    assert known.own_path.read_bytes() == stored


def test_rsa_trusted_host_is_asked_for_its_rsa_key(ssh_host: SshTestHost, tmp_path: Path) -> None:
    # paramiko would negotiate ed25519 first; the trusted type must win, or this reads as "changed".
    known = known_hosts_for(tmp_path, ssh_host, rsa=True)
    with connect(ssh_host.spec(), known_hosts=known, timeout=5) as transport:
        assert transport.client.get_transport().get_remote_server_key() == ssh_host.rsa_host_key()


def test_only_another_key_type_trusted_is_a_change(ssh_host: SshTestHost, tmp_path: Path) -> None:
    known = known_hosts_for(tmp_path)
    known.add(ssh_host.host_id, paramiko.ECDSAKey.generate())  # the server has no ECDSA key
    with pytest.raises(HostKeyChanged):
        connect(ssh_host.spec(), known_hosts=known, timeout=5)


def test_hashed_entry_in_the_users_known_hosts(ssh_host: SshTestHost, tmp_path: Path) -> None:
    user_file = tmp_path / "user_known_hosts"
    key_line = Path(str(ssh_host.host_key_path) + ".pub").read_text().split()[:2]
    user_file.write_text(f"{ssh_host.host_id} {' '.join(key_line)}\n")
    subprocess.run([SSH_KEYGEN, "-H", "-f", str(user_file)], check=True, capture_output=True)
    assert user_file.read_text().startswith("|1|")
    before = user_file.read_bytes()
    known = KnownHosts(tmp_path / "own_known_hosts", user_path=user_file)
    with connect(ssh_host.spec(), known_hosts=known, timeout=5):
        pass
    assert user_file.read_bytes() == before
    assert not known.own_path.exists()


def test_fetch_host_key_without_login(ssh_host: SshTestHost) -> None:
    key = fetch_host_key(ssh_host.address, ssh_host.port, timeout=5)
    assert fingerprint_sha256(key.asbytes()) == ssh_keygen_fingerprint(ssh_host.host_key_path)
    rsa = fetch_host_key(ssh_host.address, ssh_host.port, timeout=5, preferred_types=["rsa-sha2-512"])
    assert fingerprint_sha256(rsa.asbytes()) == ssh_keygen_fingerprint(ssh_host.rsa_host_key_path)


def test_fetch_host_key_from_a_silent_port(tarpit) -> None:
    with pytest.raises(ConnectTimeout):
        fetch_host_key(tarpit.address, tarpit.port, timeout=1)


def test_fetch_host_key_from_a_port_that_hangs_up() -> None:
    with socket.create_server(("127.0.0.15", 0)) as listener:
        threading.Thread(target=lambda: listener.accept()[0].close(), daemon=True).start()
        with pytest.raises(ConnectError, match="closed the connection before the SSH banner"):
            fetch_host_key("127.0.0.15", listener.getsockname()[1], timeout=5)


def test_scan_host_key_through_a_jump_host(ssh_hosts: list[SshTestHost], tmp_path: Path) -> None:
    jump, target = ssh_hosts
    known = known_hosts_for(tmp_path, jump)
    host_id, key = scan_host_key(target.spec(jump=jump.name), known_hosts=known, timeout=5,
                                 resolve_jump={jump.name: jump.spec()}.get)
    assert (host_id, key) == (target.host_id, target.host_key())
    known.add(host_id, target.rsa_host_key())   # trusted for RSA: the scan asks for RSA first
    assert scan_host_key(target.spec(), known_hosts=known, timeout=5)[1] == target.rsa_host_key()
