"""Host key bookkeeping without any server: fingerprints, files, matching, the decision."""
from __future__ import annotations

import shutil
import socket
import stat
import subprocess
from pathlib import Path

import paramiko
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from paramiko.hostkeys import HostKeys

from remote.errors import HostKeyChanged, UnknownHostKey
from remote.hostkeys import (
    CHANGED,
    TRUSTED,
    UNKNOWN,
    KnownHosts,
    VerifyHostKeyPolicy,
    fingerprint_sha256,
    host_key_id,
    names_match,
    prefer_key_types,
)

HOST = "[192.0.2.10]:2222"


def ed25519_key() -> paramiko.PKey:
    raw = Ed25519PrivateKey.generate().public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    blob = paramiko.Message()
    blob.add_string("ssh-ed25519")
    blob.add_string(raw)
    return paramiko.PKey.from_type_string("ssh-ed25519", blob.asbytes())


def line(names: str, key: paramiko.PKey) -> str:
    return f"{names} {key.get_name()} {key.get_base64()}\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "home" / "known_hosts", tmp_path / "user_known_hosts"


@pytest.fixture
def known(files: tuple[Path, Path]) -> KnownHosts:
    return KnownHosts(*files)


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen not installed")
def test_fingerprint_is_what_ssh_keygen_prints(tmp_path: Path) -> None:
    key = ed25519_key()
    pub = tmp_path / "key.pub"
    pub.write_text(f"{key.get_name()} {key.get_base64()} comment\n")
    printed = subprocess.run(["ssh-keygen", "-lf", str(pub)], check=True, capture_output=True, text=True)
    assert fingerprint_sha256(key.asbytes()) == printed.stdout.split()[1]
    assert "=" not in fingerprint_sha256(key.asbytes())


def test_host_key_id() -> None:
    assert host_key_id("Example.COM", 22) == "example.com"
    assert host_key_id("10.0.0.1", 2222) == "[10.0.0.1]:2222"
    assert host_key_id("::1", 2200) == "[::1]:2200"


def test_unknown_then_trusted_after_add(known: KnownHosts, files: tuple[Path, Path]) -> None:
    key = ed25519_key()
    assert known.check(HOST, key) == (UNKNOWN, None)
    known.add(HOST, key)
    assert known.check(HOST, key) == (TRUSTED, None)
    assert known.trusted_keys(HOST) == [key]
    own, user = files
    assert stat.S_IMODE(own.stat().st_mode) == 0o600
    assert stat.S_IMODE(own.parent.stat().st_mode) == 0o700
    assert not user.exists()
    assert [p.name for p in own.parent.iterdir()] == ["known_hosts"]  # no temp files left behind


def test_add_keeps_other_lines_and_replaces_the_same_type(known: KnownHosts, files: tuple[Path, Path]) -> None:
    own = files[0]
    own.parent.mkdir()
    other = ed25519_key()
    own.write_text("# a comment\n" + line("other.example", other) + "garbage line\n")
    first, second = ed25519_key(), ed25519_key()
    known.add(HOST, first)
    known.add(HOST, second)
    text = own.read_text()
    assert text.startswith("# a comment\n") and "garbage line\n" in text
    assert known.trusted_keys(HOST) == [second]
    assert known.trusted_keys("other.example") == [other]


def test_users_file_is_read_but_never_written(known: KnownHosts, files: tuple[Path, Path]) -> None:
    _, user = files
    key = ed25519_key()
    user.write_text(line(HOST, key))
    before = user.read_bytes()
    assert known.check(HOST, key)[0] == TRUSTED
    known.add(HOST, ed25519_key())
    assert known.remove(HOST) == 1          # only Benchbay's own entry goes
    assert user.read_bytes() == before
    assert known.check(HOST, key)[0] == TRUSTED


def test_hashed_entries(known: KnownHosts, files: tuple[Path, Path]) -> None:
    key = ed25519_key()
    files[1].write_text(line(HostKeys.hash_host(HOST), key))
    assert known.check(HOST, key)[0] == TRUSTED
    assert known.check("[192.0.2.10]:22", key)[0] == UNKNOWN


def test_patterns_brackets_and_negation() -> None:
    assert names_match(["*.example.com"], "db.example.com")
    assert not names_match(["*.example.com"], "example.org")
    assert names_match(["web?"], "web1")
    assert names_match(["[10.0.0.1]:2222"], "[10.0.0.1]:2222")
    assert not names_match(["[10.0.0.1]:2222"], "1")  # brackets are literal, not a character class
    assert not names_match(["*.example.com", "!db.example.com"], "db.example.com")
    assert names_match(["A.Example.COM"], "a.example.com")


def test_changed_same_type(known: KnownHosts) -> None:
    trusted, offered = ed25519_key(), ed25519_key()
    known.add(HOST, trusted)
    assert known.check(HOST, offered) == (CHANGED, trusted)
    with pytest.raises(HostKeyChanged) as caught:
        known.verify(HOST, offered, "web1")
    assert caught.value.expected_fingerprint == fingerprint_sha256(trusted.asbytes())
    assert caught.value.fingerprint == fingerprint_sha256(offered.asbytes())


def test_only_other_types_trusted_is_changed(known: KnownHosts) -> None:
    ecdsa = paramiko.ECDSAKey.generate()
    known.add(HOST, ecdsa)
    status, expected = known.check(HOST, ed25519_key())
    assert status == CHANGED and expected == ecdsa


def test_revoked_key_is_refused(known: KnownHosts, files: tuple[Path, Path]) -> None:
    key = ed25519_key()
    files[1].write_text("@revoked " + line(HOST, key) + line(HOST, key))
    assert known.check(HOST, key)[0] == CHANGED
    assert known.trusted_keys(HOST) == [key]  # listed, but the revocation wins in check()
    with pytest.raises(HostKeyChanged, match="@revoked"):
        known.verify(HOST, key, "web1")


def test_cert_authority_lines_are_ignored(known: KnownHosts, files: tuple[Path, Path]) -> None:
    files[1].write_text("@cert-authority *.example.com " + line("", ed25519_key()).strip() + "\n")
    assert known.trusted_keys("db.example.com") == []


def test_remove_counts(known: KnownHosts) -> None:
    known.add(HOST, ed25519_key())
    known.add(HOST, paramiko.ECDSAKey.generate())
    known.add("other", ed25519_key())
    assert known.remove(HOST) == 2
    assert known.remove(HOST) == 0
    assert len(known.trusted_keys("other")) == 1


def test_verify_unknown_carries_what_the_dialog_needs(known: KnownHosts) -> None:
    key = ed25519_key()
    with pytest.raises(UnknownHostKey) as caught:
        known.verify(HOST, key, "web1")
    error = caught.value
    assert (error.host, error.key_type, error.known_as) == ("web1", "ssh-ed25519", HOST)
    assert error.key_blob == key.asbytes()
    assert error.fingerprint == fingerprint_sha256(key.asbytes())


def test_policy_and_load_into(known: KnownHosts) -> None:
    key = ed25519_key()
    client = paramiko.SSHClient()
    client.get_host_keys().add("somewhere", key.get_name(), key)
    known.load_into(client)
    assert len(client.get_host_keys()) == 0
    policy = client._policy
    assert isinstance(policy, VerifyHostKeyPolicy)
    with pytest.raises(UnknownHostKey):
        policy.missing_host_key(client, HOST, key)
    known.add(HOST, key)
    policy.missing_host_key(client, HOST, key)


def test_preferred_key_types_follow_trust(known: KnownHosts) -> None:
    assert known.preferred_key_types(HOST) == []
    known.add(HOST, paramiko.RSAKey.generate(1024))
    # As ssh orders them: the certificate form of a trusted key type first, then the plain one.
    rsa = ["rsa-sha2-512-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com", "rsa-sha2-512", "rsa-sha2-256"]
    assert known.preferred_key_types(HOST) == rsa
    left, right = socket.socketpair()
    try:
        transport = paramiko.Transport(left)
        prefer_key_types(transport, known.preferred_key_types(HOST))
        assert list(transport.get_security_options().key_types)[:4] == rsa
        assert "ssh-ed25519" in transport.get_security_options().key_types
    finally:
        left.close()
        right.close()


def test_the_systems_known_hosts_trusts_and_revokes_as_for_ssh(tmp_path: Path) -> None:
    # ssh's GlobalKnownHostsFile: the admin of this computer can vouch for a key, or revoke one, for all
    trusted, revoked = ed25519_key(), ed25519_key()
    system = tmp_path / "ssh_known_hosts"
    system.write_text(line(HOST, trusted) + "@revoked * " + f"{revoked.get_name()} {revoked.get_base64()}\n")
    known = KnownHosts(tmp_path / "own", user_path=tmp_path / "user", system_paths=[system, tmp_path / "missing"])
    assert known.check(HOST, trusted)[0] == TRUSTED
    known.add(HOST, revoked)        # trusting it in Benchbay's own file does not lift the admin's revocation
    assert known.check(HOST, revoked)[0] == CHANGED
    with pytest.raises(HostKeyChanged, match="revoked"):
        known.verify(HOST, revoked, "db1")
    assert KnownHosts(tmp_path / "own2", user_path=None, system_paths=[]).check(HOST, trusted)[0] == UNKNOWN
