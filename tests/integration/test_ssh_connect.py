"""connect() against real sshd: authentication, network failures, jump hosts, ~/.ssh/config."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from remote.connect import connect
from remote.errors import (
    AuthError,
    ConnectError,
    ConnectionRefused,
    ConnectTimeout,
    DnsError,
    PasswordRequired,
    UnknownHostKey,
)
from remote.hostspec import AUTH_AGENT, AUTH_AUTO, AUTH_PASSWORD, LOCAL_HOST, HostSpec
from remote.ssh_transport import SSHTransport
from remote.sshconfig import SSHConfigFile
from tests.fixtures.sshd import SSH_KEYGEN, SshTestHost, free_port, known_hosts_for

pytestmark = pytest.mark.integration


@pytest.fixture
def no_user_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ssh-agent and an empty ~/.ssh, so "auto" finds only what the test gives it."""
    home = tmp_path / "user-home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


def server_side(transport) -> str:
    """'ADDRESS PORT' of the sshd the command ran under."""
    return " ".join(transport.run("echo $SSH_CONNECTION", timeout=20).text().split()[2:4])


def test_key_login_runs_a_command(ssh_host: SshTestHost, tmp_path: Path) -> None:
    with connect(ssh_host.spec(), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5) as transport:
        assert isinstance(transport, SSHTransport)
        assert transport.name == ssh_host.name
        assert server_side(transport) == f"{ssh_host.address} {ssh_host.port}"


def test_unauthorized_key_is_an_auth_error(ssh_host: SshTestHost, tmp_path: Path) -> None:
    spec = ssh_host.spec(key_path=str(ssh_host.wrong_client_key_path))
    with pytest.raises(AuthError) as caught:
        connect(spec, known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)
    assert not isinstance(caught.value, PasswordRequired)
    assert f"{ssh_host.user}@{ssh_host.name}: authentication failed" in str(caught.value)
    assert str(ssh_host.wrong_client_key_path) in str(caught.value)


def test_wrong_password_is_an_auth_error(ssh_host: SshTestHost, tmp_path: Path) -> None:
    spec = ssh_host.spec(auth=AUTH_PASSWORD, key_path="")
    with pytest.raises(AuthError, match=r"authentication failed \(password\)") as caught:
        connect(spec, known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5, password="not-the-password")
    assert not isinstance(caught.value, PasswordRequired)


def test_password_auth_without_password_asks_for_one(ssh_host: SshTestHost, tmp_path: Path) -> None:
    spec = ssh_host.spec(auth=AUTH_PASSWORD, key_path="")
    with pytest.raises(PasswordRequired):
        connect(spec, known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)


def test_host_key_is_checked_before_a_password_is_asked(ssh_host: SshTestHost, tmp_path: Path) -> None:
    spec = ssh_host.spec(auth=AUTH_PASSWORD, key_path="")
    with pytest.raises(UnknownHostKey):
        connect(spec, known_hosts=known_hosts_for(tmp_path), timeout=5)


def test_auto_without_usable_keys_asks_for_a_password(
    ssh_host: SshTestHost, tmp_path: Path, no_user_keys: Path,
) -> None:
    spec = ssh_host.spec(auth=AUTH_AUTO, key_path="")
    with pytest.raises(PasswordRequired):
        connect(spec, known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)


def test_auto_uses_the_key_path(ssh_host: SshTestHost, tmp_path: Path, no_user_keys: Path) -> None:
    with connect(ssh_host.spec(auth=AUTH_AUTO), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5):
        pass


def test_agent_auth_without_agent_says_so(ssh_host: SshTestHost, tmp_path: Path, no_user_keys: Path) -> None:
    with pytest.raises(AuthError, match="SSH_AUTH_SOCK is not set"):
        connect(ssh_host.spec(auth=AUTH_AGENT), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)


def test_missing_key_file_is_named(ssh_host: SshTestHost, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-key"
    with pytest.raises(AuthError, match=f"cannot read key file {missing}"):
        connect(ssh_host.spec(key_path=str(missing)), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)


def test_encrypted_key_file_is_named(ssh_host: SshTestHost, tmp_path: Path) -> None:
    key = tmp_path / "encrypted_ed25519"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "secret", "-f", str(key)], check=True)
    with pytest.raises(AuthError, match=f"key file {key} is encrypted"):
        connect(ssh_host.spec(key_path=str(key)), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=5)


def test_refused_port_fails_fast(tmp_path: Path) -> None:
    port = free_port("127.0.0.16")
    started = time.monotonic()
    with pytest.raises(ConnectionRefused, match=f"127.0.0.16:{port} refused the connection"):
        connect(HostSpec(name="closed", address="127.0.0.16", port=port), known_hosts=known_hosts_for(tmp_path))
    assert time.monotonic() - started < 2


def test_silent_port_times_out_within_the_bound(tarpit, tmp_path: Path) -> None:
    spec = HostSpec(name="tarpit", address=tarpit.address, port=tarpit.port)
    started = time.monotonic()
    with pytest.raises(ConnectTimeout, match="accepted the connection but sent no SSH banner within 2 s"):
        connect(spec, known_hosts=known_hosts_for(tmp_path), timeout=2)
    assert time.monotonic() - started < 2 + 2


def test_unknown_name_is_a_dns_error_within_the_bound(tmp_path: Path) -> None:
    spec = HostSpec(name="nowhere", address="nonexistent.invalid", port=22)
    started = time.monotonic()
    with pytest.raises(DnsError, match="cannot resolve nonexistent.invalid"):
        connect(spec, known_hosts=known_hosts_for(tmp_path), timeout=3)
    assert time.monotonic() - started < 3 + 1


def _inventory(*hosts: SshTestHost, **changes):
    specs = {host.name: host.spec(**changes) for host in hosts}
    return specs.get


def test_proxy_jump_through_an_inventory_host(ssh_hosts: list[SshTestHost], tmp_path: Path) -> None:
    jump, target = ssh_hosts
    known = known_hosts_for(tmp_path, jump, target)
    spec = target.spec(jump=jump.name)
    with connect(spec, known_hosts=known, timeout=5, resolve_jump=_inventory(jump)) as transport:
        assert server_side(transport) == f"{target.address} {target.port}"
        assert transport.run(["echo", "through the jump"], timeout=20).text() == "through the jump\n"


def test_proxy_jump_checks_the_target_key(ssh_hosts: list[SshTestHost], tmp_path: Path) -> None:
    jump, target = ssh_hosts
    with pytest.raises(UnknownHostKey) as caught:
        connect(target.spec(jump=jump.name), known_hosts=known_hosts_for(tmp_path, jump), timeout=5,
                resolve_jump=_inventory(jump))
    assert caught.value.known_as == target.host_id
    assert caught.value.fingerprint == target.host_key_fingerprint


def test_proxy_jump_checks_the_jump_host_key(ssh_hosts: list[SshTestHost], tmp_path: Path) -> None:
    jump, target = ssh_hosts
    with pytest.raises(UnknownHostKey) as caught:
        connect(target.spec(jump=jump.name), known_hosts=known_hosts_for(tmp_path, target), timeout=5,
                resolve_jump=_inventory(jump))
    assert caught.value.known_as == jump.host_id
    assert "jump host" in str(caught.value)


def test_jump_host_auth_failure_says_jump_host(ssh_hosts: list[SshTestHost], tmp_path: Path) -> None:
    jump, target = ssh_hosts
    lookup = _inventory(jump, key_path=str(jump.wrong_client_key_path))
    with pytest.raises(AuthError, match=f"jump host {jump.name} .*authentication failed"):
        connect(target.spec(jump=jump.name), known_hosts=known_hosts_for(tmp_path, jump, target), timeout=5,
                resolve_jump=lookup)


def test_jump_host_that_cannot_reach_the_target(ssh_hosts: list[SshTestHost], tmp_path: Path) -> None:
    jump, target = ssh_hosts
    spec = target.spec(jump=jump.name, port=free_port(target.address))
    with pytest.raises(ConnectError, match=f"jump host {jump.name}"):
        connect(spec, known_hosts=known_hosts_for(tmp_path, jump), timeout=5, resolve_jump=_inventory(jump))


def _write_config(path: Path, text: str) -> SSHConfigFile:
    path.write_text(text)
    return SSHConfigFile(path)


def test_ssh_config_alias_resolves_and_connects(
    ssh_hosts: list[SshTestHost], tmp_path: Path, no_user_keys: Path,
) -> None:
    target = ssh_hosts[1]
    config = _write_config(tmp_path / "ssh_config", (
        "Host benchalias\n"
        f"    HostName {target.address}\n    User {target.user}\n    Port {target.port}\n"
        f"    IdentityFile {target.client_key_path}\n"
    ))
    known = known_hosts_for(tmp_path, target)
    with connect(HostSpec(name="benchalias"), known_hosts=known, ssh_config=config, timeout=5) as transport:
        assert server_side(transport) == f"{target.address} {target.port}"


def test_proxy_jump_written_as_user_host_port(
    ssh_hosts: list[SshTestHost], tmp_path: Path, no_user_keys: Path,
) -> None:
    jump, target = ssh_hosts
    # The jump host is not in the inventory: its key file comes from the ssh config, as with ssh -J.
    config = _write_config(tmp_path / "ssh_config", f"Host {jump.address}\n    IdentityFile {jump.client_key_path}\n")
    spec = target.spec(jump=f"{jump.user}@{jump.address}:{jump.port}")
    known = known_hosts_for(tmp_path, jump, target)
    with connect(spec, known_hosts=known, ssh_config=config, timeout=5) as transport:
        assert server_side(transport) == f"{target.address} {target.port}"


def test_proxy_jump_from_ssh_config(ssh_hosts: list[SshTestHost], tmp_path: Path, no_user_keys: Path) -> None:
    jump, target = ssh_hosts
    config = _write_config(tmp_path / "ssh_config", (
        f"Host target\n    HostName {target.address}\n    Port {target.port}\n"
        f"    ProxyJump {jump.user}@{jump.address}:{jump.port}\n"
        f"Host *\n    User {target.user}\n    IdentityFile {target.client_key_path}\n"
    ))
    known = known_hosts_for(tmp_path, jump, target)
    with connect(HostSpec(name="target"), known_hosts=known, ssh_config=config, timeout=5) as transport:
        assert server_side(transport) == f"{target.address} {target.port}"


def test_local_host_needs_no_ssh(tmp_path: Path) -> None:
    pytest.importorskip("remote.local_transport")
    with connect(LOCAL_HOST, known_hosts=known_hosts_for(tmp_path)) as transport:
        assert transport.run(["echo", "local"], timeout=20).text() == "local\n"


def test_an_address_family_the_system_lacks_is_skipped(
    ssh_host: SshTestHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kernel without IPv6 cannot even make an AF_INET6 socket; a name with both an IPv6 and an
    IPv4 address must still connect over IPv4, as ssh does (it tries the next address)."""
    import errno
    import socket

    from remote import tcp

    real_resolve, real_socket = tcp.resolve_address, socket.socket

    def both_families(name: str, port: int, timeout: float) -> list[tuple]:
        v6 = (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", port, 0, 0))
        return [v6, *real_resolve(name, port, timeout)]

    def no_ipv6(family: int = socket.AF_INET, *args, **kwargs):
        if family == socket.AF_INET6:
            raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")
        return real_socket(family, *args, **kwargs)

    class SocketModule:  # the socket module as remote.tcp sees it, on a system without IPv6
        socket = staticmethod(no_ipv6)

        def __getattr__(self, name: str):
            return getattr(socket, name)

    monkeypatch.setattr(tcp, "resolve_address", both_families)
    monkeypatch.setattr(tcp, "socket", SocketModule())
    transport = connect(ssh_host.spec(), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=15)
    try:
        assert transport.run("echo ok", timeout=20).text().strip() == "ok"
    finally:
        transport.close()
