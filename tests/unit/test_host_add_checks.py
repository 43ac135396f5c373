"""`host add` refuses at once the addresses, users and key files every later connection would refuse,
with the rules those connections use, in one line; what a connection takes, it takes."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from app.cli import main
from remote.connect import _load_key
from remote.errors import AuthError
from remote.sshconfig import ConfigError, SSHConfigFile
from remote.tcp import DnsError, resolve_address


def _stored_hosts(capsys) -> list[str]:
    assert main(["host", "list", "--json"]) == 0
    return [h["name"] for h in json.loads(capsys.readouterr().out)]


@pytest.mark.parametrize("address, words", [
    ("bad host", "contains invalid characters (ssh refuses it too)"),
    ("web;reboot", "contains invalid characters (ssh refuses it too)"),
    ("999.1.1.1", "is not an IPv4 address"),
    ("a..b", "is not a host name"),
    ("x" * 64 + ".example.org", "is not a host name"),
    ("[::1]", "without brackets"),
    ("root@web1", "give the user on its own (User, --user)"),
    ("web1:2222", "give the port on its own (Port, --port)"),
    ("fe80::1::2", "is not an IPv6 address"),
])
def test_addresses_no_connection_could_use_are_refused(cli_env, capsys, address: str, words: str) -> None:
    assert main(["host", "add", "h1", "--address", address, "--user", "root"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("benchbay: host h1: ") and words in err, err
    assert "h1" not in _stored_hosts(capsys)


@pytest.mark.parametrize("address", ["bad host", "web;reboot", "-oProxyCommand=x", "a..b"])
def test_a_later_connection_refuses_the_same_addresses(address: str, tmp_path: Path) -> None:
    """The door's rules are the later ones: ssh's name check, or the resolver (which cannot even encode
    these names: no lookup leaves the machine)."""
    config = SSHConfigFile(tmp_path / "none")
    try:
        config.lookup(address, "root")
    except ConfigError:
        return
    with pytest.raises(DnsError):
        resolve_address(address, 22, 5.0)


@pytest.mark.parametrize("user, words", [
    ("root;id", "contains invalid characters (ssh refuses it too)"),
    ("-oProxyCommand", "contains invalid characters"),
    ("ad\\", "contains invalid characters"),
    ("a\x01", "contains control characters"),
])
def test_users_ssh_refuses_are_refused(cli_env, capsys, user: str, words: str, tmp_path: Path) -> None:
    assert main(["host", "add", "h1", "--address", "127.0.0.1", f"--user={user}"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err, err
    assert "h1" not in _stored_hosts(capsys)
    with pytest.raises(ConfigError, match=words.split(" (")[0]):
        SSHConfigFile(tmp_path / "none").lookup("127.0.0.1", user)   # what a connection says later


def test_key_files_a_connection_cannot_use_are_refused(cli_env, capsys, tmp_path: Path) -> None:
    public = tmp_path / "id.pub"
    public.write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG3 me@laptop\n")
    for key, words in ((tmp_path / "missing", "cannot read key file"), (tmp_path, "cannot read key file"),
                       (public, "not a private key Benchbay can read")):
        assert main(["host", "add", "h1", "--address", "127.0.0.1", "--key", str(key)]) == 1
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and words in err, err
        with pytest.raises(AuthError, match=words):
            _load_key(str(key), None)
    assert _stored_hosts(capsys) == ["local"]


def test_what_a_connection_takes_is_taken(cli_env, capsys, tmp_path: Path) -> None:
    plain, locked = tmp_path / "id_plain", tmp_path / "id_locked"
    for path, passphrase in ((plain, ""), (locked, "secret words")):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", str(path)], check=True)
    hosts = [("a1", ["--address", "db.example.org", "--user", "deploy"]),
             ("a2", ["--address", "::1", "--key", str(plain)]),
             ("a3", ["--address", "127.0.0.1", "--user", "svc.backup", "--key", str(locked)]),
             ("a4", ["--address", "10.0.0.7", "--port", "2222"])]
    for name, args in hosts:
        assert main(["host", "add", name, *args]) == 0, capsys.readouterr().err
        capsys.readouterr()
    assert _stored_hosts(capsys) == ["local", "a1", "a2", "a3", "a4"]
    # edit goes through the same door
    assert main(["host", "edit", "a1", "--address", "a1:22"]) == 1
    assert "give the port on its own (Port, --port)" in capsys.readouterr().err
