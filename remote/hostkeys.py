"""Host keys: Benchbay's own known_hosts file, the user's OpenSSH one, and the check on connect.

Benchbay writes only its own file (under its home directory, mode 0600). The user's
~/.ssh/known_hosts is read, never written. A key is trusted when either file lists it
for the host; the user decides about unknown keys; a changed key is always refused.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import socket
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import paramiko
from paramiko.hostkeys import HostKeyEntry, HostKeys, InvalidHostKey

from remote.errors import HostKeyChanged, UnknownHostKey

TRUSTED = "trusted"
UNKNOWN = "unknown"
CHANGED = "changed"

# Host key algorithms paramiko negotiates for a key type as known_hosts names it.
_ALGORITHMS_FOR_KEY_TYPE = {"ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256")}


def fingerprint_sha256(key_blob: bytes) -> str:
    """The fingerprint as `ssh-keygen -lf` prints it: SHA256 of the key blob, base64 without padding."""
    digest = hashlib.sha256(key_blob).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def key_fingerprint(key: paramiko.PKey) -> str:
    return fingerprint_sha256(key.asbytes())


def host_key_id(address: str, port: int) -> str:
    """The name a host's key is filed under in known_hosts, as OpenSSH writes it."""
    address = address.lower()  # OpenSSH lowercases host names before lookup
    return address if port == 22 else f"[{address}]:{port}"


def _pattern_matches(pattern: str, host_id: str) -> bool:
    # known_hosts patterns know only `*` and `?`; brackets are literal ("[host]:port").
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern.lower())
    return re.fullmatch(regex, host_id) is not None


def names_match(names: Iterable[str], host_id: str) -> bool:
    """Whether a known_hosts line's host field covers host_id (plain, hashed, wildcard, negated)."""
    matched = False
    for name in names:
        if name.startswith("|1|"):
            try:
                if HostKeys.hash_host(host_id, name) == name:
                    matched = True
            except Exception:  # a malformed hash never matches
                continue
        elif name.startswith("!"):
            if _pattern_matches(name[1:], host_id):
                return False  # a negated match excludes the host whatever else matches
        elif _pattern_matches(name, host_id):
            matched = True
    return matched


class _Entry:
    def __init__(self, names: list[str], key: paramiko.PKey, revoked: bool = False):
        self.names = names
        self.key = key
        self.revoked = revoked


def _parse_line(line: str) -> _Entry | None:
    """One known_hosts line as an entry; None for comments, @cert-authority and what paramiko can't read."""
    text = line.strip()
    if not text or text.startswith("#"):
        return None
    revoked = False
    if text.startswith("@"):
        marker, _, rest = text.partition(" ")
        if marker != "@revoked":
            return None  # @cert-authority: host certificates are not supported
        revoked, text = True, rest.strip()
    try:
        entry = HostKeyEntry.from_line(text)
    except (InvalidHostKey, paramiko.SSHException, ValueError):
        return None
    if entry is None or entry.key is None:
        return None
    return _Entry(list(entry.hostnames), entry.key, revoked)


def _read_entries(path: Path | None) -> list[_Entry]:
    if path is None:
        return []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    return [entry for entry in map(_parse_line, lines) if entry is not None]


def _same_key(a: paramiko.PKey, b: paramiko.PKey) -> bool:
    return a.get_name() == b.get_name() and a.asbytes() == b.asbytes()


class KnownHosts:
    """Trusted host keys: Benchbay's own file (read-write) plus the user's known_hosts (read-only)."""

    def __init__(self, own_path: Path, user_path: Path | None = Path("~/.ssh/known_hosts")):
        self.own_path = Path(own_path).expanduser()
        self.user_path = Path(user_path).expanduser() if user_path is not None else None

    def _entries(self) -> list[_Entry]:
        # Read on every call: files are small and another window or `ssh` may have changed them.
        return _read_entries(self.own_path) + _read_entries(self.user_path)

    def trusted_keys(self, host_id: str) -> list[paramiko.PKey]:
        """Every key listed for host_id in either file (not counting @revoked ones)."""
        keys: list[paramiko.PKey] = []
        for entry in self._entries():
            if entry.revoked or not names_match(entry.names, host_id):
                continue
            if not any(_same_key(entry.key, known) for known in keys):
                keys.append(entry.key)
        return keys

    def check(self, host_id: str, key: paramiko.PKey) -> tuple[str, paramiko.PKey | None]:
        """(TRUSTED|UNKNOWN|CHANGED, the trusted key it should have been for CHANGED)."""
        entries = [e for e in self._entries() if names_match(e.names, host_id)]
        revoked = [e.key for e in entries if e.revoked]
        trusted = [e.key for e in entries if not e.revoked]
        if any(_same_key(key, bad) for bad in revoked):
            return CHANGED, revoked[0]
        if any(_same_key(key, good) for good in trusted):
            return TRUSTED, None
        if not trusted:
            return UNKNOWN, None
        same_type = [good for good in trusted if good.get_name() == key.get_name()]
        return CHANGED, (same_type or trusted)[0]

    def verify(self, host_id: str, key: paramiko.PKey, host_label: str) -> None:
        """Return if the key is trusted; raise UnknownHostKey or HostKeyChanged otherwise."""
        status, expected = self.check(host_id, key)
        if status == TRUSTED:
            return
        if status == UNKNOWN:
            raise UnknownHostKey(host_label, key.get_name(), key_fingerprint(key), key.asbytes(), host_id)
        assert expected is not None
        expected_text = key_fingerprint(expected)
        if _same_key(expected, key):
            expected_text = "none: this key is marked @revoked in known_hosts"
        raise HostKeyChanged(host_label, key.get_name(), key_fingerprint(key), expected_text)

    def preferred_key_types(self, host_id: str) -> list[str]:
        """Host key algorithms to ask for first, so the server offers a key type we already trust."""
        algorithms: list[str] = []
        for key in self.trusted_keys(host_id):
            for name in _ALGORITHMS_FOR_KEY_TYPE.get(key.get_name(), (key.get_name(),)):
                if name not in algorithms:
                    algorithms.append(name)
        return algorithms

    def add(self, host_id: str, key: paramiko.PKey) -> None:
        """Trust `key` for host_id in Benchbay's own file (replacing an own entry of the same type)."""
        lines = self._own_lines()
        kept: list[str] = []
        for line in lines:
            entry = _parse_line(line)
            if (
                entry is not None and not entry.revoked and entry.names == [host_id]
                and entry.key.get_name() == key.get_name()
            ):
                continue
            kept.append(line)
        kept.append(f"{host_id} {key.get_name()} {key.get_base64()}")
        self._write_own(kept)

    def remove(self, host_id: str) -> int:
        """Forget every key for host_id in Benchbay's own file; returns how many were removed."""
        removed = 0
        kept: list[str] = []
        for line in self._own_lines():
            entry = _parse_line(line)
            if entry is None or entry.revoked:
                kept.append(line)
                continue
            names = [n for n in entry.names if not names_match([n], host_id)]
            if len(names) == len(entry.names):
                kept.append(line)
                continue
            removed += 1
            if names:
                kept.append(f"{','.join(names)} {entry.key.get_name()} {entry.key.get_base64()}")
        if removed:
            self._write_own(kept)
        return removed

    def load_into(self, client: paramiko.SSHClient) -> None:
        """Make `client` check host keys against these files.

        The keys are NOT copied into paramiko's own tables: paramiko consults only one of
        them and compares just one key type. Instead the client gets a policy that runs
        `verify` for every server key; with empty tables paramiko hands every key to it.
        """
        client.get_host_keys().clear()
        client.set_missing_host_key_policy(VerifyHostKeyPolicy(self))

    def _own_lines(self) -> list[str]:
        try:
            return self.own_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []

    def _write_own(self, lines: Sequence[str]) -> None:
        # Atomic: write a private temp file in the same directory, fsync, rename over.
        directory = self.own_path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=".known_hosts.", dir=directory)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write("".join(line + "\n" for line in lines))
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp_name, 0o600)
            os.replace(tmp_name, self.own_path)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise


class VerifyHostKeyPolicy(paramiko.MissingHostKeyPolicy):
    """Checks the server key against KnownHosts; unknown -> UnknownHostKey, different -> HostKeyChanged.

    Used with an SSHClient whose own host key tables are empty, so paramiko calls it for
    every connection. `host_id` overrides the name paramiko passes (it has no port for a sock=).
    """

    def __init__(self, known_hosts: KnownHosts, host_id: str | None = None, host_label: str | None = None):
        self.known_hosts = known_hosts
        self.host_id = host_id
        self.host_label = host_label

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        host_id = self.host_id or hostname
        self.known_hosts.verify(host_id, key, self.host_label or host_id)


def prefer_key_types(transport: paramiko.Transport, algorithms: Sequence[str]) -> None:
    """Ask for these host key algorithms first (the server picks the first one it has)."""
    current = list(transport.get_security_options().key_types)
    first = [name for name in algorithms if name in current]
    if first:
        transport.get_security_options().key_types = first + [n for n in current if n not in first]


def fetch_host_key(
    address: str,
    port: int,
    timeout: float,
    sock: socket.socket | paramiko.Channel | None = None,
    *,
    preferred_types: Sequence[str] = (),
) -> paramiko.PKey:
    """The key the server offers, without logging in (for showing a fingerprint before trusting).

    Pass `preferred_types=known_hosts.preferred_key_types(host_id)` to see the key type
    that a connection would be checked with. Network failures raise remote.errors classes.
    """
    from remote.connect import describe_handshake_error, open_tcp  # connect imports this module

    if sock is None:
        sock = open_tcp(address, port, timeout)
    transport = paramiko.Transport(sock)
    try:
        transport.banner_timeout = timeout
        prefer_key_types(transport, preferred_types)
        try:
            transport.start_client(timeout=timeout)
            key = transport.get_remote_server_key()
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise describe_handshake_error(exc, transport, address, port, timeout) from None
        return key
    finally:
        transport.close()
