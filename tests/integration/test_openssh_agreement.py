"""known_hosts as OpenSSH reads it: Benchbay's verdict compared with real `ssh` and `ssh-keygen -F`.

Each known_hosts file is tried twice against the same real sshd test host: once with
`ssh -o StrictHostKeyChecking=yes -o UserKnownHostsFile=FILE -o BatchMode=yes`, once with
Benchbay's connect(). The sshd holds a host certificate signed with `ssh-keygen -s`.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from app.cli import main
from remote.connect import connect
from remote.errors import HostKeyChanged, UnknownHostKey
from remote.hostkeys import KnownHosts
from remote.known_hosts_parse import hash_name, hosts_match, parse_line
from tests.fixtures.sshd import SSH_KEYGEN, SshdServer, SshTestHost, keygen

pytestmark = pytest.mark.integration
SSH = shutil.which("ssh") or "/usr/bin/ssh"

# name -> (known_hosts text, which host, what Benchbay must say if it differs from ssh on purpose)
# {hp} "[127.0.0.41]:port", {h} the bare address, {ed}/{rsa} the host's keys ("type base64"),
# {other} an unrelated ed25519 key, {ca} the CA that signed the host certificate, {ca2} another CA.
KNOWN_HOSTS = {
    "exact [host]:port line": ("{hp} {ed}\n", "good", None),
    "bare host line for a port login": ("{h} {ed}\n", "good", None),
    "bare host line with another key": ("{h} {other}\n", "good", None),
    "[host]:port changed, bare host right": ("{hp} {other}\n{h} {ed}\n", "good", None),
    "repeated spaces": ("{hp}   {ed_spaced}   comment\n", "good", None),
    "tabs": ("\t{hp}\t{ed_tabbed}\n", "good", None),
    "RSA key only": ("{hp} {rsa}\n", "good", None),
    "another key of another type": ("{hp} {other_rsa}\n", "good", None),
    "hashed [host]:port": ("# hashed\n{hashed_hp} {ed}\n", "good", None),
    "hashed name in a comma list": ("{hashed_hp},other {ed}\n", "good", None),
    "wildcards": ("[127.0.0.4?]:* {ed}\n", "good", None),
    "negated [host]:port, * for the bare host": ("*,!{hp} {ed}\n", "good", None),
    "negated [host]:port only": ("[127.0.0.*]:*,!{hp} {ed}\n", "good", None),
    "@revoked with two spaces": ("@revoked  {hp}  {ed}\n{hp} {ed}\n", "good", None),
    "@revoked *": ("@revoked * {ed}\n{hashed_hp} {ed}\n", "good", None),
    "@revoked bare host, trusted [host]:port": ("@revoked {h} {ed}\n{hp} {ed}\n", "good", None),
    "@revoked bare host only": ("@revoked {h} {ed}\n", "good", None),
    # ssh skips these two lines (it ends the marker at the first space, or does not know
    # the upper-case spelling) and trusts the key: Benchbay honours the revocation.
    "@revoked followed by a tab": ("@revoked\t{hp} {ed}\n{hp} {ed}\n", "good", "revoked"),
    "@REVOKED in capitals": ("@REVOKED {hp} {ed}\n{hp} {ed}\n", "good", "revoked"),
    "@cert-authority *": ("@cert-authority * {ca}\n", "good", None),
    "@cert-authority for the bare host": ("@cert-authority {h} {ca}\n", "good", None),
    "@cert-authority for other hosts": ("@cert-authority *.example.org {ca}\n", "good", None),
    "@cert-authority of another CA": ("@cert-authority * {ca2}\n", "good", None),
    "@cert-authority revoked": ("@revoked * {ca}\n@cert-authority * {ca}\n", "good", None),
    "@cert-authority with the key also listed": ("{hp} {rsa}\n@cert-authority * {ca}\n", "good", None),
    "certificate for another name": ("@cert-authority * {ca}\n", "wrong_name", None),
    "expired certificate, key listed": ("@cert-authority * {ca}\n{hp_wrong} {ed_wrong}\n", "wrong_name", None),
    "@revoked host certificate, key listed": ("@revoked * {ed_cert}\n{hp} {ed}\n", "good", None),
    "host certificate on a plain line": ("{hp} {ed_cert}\n", "good", None),
    "certificate with a wildcard principal": ("@cert-authority * {ca}\n", "wildcard", None),
    "certificate with a critical option": ("@cert-authority * {ca}\n", "critical", None),
}


class CertSshd(SshdServer):
    """A test sshd that also presents a host certificate for its ed25519 key."""

    def _config_text(self, options: tuple[str, ...]) -> str:
        return super()._config_text(options) + f'HostCertificate "{self.host_key_path}-cert.pub"\n'


def sign_host_key(ca: Path, public_key: Path, principals: str, validity: str = "-1d:+1d") -> None:
    command = [SSH_KEYGEN, "-q", "-s", str(ca), "-I", "benchbay-test", "-h", "-n", principals, "-V", validity,
               str(public_key)]
    subprocess.run(command, check=True, capture_output=True)


def add_critical_option(ca: Path, certificate: Path) -> None:
    """Re-sign an ed25519 host certificate with a critical option (ssh-keygen -h writes none)."""
    cert_type, text = certificate.read_text().split()[:2]
    message = paramiko.Message(base64.b64decode(text))
    body = paramiko.Message()
    for read in ("string", "string", "string", "int64", "int", "string", "string", "int64", "int64"):
        if read == "string":
            body.add_string(message.get_binary())
        elif read == "int64":
            body.add_int64(message.get_int64())
        else:
            body.add_int(message.get_int())
    message.get_binary()  # the (empty) critical options
    option, value = paramiko.Message(), paramiko.Message()
    value.add_string("/bin/true")
    option.add_string("force-command")
    option.add_string(value.asbytes())
    body.add_string(option.asbytes())
    for _ in range(3):  # extensions, reserved, CA key
        body.add_string(message.get_binary())
    body.add_string(paramiko.Ed25519Key.from_private_key_file(str(ca)).sign_ssh_data(body.asbytes()).asbytes())
    certificate.write_text(f"{cert_type} {base64.b64encode(body.asbytes()).decode()}\n")


def _pub(path: Path) -> str:
    return " ".join(Path(str(path) + ".pub").read_text().split()[:2])


@pytest.fixture(scope="module")
def cert_hosts(sshd_session) -> Iterator[dict]:
    root = sshd_session.root / "cert-hosts"
    root.mkdir(exist_ok=True)
    keys = {name: keygen(root / name) for name in ("ca", "ca2", "other")}
    keys["other_rsa"] = keygen(root / "other_rsa", "rsa")
    servers: dict[str, SshdServer] = {}
    try:
        for name, address, principals in (("good", "127.0.0.41", "127.0.0.41,cert.example"),
                                          ("wrong_name", "127.0.0.42", "elsewhere.example"),
                                          ("wildcard", "127.0.0.43", "127.0.0.4?,*.example"),
                                          ("critical", "127.0.0.44", "127.0.0.44")):
            # A TMPDIR of its own: what the agent leaves behind there is this host's alone.
            tmpdir = root / f"tmp-{name}"
            tmpdir.mkdir(exist_ok=True)
            server = CertSshd(root / name, name, address, sshd_session.authorized, {"TMPDIR": str(tmpdir)})
            validity = "-3d:-2d" if name == "wrong_name" else "-1d:+1d"  # wrong_name has expired, too
            sign_host_key(keys["ca"], Path(str(server.host_key_path) + ".pub"), principals, validity)
            if name == "critical":
                add_critical_option(keys["ca"], Path(str(server.host_key_path) + "-cert.pub"))
            server.start()
            servers[name] = server
        hosts = {name: SshTestHost(name, server, sshd_session.client_key, sshd_session.wrong_key)
                 for name, server in servers.items()}
        yield {"hosts": hosts, "keys": keys, "root": root}
    finally:
        for server in servers.values():
            server.stop()


def _render(template: str, hosts: dict[str, SshTestHost], keys: dict[str, Path]) -> str:
    good, wrong = hosts["good"], hosts["wrong_name"]
    ed = _pub(good.host_key_path)
    values = {
        "hp": good.host_id, "h": good.address, "ed": ed, "rsa": _pub(good.rsa_host_key_path),
        "ed_spaced": ed.replace(" ", "   "), "ed_tabbed": ed.replace(" ", "\t"),
        "other": _pub(keys["other"]), "other_rsa": _pub(keys["other_rsa"]),
        "ca": _pub(keys["ca"]), "ca2": _pub(keys["ca2"]),
        "hashed_hp": hash_name(good.host_id, os.urandom(20)),
        "hp_wrong": wrong.host_id, "ed_wrong": _pub(wrong.host_key_path),
        "ed_cert": _pub(Path(str(good.host_key_path) + "-cert")),
    }
    return template.format(**values)


def openssh_verdict(host: SshTestHost, known_hosts: Path) -> str:
    command = [
        SSH, "-F", "/dev/null", "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known_hosts}",
        "-o", "GlobalKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "UpdateHostKeys=no",
        "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=10", "-i", str(host.client_key_path),
        "-p", str(host.port), f"{host.user}@{host.address}", "true",
    ]
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    if done.returncode == 0:
        return "trusted"
    if "REVOKED HOST KEY" in done.stderr:
        return "revoked"
    if "REMOTE HOST IDENTIFICATION HAS CHANGED" in done.stderr:
        return "changed"
    if re.search(r"No \S+ host key is known|Host key verification failed", done.stderr):
        return "unknown"
    raise AssertionError(f"ssh failed for another reason: {done.stderr}")


def benchbay_verdict(host: SshTestHost, known_hosts: Path, tmp_path: Path) -> tuple[str, str]:
    known = KnownHosts(tmp_path / "own_known_hosts", user_path=known_hosts)
    try:
        connect(host.spec(), known_hosts=known, timeout=15).close()
    except UnknownHostKey as exc:
        return "unknown", str(exc)
    except HostKeyChanged as exc:
        return ("revoked" if "@revoked" in str(exc) else "changed"), str(exc)
    return "trusted", ""


@pytest.mark.parametrize("case", list(KNOWN_HOSTS))
def test_verdict_agrees_with_ssh(case: str, cert_hosts: dict, tmp_path: Path) -> None:
    template, which, deliberate = KNOWN_HOSTS[case]
    host = cert_hosts["hosts"][which]
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(_render(template, cert_hosts["hosts"], cert_hosts["keys"]))
    theirs = openssh_verdict(host, known_hosts)
    ours, message = benchbay_verdict(host, known_hosts, tmp_path)
    assert ours == (deliberate or theirs), (case, theirs, message)
    if deliberate:
        assert theirs == "trusted"  # still true of ssh; if ssh changes, this case should go
    assert "\n" not in message


def test_certificate_problems_are_named(cert_hosts: dict, tmp_path: Path) -> None:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(_render("@cert-authority * {ca}\n", cert_hosts["hosts"], cert_hosts["keys"]))
    verdict, message = benchbay_verdict(cert_hosts["hosts"]["wrong_name"], known_hosts, tmp_path)
    assert verdict == "unknown"
    assert "host certificate refused (certificate is not for 127.0.0.42" in message
    assert "accept it" in message  # the fingerprint can still be trusted by the user


def ssh_keygen_lines(known_hosts: Path, name: str) -> set[int]:
    done = subprocess.run([SSH_KEYGEN, "-F", name, "-f", str(known_hosts)], capture_output=True, text=True)
    return {int(n) for n in re.findall(r"found: line (\d+)", done.stdout)}


@pytest.mark.parametrize("case", list(KNOWN_HOSTS))
def test_lookup_agrees_with_ssh_keygen_f(case: str, cert_hosts: dict, tmp_path: Path) -> None:
    template, which, _deliberate = KNOWN_HOSTS[case]
    host = cert_hosts["hosts"][which]
    text = _render(template, cert_hosts["hosts"], cert_hosts["keys"])
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(text)
    for name in (host.host_id, host.address):
        ours = {number for number, line in enumerate(text.splitlines(), start=1)
                if (entry := parse_line(line, number)) is not None and hosts_match(entry.hosts, name)}
        assert ours == ssh_keygen_lines(known_hosts, name), (case, name)


def test_paramiko_gives_the_host_certificate(cert_hosts: dict) -> None:
    """What the certificate support stands on: paramiko negotiates the cert and hands it over."""
    host = cert_hosts["hosts"]["good"]
    sock = __import__("socket").create_connection((host.address, host.port), timeout=10)
    transport = paramiko.Transport(sock)
    try:
        options = transport.get_security_options()
        options.key_types = ["ssh-ed25519-cert-v01@openssh.com", *options.key_types]
        transport.start_client(timeout=10)
        key = transport.get_remote_server_key()
        assert key.public_blob is not None
        assert key.public_blob.key_type == "ssh-ed25519-cert-v01@openssh.com"
        assert key.asbytes() == host.host_key().asbytes()
    finally:
        transport.close()


def test_cli_hosts_from_an_included_config_and_a_mixed_known_hosts(
    cli_env, cert_hosts, ssh_hosts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys,
) -> None:
    """Hosts defined only in an Included file; known_hosts with @cert-authority, hashed,
    [host]:port and @revoked lines: facts and a short idle run work, or fail with one true line."""
    home = tmp_path / "user-home"
    (home / ".ssh" / "hosts.d").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))  # a relative Include is relative to ~/.ssh
    certified, hashed, revoked = cert_hosts["hosts"]["good"], ssh_hosts[0], ssh_hosts[1]
    blocks = "".join(
        f"Host {alias}  # {why}\n  HostName {host.address}\n  Port {host.port}\n  User {host.user}\n"
        f"  IdentityFile {host.client_key_path}\n"
        for alias, host, why in (("lab-cert", certified, "known by its CA"), ("lab-hashed", hashed, "hashed name"),
                                 ("lab-revoked", revoked, "revoked key"))
    )
    (home / ".ssh" / "hosts.d" / "lab.conf").write_text(blocks)
    cli_env["ssh_config"].write_text("Include hosts.d/*.conf\n")
    keys = cert_hosts["keys"]
    cli_env["user_known_hosts"].write_text(
        f"@cert-authority [127.0.0.4?]:* {_pub(keys['ca'])}\n"
        f"{hash_name(hashed.host_id, os.urandom(20))} {_pub(hashed.host_key_path)}\n"
        f"@revoked  {revoked.host_id}  {_pub(revoked.host_key_path)}\n"
        f"{revoked.host_id} {_pub(revoked.host_key_path)}\n"
        f"[192.0.2.1]:2222 {_pub(keys['other'])}\n"
    )
    run_dirs = cert_hosts["root"] / "tmp-good"
    for alias in ("lab-cert", "lab-hashed"):
        assert main(["host", "facts", alias, "--json"]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert json.loads(out[out.index("{"):])["memory"]["total_bytes"] > 0

    assert main(["host", "facts", "lab-revoked"]) == 1
    err = capsys.readouterr().err
    assert "HOST KEY CHANGED" in err and "marked @revoked in known_hosts" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["host", "trust", "lab-revoked"]) == 1  # trusting it by hand is refused, and says why
    err = capsys.readouterr().err
    assert "marked @revoked in known_hosts" in err and len(err.strip().splitlines()) == 1

    phases = '[["wait", "Wait", 1.0]]'
    assert main(["run", "lab-cert", "--test", "idle", "--set", f"phases={phases}", "--interval", "0.5"]) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--host", "lab-cert", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert sorted((r["test"], r["status"]) for r in runs) == [("facts", "done"), ("idle", "done")]
    assert list(run_dirs.iterdir()) == []  # nothing left behind on the host
