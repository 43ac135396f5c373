"""known_hosts lines and host certificates as OpenSSH reads them (no server; keys from ssh-keygen)."""
from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import paramiko
import pytest

from remote.errors import HostKeyChanged, UnknownHostKey
from remote.host_certificate import CertificateError, check, parse
from remote.hostkeys import TRUSTED, UNKNOWN, KnownHosts
from remote.known_hosts_lookup import NEW, OK, REVOKED, decide
from remote.known_hosts_parse import MARK_CA, MARK_REVOKED, hash_name, hosts_match, parse_line, parse_text

SSH_KEYGEN = shutil.which("ssh-keygen")
pytestmark = pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen not installed")


def keygen(path: Path, key_type: str = "ed25519") -> Path:
    bits = ["-b", "2048"] if key_type == "rsa" else []
    subprocess.run([SSH_KEYGEN, "-q", "-t", key_type, *bits, "-N", "", "-C", "", "-f", str(path)],
                   check=True, capture_output=True)
    return path


def pub_text(path: Path) -> str:
    return " ".join(Path(str(path) + ".pub").read_text().split()[:2])


def blob(path: Path) -> bytes:
    return base64.b64decode(pub_text(path).split()[1])


def certify(tmp_path: Path, ca: Path, host_key: Path, *options: str, name: str = "cert") -> bytes:
    """Sign a copy of host_key.pub with ssh-keygen -s; returns the certificate blob."""
    copy = tmp_path / f"{name}.pub"
    copy.write_text(Path(str(host_key) + ".pub").read_text())
    subprocess.run([SSH_KEYGEN, "-q", "-s", str(ca), "-I", "test", *options, str(copy)],
                   check=True, capture_output=True)
    return base64.b64decode((tmp_path / f"{name}-cert.pub").read_text().split()[1])


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Path]:
    return {name: keygen(tmp_path / name) for name in ("host", "ca", "ca2", "other")}


# -- reading lines ---------------------------------------------------------------------------------

def test_revoked_line_with_two_spaces_is_seen(keys: dict[str, Path]) -> None:
    line = f"@revoked 10.0.0.5  {pub_text(keys['host'])}"
    entry = parse_line(line)
    assert entry is not None and entry.marker == MARK_REVOKED and entry.key_blob == blob(keys["host"])
    lines = parse_text(line + f"\n10.0.0.5 {pub_text(keys['host'])}\n")
    assert decide(lines, "10.0.0.5", blob(keys["host"])).status == REVOKED


def test_repeated_spaces_and_tabs_are_one_separator(keys: dict[str, Path]) -> None:
    key_type, key_text = pub_text(keys["host"]).split()
    for line in (f"db1   {key_type}   {key_text}  comment", f"\tdb1\t{key_type}\t{key_text}"):
        entry = parse_line(line)
        assert entry is not None and entry.hosts == "db1" and entry.key_blob == blob(keys["host"])


def test_revoked_in_forms_ssh_skips_is_still_honoured(keys: dict[str, Path]) -> None:
    text = pub_text(keys["host"])
    for marker_line in (f"@revoked\tdb1 {text}", f"@REVOKED db1 {text}"):
        assert parse_line(marker_line) is None  # ssh does not read these lines...
        lines = parse_text(f"{marker_line}\ndb1 {text}\n")
        assert decide(lines, "db1", blob(keys["host"])).status == REVOKED  # ...Benchbay refuses the key


def test_cert_authority_line_and_bad_lines(keys: dict[str, Path]) -> None:
    assert parse_line(f"@cert-authority *.lab {pub_text(keys['ca'])}").marker == MARK_CA
    assert parse_line(f"@cert-authority\t*.lab {pub_text(keys['ca'])}") is None  # ssh: invalid marker
    assert parse_line("db1 ssh-ed25519 not-base64!") is None
    assert parse_line(f"db1 ssh-rsa {pub_text(keys['host']).split()[1]}") is None  # type and blob disagree
    assert parse_line("# db1 ssh-ed25519 AAAA") is None


def test_names_hashed_patterns_and_case() -> None:
    hashed = hash_name("[db1]:2222", b"s" * 20)
    assert hosts_match(hashed, "[db1]:2222") and not hosts_match(hashed, "db1")
    assert not hosts_match(hashed + ",other", "[db1]:2222")  # ssh never matches a hash in a list
    assert hosts_match("*.Example.COM,!db.example.com", "web.example.com")
    assert not hosts_match("*.example.com,!db.example.com", "db.example.com")
    assert hosts_match("[10.0.0.?]:*", "[10.0.0.5]:2222") and not hosts_match("[10.0.0.1]:2222", "1")


def test_port_login_falls_back_to_the_bare_host_as_ssh_does(keys: dict[str, Path]) -> None:
    host, other = pub_text(keys["host"]), pub_text(keys["other"])
    key = blob(keys["host"])
    assert decide(parse_text(f"10.0.0.5 {host}\n"), "[10.0.0.5]:2222", key).status == OK
    assert decide(parse_text(f"10.0.0.5 {other}\n"), "[10.0.0.5]:2222", key).status == NEW
    changed = decide(parse_text(f"[10.0.0.5]:2222 {other}\n10.0.0.5 {host}\n"), "[10.0.0.5]:2222", key)
    assert changed.status == "changed" and changed.expected_blob == blob(keys["other"])


# -- host certificates -----------------------------------------------------------------------------

def test_valid_certificate(tmp_path: Path, keys: dict[str, Path]) -> None:
    cert = parse(certify(tmp_path, keys["ca"], keys["host"], "-h", "-n", "db1,10.0.0.5", "-V", "-1h:+1h"))
    assert cert.principals == ("db1", "10.0.0.5") and cert.key_blob == blob(keys["host"])
    check(cert, blob(keys["ca"]), "10.0.0.5")
    check(cert, blob(keys["ca"]), "DB1")


@pytest.mark.parametrize(("options", "host", "why"), [
    (("-h", "-n", "db1"), "db2", "not for db2"),
    (("-h", "-n", "db1", "-V", "-3d:-2d"), "db1", "expired"),
    (("-h", "-n", "db1", "-V", "+1d:+2d"), "db1", "not valid yet"),
    (("-n", "db1"), "db1", "user certificate"),
])
def test_certificate_refusals(tmp_path: Path, keys: dict[str, Path], options: tuple, host: str, why: str) -> None:
    cert = parse(certify(tmp_path, keys["ca"], keys["host"], *options))
    with pytest.raises(CertificateError, match=why):
        check(cert, blob(keys["ca"]), host)


def test_certificate_from_another_ca_or_tampered(tmp_path: Path, keys: dict[str, Path]) -> None:
    raw = certify(tmp_path, keys["ca"], keys["host"], "-h", "-n", "db1")
    with pytest.raises(CertificateError, match="different CA"):
        check(parse(raw), blob(keys["ca2"]), "db1")
    tampered = parse(raw.replace(b"db1", b"db9"))
    with pytest.raises(CertificateError, match="does not verify"):
        check(tampered, blob(keys["ca"]), "db9")
    with pytest.raises(CertificateError, match="malformed"):
        parse(raw[:60])


def test_certificate_without_principals_and_rsa_ca(tmp_path: Path, keys: dict[str, Path]) -> None:
    rsa_ca = keygen(tmp_path / "rsa_ca", "rsa")
    cert = parse(certify(tmp_path, rsa_ca, keys["host"], "-h"))
    check(cert, blob(rsa_ca), "any.host")


def test_known_hosts_trusts_a_certified_key(tmp_path: Path, keys: dict[str, Path]) -> None:
    raw = certify(tmp_path, keys["ca"], keys["host"], "-h", "-n", "10.0.0.5")
    key = paramiko.Ed25519Key(data=raw)  # what paramiko makes of a negotiated host certificate
    user = tmp_path / "known_hosts"
    known = KnownHosts(tmp_path / "own", user_path=user)
    assert known.check("[10.0.0.5]:2222", key)[0] == UNKNOWN
    user.write_text(f"@cert-authority 10.0.0.* {pub_text(keys['ca'])}\n")
    assert known.check("[10.0.0.5]:2222", key)[0] == TRUSTED
    assert known.preferred_key_types("[10.0.0.5]:2222")[0] == "ssh-ed25519-cert-v01@openssh.com"
    with pytest.raises(UnknownHostKey, match=r"host certificate refused \(certificate is not for 10.0.0.6"):
        known.verify("10.0.0.6", key, "other")
    user.write_text(f"@revoked * {pub_text(keys['ca'])}\n@cert-authority * {pub_text(keys['ca'])}\n")
    with pytest.raises(HostKeyChanged, match="the CA that signed its certificate is marked @revoked"):
        known.verify("[10.0.0.5]:2222", key, "db")


def _with_critical_options(raw: bytes, ca: Path) -> bytes:
    """An ed25519 host certificate re-signed by `ca` with a critical option added (ssh-keygen
    writes none into host certificates)."""
    message = paramiko.Message(raw)
    body = paramiko.Message()
    body.add_string(message.get_text())              # type
    body.add_string(message.get_binary())            # nonce
    body.add_string(message.get_binary())            # ed25519 public key
    body.add_int64(message.get_int64())              # serial
    body.add_int(message.get_int())                  # host
    body.add_string(message.get_binary())            # key id
    body.add_string(message.get_binary())            # principals
    body.add_int64(message.get_int64())              # valid after
    body.add_int64(message.get_int64())              # valid before
    message.get_binary()
    option = paramiko.Message()
    option.add_string("force-command")
    inner = paramiko.Message()
    inner.add_string("/bin/true")
    option.add_string(inner.asbytes())
    body.add_string(option.asbytes())                # critical options
    body.add_string(message.get_binary())            # extensions
    body.add_string(message.get_binary())            # reserved
    body.add_string(message.get_binary())            # CA key
    signed = body.asbytes()
    signature = paramiko.Ed25519Key.from_private_key_file(str(ca)).sign_ssh_data(signed)
    body.add_string(signature.asbytes())
    return body.asbytes()


def test_certificate_with_critical_options_is_refused(tmp_path: Path, keys: dict[str, Path]) -> None:
    # ssh (sshkey_cert_check_host): "Certificate contains unsupported critical options".
    raw = _with_critical_options(certify(tmp_path, keys["ca"], keys["host"], "-h", "-n", "db1"), keys["ca"])
    cert = parse(raw)
    with pytest.raises(CertificateError, match="critical option"):
        check(cert, blob(keys["ca"]), "db1")

