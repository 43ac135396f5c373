"""~/.ssh/config resolution: what the user set wins, the config fills the rest."""
from __future__ import annotations

import getpass
import os
from pathlib import Path

import pytest

from remote.errors import ConnectError
from remote.hostspec import HostSpec
from remote.sshconfig import SSHConfigFile, parse_jump

CONFIG = """\
# comment
Host web1 web1-alias
    HostName 192.0.2.10
    User deploy
    Port 2222
    IdentityFile ~/.ssh/web1_%h_%r
    ProxyJump bastion

Host bastion
    HostName bastion.example.com

Host db-*.example.com !db-test.example.com
    User dbadmin

Host "quoted name"
    Port 2200

Host noproxy
    ProxyJump none

Host *
    IdentityFile ~/.ssh/id_default
"""


@pytest.fixture
def config(tmp_path: Path) -> SSHConfigFile:
    path = tmp_path / "config"
    path.write_text(CONFIG)
    return SSHConfigFile(path)


def test_alias_fills_empty_fields(config: SSHConfigFile) -> None:
    resolved = config.resolve(HostSpec(name="web1"))
    home = os.path.expanduser("~")
    assert resolved.alias == "web1"
    assert (resolved.address, resolved.port, resolved.user) == ("192.0.2.10", 2222, "deploy")
    assert resolved.key_files == [f"{home}/.ssh/web1_192.0.2.10_deploy", f"{home}/.ssh/id_default"]
    assert resolved.proxy_jump == "bastion"


def test_explicit_fields_win(config: SSHConfigFile) -> None:
    spec = HostSpec(name="web1", address="198.51.100.7", port=22, user="me", key_path="~/k")
    resolved = config.resolve(spec)
    assert (resolved.address, resolved.port, resolved.user) == ("198.51.100.7", 22, "me")
    assert resolved.key_files[0] == os.path.expanduser("~/k")


def test_address_patterns_apply_when_the_name_is_no_alias(config: SSHConfigFile) -> None:
    resolved = config.resolve(HostSpec(name="my db", address="db-1.example.com"))
    assert resolved.user == "dbadmin"
    assert resolved.alias == "db-1.example.com"
    assert config.resolve(HostSpec(name="t", address="db-test.example.com")).user == getpass.getuser()


def test_unknown_name_is_its_own_address(config: SSHConfigFile) -> None:
    resolved = config.resolve(HostSpec(name="plain.example.org"))
    assert (resolved.address, resolved.port, resolved.user) == ("plain.example.org", 22, getpass.getuser())
    assert resolved.proxy_jump is None


def test_proxyjump_none(config: SSHConfigFile) -> None:
    assert config.resolve(HostSpec(name="noproxy")).proxy_jump is None


def test_bad_port_is_a_clear_error_for_every_host(tmp_path: Path) -> None:
    # ssh refuses the whole file, whichever host is asked for: so does Benchbay.
    path = tmp_path / "config"
    path.write_text("Host badport\n    Port seventy\nHost other\n    User u\n")
    for name in ("badport", "other"):
        with pytest.raises(ConnectError, match=r"line 2: bad Port 'seventy'"):
            SSHConfigFile(path).resolve(HostSpec(name=name))


def test_aliases_are_concrete_names_in_order(config: SSHConfigFile) -> None:
    assert config.aliases() == ["web1", "web1-alias", "bastion", "quoted name", "noproxy"]


def test_missing_file_is_empty(tmp_path: Path) -> None:
    config = SSHConfigFile(tmp_path / "nope")
    assert config.aliases() == []
    resolved = config.resolve(HostSpec(name="h", address="10.1.1.1", port=2022))
    assert (resolved.address, resolved.port, resolved.key_files) == ("10.1.1.1", 2022, [])


def test_unparsable_file_is_a_connect_error(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("Host x\n  =broken\n")
    with pytest.raises(ConnectError, match="line 2: no argument after keyword 'broken'"):
        SSHConfigFile(path).resolve(HostSpec(name="x"))


def test_parse_jump() -> None:
    assert parse_jump("bastion") == HostSpec(name="bastion")
    assert parse_jump("ops@bastion:2200") == HostSpec(name="bastion", user="ops", port=2200)
    assert parse_jump("ssh://ops@[2001:db8::1]:22") == HostSpec(name="2001:db8::1", user="ops", port=22)
    with pytest.raises(ConnectError):
        parse_jump("bastion:http")


def test_proxycommand_is_refused_not_bypassed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ssh db1` would go through the ProxyCommand; connecting straight to HostName instead may reach
    another machine (or none). Benchbay cannot run a ProxyCommand, so it says so in one line."""
    from remote import connect as connect_module
    from remote.hostkeys import KnownHosts

    path = tmp_path / "config"
    path.write_text("Host db1\n  HostName 10.9.9.9\n  ProxyCommand ssh -W %h:%p bastion\n"
                    "Host plain\n  HostName 10.9.9.8\n  ProxyCommand none\n")
    dialled: list[tuple[str, int]] = []

    def fake_open_tcp(address: str, port: int, timeout: float) -> None:
        dialled.append((address, port))
        raise ConnectError(f"cannot reach {address}:{port}")

    monkeypatch.setattr(connect_module, "open_tcp", fake_open_tcp)
    known = KnownHosts(tmp_path / "own", user_path=None)
    with pytest.raises(ConnectError, match="ProxyCommand") as raised:
        connect_module.connect(HostSpec(name="db1"), known_hosts=known, ssh_config=SSHConfigFile(path), timeout=2)
    assert dialled == [] and "\n" not in str(raised.value)
    with pytest.raises(ConnectError, match="cannot reach 10.9.9.8:22"):  # ProxyCommand none: a direct connection
        connect_module.connect(HostSpec(name="plain"), known_hosts=known, ssh_config=SSHConfigFile(path), timeout=2)
