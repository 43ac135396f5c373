"""Benchbay reads ssh configs as OpenSSH does: each config is compared with the real `ssh -G`.

HostName, User, Port and ProxyJump come from `ssh -G -F CONFIG NAME`; the IdentityFile list
as ssh expands it comes from `ssh -v` (it prints "identity file PATH" before connecting; a
ProxyCommand of `true` keeps it off the network). HOME is a temporary directory, so relative
Includes resolve under it as they do for ssh.
"""
from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from remote.errors import ConnectError
from remote.hostspec import HostSpec
from remote.sshconfig import SSHConfigFile

SSH = shutil.which("ssh")
ME = pwd.getpwuid(os.getuid()).pw_name
DEFAULT_KEYS = {"id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_xmss", "id_dsa"}

pytestmark = pytest.mark.skipif(SSH is None and not os.environ.get("CI"), reason="OpenSSH client not installed")

# name -> (files relative to HOME, with CONFIG as the main file; host names to resolve)
CASES: dict[str, tuple[dict[str, str], list[str]]] = {
    "first value wins, keywords in any case": ({
        "CONFIG": """\
HOSTNAME global.example
Host web1
  hostname second.example
  PORT 2201
  user alice
  Port 2202
Host *
  User bob
  IdentityFile ~/.ssh/id_all
""",
    }, ["web1", "other"]),
    "comments, quotes and = separators": ({
        "CONFIG": """\
Host lab # the lab box
  Port 2301 # lab
  HostName 192.0.2.55 # note
  User = "ops"
  IdentityFile "~/.ssh/my key"
Host eq
  Port=2302
  HostName\t=\teq.example
  User=eq-user
  IdentityFile=~/.ssh/eq\\ key
# a comment line
   # an indented comment
""",
    }, ["lab", "eq"]),
    "Include relative, absolute, glob, inside a block": ({
        "CONFIG": """\
Include conf.d/*.conf
Host outer
  Include ABSOLUTE/inner.conf
  User outer-user
Host *
  Port 2400
""",
        ".ssh/conf.d/a.conf": "Host inc-a\n  HostName a.included\n",
        ".ssh/conf.d/b.conf": "Host inc-b\n  User b-user\n  Include nested.conf\n",
        ".ssh/conf.d/skip.txt": "Host inc-a\n  User never\n",
        ".ssh/nested.conf": "IdentityFile ~/.ssh/nested_key\n",
        "elsewhere/inner.conf": "HostName inner.example\nHost inc-inner\n  User inner-user\n",
    }, ["inc-a", "inc-b", "outer", "inc-inner"]),
    "Match host sees HostName with %h expanded": ({
        "CONFIG": """\
Host web*
  HostName %h.Corp.Example
Match host web1.corp.example
  User matched
Match originalhost web2
  Port 2500
Match host *.corp.example !host web2.corp.example
  IdentityFile ~/.ssh/corp_%h
""",
    }, ["web1", "web2", "db"]),
    "Match user, localuser, all": ({
        "CONFIG": f"""\
Host u1
  User admin
Match user admin
  Port 2600
Match localuser {ME},nobody-else
  IdentityFile ~/.ssh/local_%u
Match !localuser {ME}
  Port 2699
Match all
  User fallback
""",
    }, ["u1", "u2"]),
    "Match final reads the file again with the HostName": ({
        "CONFIG": """\
Host short
  HostName long.example
Host long.example
  User final-user
Match final host long.example
  Port 2700
""",
    }, ["short", "long.example"]),
    "no second pass without Match final": ({
        "CONFIG": """\
Match host real.example
  User should-not-apply
Host alias
  HostName real.example
Host real.example
  Port 2750
""",
    }, ["alias", "real.example"]),
    "tokens in IdentityFile": ({
        "CONFIG": """\
Host tok*
  HostName %h.Example
  User tokuser
  Port 2800
  IdentityFile ~/.ssh/id_%h_%p_%r_%u_%n_%L_%l_%d_%i_%k_%C_%%_${HOME}_${BB_CONFIG_TEST}
  IdentityFile %d/.ssh/second
""",
    }, ["tok1", "TOK2"]),
    "patterns: wildcards, negation, case": ({
        "CONFIG": """\
Host *.example.com !secret.example.com
  User wild
Host web?
  Port 2901
Host WEB1
  Port 2902
Host a,b
  User comma
""",
    }, ["x.example.com", "secret.example.com", "web1", "WEB1", "web12", "a"]),
    "ProxyJump and ProxyCommand, first wins": ({
        "CONFIG": """\
Host j1
  ProxyJump ops@bastion:2200,second
Host j2
  ProxyCommand nc %h %p
  ProxyJump ignored
Host j3
  ProxyJump none
Host j4
  ProxyJump bastion # with a comment
Host *
  ProxyJump default-jump
""",
    }, ["j1", "j2", "j3", "j4", "j5"]),
    "Match exec with tokens": ({
        "CONFIG": """\
Host exec*
  HostName %h.example
Match exec "test %h = exec1.example && test %n = exec1 && test %r = %u"
  User exec-user
Match !exec "exit 0"
  Port 2950
""",
    }, ["exec1", "exec2"]),
    "IdentityFile accumulates without repeats": ({
        "CONFIG": """\
Host k
  IdentityFile ~/.ssh/k1
  IdentityFile ~/.ssh/k2
Host *
  IdentityFile ~/.ssh/k1
  IdentityFile ~/.ssh/k3
""",
    }, ["k", "other"]),
}

# Configs ssh refuses: Benchbay must refuse them too, with the line number.
REFUSED = {
    "extra argument": ("Host x\n  Port 22 extra\n", "line 2"),
    "bad port in another block": ("Host y\n  Port seventy\nHost x\n  User u\n", "line 2"),
    "unclosed quote": ('Host x\n  User "open\n', "line 2"),
    "Match without criteria": ("Match host\n  User u\n", "line 1"),
    "unknown token": ("Host x\n  IdentityFile ~/.ssh/%Q\n", "%Q"),
}


def _write_case(home: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = home / ("ssh_config" if relative == "CONFIG" else relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("ABSOLUTE", str(home / "elsewhere")))
    return home / "ssh_config"


def _ssh_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "BB_CONFIG_TEST": "env-value"}


def ssh_g(config: Path, name: str, home: Path) -> dict[str, list[str]]:
    done = subprocess.run(
        [SSH, "-G", "-F", str(config), name], capture_output=True, text=True, env=_ssh_env(home),
        stdin=subprocess.DEVNULL, timeout=20, check=True,
    )
    values: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        values.setdefault(key, []).append(value)
    return values


def ssh_identity_files(config: Path, name: str, home: Path) -> list[str]:
    command = [SSH, "-v", "-F", str(config), "-o", "ProxyCommand=true", "-o", "BatchMode=yes", name]
    done = subprocess.run(command, capture_output=True, text=True, env=_ssh_env(home),
                          stdin=subprocess.DEVNULL, timeout=20, check=False)
    found = re.findall(r"debug1: identity file (.*) type -?\d+", done.stderr)
    assert found, done.stderr
    return [path for path in found if not path.endswith("-cert")]


def _benchbay(config: Path, name: str) -> dict:
    return SSHConfigFile(config).lookup(name)


@pytest.mark.parametrize("case", sorted(CASES))
def test_resolution_agrees_with_ssh(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files, names = CASES[case]
    home = tmp_path / "home"
    config = _write_case(home, files)
    for key, value in _ssh_env(home).items():
        monkeypatch.setenv(key, value)
    for name in names:
        ours = _benchbay(config, name)
        theirs = ssh_g(config, name, home)
        assert ours["hostname"] == theirs["hostname"][0], (name, "hostname")
        assert ours["user"] == theirs["user"][0], (name, "user")
        assert ours["port"] == theirs["port"][0], (name, "port")
        assert ours.get("proxyjump") == (theirs["proxyjump"][0] if "proxyjump" in theirs else None), (name, "jump")
        ssh_keys = ssh_identity_files(config, name, home)
        if ours["identityfile"]:
            assert ours["identityfile"] == ssh_keys, (name, "identityfile")
        else:  # nothing configured: ssh falls back to its default key names, Benchbay to paramiko's
            assert {os.path.basename(path) for path in ssh_keys} == DEFAULT_KEYS, name


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_configs_ssh_refuses_are_refused(case: str, tmp_path: Path) -> None:
    text, where = REFUSED[case]
    config = tmp_path / "ssh_config"
    config.write_text(text)
    refused = subprocess.run([SSH, "-G", "-F", str(config), "x"], capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=20)
    if "%" in where:  # ssh -G prints IdentityFile unexpanded; expanding it is what fails
        refused = subprocess.run([SSH, "-v", "-F", str(config), "-o", "ProxyCommand=true", "x"],
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=20)
    assert refused.returncode != 0
    with pytest.raises(ConnectError, match=re.escape(where)) as raised:
        _benchbay(config, "x")
    assert "\n" not in str(raised.value)


def test_include_loop_is_refused_quickly(tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text(f"Include {config} {config}\nHost x\n  User u\n")
    with pytest.raises(ConnectError, match="does a file include itself"):
        _benchbay(config, "x")


def test_case_3_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases of the issue: an Included host exists, an inline comment is no bad Port."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    config = _write_case(home, {
        "CONFIG": "Include hosts.d/*\nHost lab\n  Port 2301 # lab\n  HostName 192.0.2.55 # rack 4\n",
        ".ssh/hosts.d/db": "Host db1\n  HostName 192.0.2.60\n  User dba\n",
    })
    ssh_config = SSHConfigFile(config)
    assert "db1" in ssh_config.aliases()
    assert ssh_config.lookup("db1")["hostname"] == "192.0.2.60"
    lab = ssh_config.lookup("lab")
    assert (lab["hostname"], lab["port"]) == ("192.0.2.55", "2301")


def test_match_user_sees_the_login_user_as_ssh_l_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ssh -l USER NAME` sets the user before the config is read, so `Match user` tests it: a host
    with a user of its own must go where `ssh -G -l USER NAME` says, not where `ssh -G NAME` does."""
    home = tmp_path / "home"
    config = _write_case(home, {
        "CONFIG": "Match user admin\n  HostName admin-door.example\n  Port 2222\n"
                  "Host db1\n  HostName db1.example\n  User dba\n",
    })
    for key, value in _ssh_env(home).items():
        monkeypatch.setenv(key, value)
    done = subprocess.run([SSH, "-G", "-F", str(config), "-l", "admin", "db1"], capture_output=True, text=True,
                          env=_ssh_env(home), stdin=subprocess.DEVNULL, timeout=20, check=True)
    theirs = dict(line.partition(" ")[::2] for line in done.stdout.splitlines())
    resolved = SSHConfigFile(config).resolve(HostSpec(name="db1", user="admin"))
    assert (resolved.address, resolved.port, resolved.user) == (
        theirs["hostname"], int(theirs["port"]), theirs["user"])


@pytest.mark.parametrize(("name", "user"), [("db1;touch PWNED", ""), ("db1", "u;touch PWNED"), ("$(touch PWNED)", "")])
def test_shell_metacharacters_in_names_are_refused_as_ssh_does(
    name: str, user: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Match exec` runs a shell command with %h/%n/%r in it: ssh (CVE-2023-51385) refuses a host or
    user name with shell metacharacters before reading the config; so must Benchbay."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "ssh_config"
    config.write_text('Match exec "true %n %h %r"\n  Port 2222\n')
    command = [SSH, "-G", "-F", str(config), *(["-l", user] if user else []), name]
    refused = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=20)
    assert refused.returncode != 0 and "invalid characters" in refused.stderr
    with pytest.raises(ConnectError, match="invalid characters") as raised:
        SSHConfigFile(config).resolve(HostSpec(name=name, user=user))
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "PWNED").exists()
