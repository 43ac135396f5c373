"""Host keys: Benchbay's own known_hosts file, the user's OpenSSH one, and the check on connect.

Benchbay writes only its own file (under its home directory, mode 0600). The user's
~/.ssh/known_hosts is read, never written. A key is trusted when either file lists it
for the host; the user decides about unknown keys; a changed key is always refused.
"""
from __future__ import annotations

import base64
import hashlib
import os
import socket
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import paramiko

from remote import known_hosts_lookup as lookup
from remote.errors import HostKeyChanged, UnknownHostKey
from remote.host_certificate import CERT_SUFFIX
from remote.known_hosts_lookup import Verdict, decide, has_ca, trusted_blobs
from remote.known_hosts_parse import MARK_NONE, KnownHostLine, hosts_match, parse_line, parse_text
from remote.tcp import describe_handshake_error, open_tcp

TRUSTED = "trusted"
UNKNOWN = "unknown"
CHANGED = "changed"

# Host key algorithms paramiko negotiates for a key type as known_hosts names it.
_ALGORITHMS_FOR_KEY_TYPE = {"ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256")}
# Host certificate algorithms paramiko can verify, asked for first when a CA is known for the host.
_CERT_ALGORITHMS = (
    "ssh-ed25519" + CERT_SUFFIX, "ecdsa-sha2-nistp256" + CERT_SUFFIX, "ecdsa-sha2-nistp384" + CERT_SUFFIX,
    "ecdsa-sha2-nistp521" + CERT_SUFFIX, "rsa-sha2-512" + CERT_SUFFIX, "rsa-sha2-256" + CERT_SUFFIX,
)


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


def names_match(names: Iterable[str], host_id: str) -> bool:
    """Whether a known_hosts line's host names cover host_id, as ssh decides (see known_hosts_parse)."""
    return hosts_match(",".join(names), host_id)


def _pkey(blob: bytes) -> paramiko.PKey | None:
    try:
        return paramiko.PKey.from_type_string(paramiko.Message(blob).get_text(), blob)
    except Exception:  # a key type paramiko does not know: it can never be offered to us either
        return None


def _unknown(host_label: str, key: paramiko.PKey, host_id: str, certificate_problem: str) -> UnknownHostKey:
    error = UnknownHostKey(host_label, key.get_name(), key_fingerprint(key), key.asbytes(), host_id)
    if certificate_problem:
        # Still an unknown key (the user may trust the fingerprint), but say why the certificate failed.
        error.args = (f"{host_label}: host certificate refused ({certificate_problem}); {error}",)
    return error


def _read_entries(path: Path | None) -> list[KnownHostLine]:
    if path is None:
        return []
    try:
        return parse_text(path.read_text(encoding="utf-8", errors="replace"))
    except (FileNotFoundError, NotADirectoryError, PermissionError, IsADirectoryError):
        return []


def _certificate_blob(key: paramiko.PKey) -> bytes | None:
    """The OpenSSH certificate paramiko received with the server key, if the server sent one."""
    blob = getattr(key, "public_blob", None)
    if blob is not None and str(blob.key_type).endswith(CERT_SUFFIX):
        return bytes(blob.key_blob)
    return None


# ssh's GlobalKnownHostsFile: what the host's admin trusts (and revokes) for every user of this computer
SYSTEM_KNOWN_HOSTS = (Path("/etc/ssh/ssh_known_hosts"), Path("/etc/ssh/ssh_known_hosts2"))


class KnownHosts:
    """Trusted host keys: Benchbay's own file (read-write) plus the user's and the system's (read-only)."""

    def __init__(self, own_path: Path, user_path: Path | None = Path("~/.ssh/known_hosts"),
                 system_paths: Sequence[Path] = SYSTEM_KNOWN_HOSTS):
        self.own_path = Path(own_path).expanduser()
        self.user_path = Path(user_path).expanduser() if user_path is not None else None
        self.system_paths = tuple(Path(path) for path in system_paths)

    def _entries(self) -> list[KnownHostLine]:
        # Read on every call: files are small and another window or `ssh` may have changed them.
        entries = _read_entries(self.own_path) + _read_entries(self.user_path)
        for path in self.system_paths:   # ssh reads them too: a key revoked there is revoked for us
            entries += _read_entries(path)
        return entries

    def trusted_keys(self, host_id: str) -> list[paramiko.PKey]:
        """Every key listed for host_id in either file (not @revoked or @cert-authority ones)."""
        keys = (_pkey(blob) for blob in trusted_blobs(self._entries(), host_id))
        return [key for key in keys if key is not None]

    def decide(self, host_id: str, key: paramiko.PKey) -> Verdict:
        """ssh's decision for this server key (with the certificate paramiko got, if any)."""
        return decide(self._entries(), host_id, key.asbytes(), _certificate_blob(key))

    def check(self, host_id: str, key: paramiko.PKey) -> tuple[str, paramiko.PKey | None]:
        """(TRUSTED|UNKNOWN|CHANGED, the key it should have been for CHANGED; the offered key when revoked)."""
        verdict = self.decide(host_id, key)
        if verdict.status == lookup.OK:
            return TRUSTED, None
        if verdict.status == lookup.NEW:
            return UNKNOWN, None
        if verdict.status == lookup.REVOKED:
            return CHANGED, key  # the offered key itself: callers say "revoked", not "changed"
        expected = _pkey(verdict.expected_blob) if verdict.expected_blob is not None else None
        return CHANGED, expected or key

    def verify(self, host_id: str, key: paramiko.PKey, host_label: str) -> None:
        """Return if the key is trusted; raise UnknownHostKey or HostKeyChanged otherwise."""
        verdict = self.decide(host_id, key)
        if verdict.status == lookup.OK:
            return
        if verdict.status == lookup.NEW:
            raise _unknown(host_label, key, host_id, verdict.certificate_problem)
        if verdict.status == lookup.REVOKED:
            what = "this key" if verdict.expected_blob == key.asbytes() else "the CA that signed its certificate"
            expected_text = f"none: {what} is marked @revoked in known_hosts"
        else:
            expected = _pkey(verdict.expected_blob) if verdict.expected_blob is not None else None
            expected_text = key_fingerprint(expected) if expected is not None else "?"
        raise HostKeyChanged(host_label, key.get_name(), key_fingerprint(key), expected_text)

    def preferred_key_types(self, host_id: str) -> list[str]:
        """Host key algorithms to ask for first, so the server offers a key type we already trust.

        As ssh orders them (order_hostkeyalgs): every certificate type first when a
        @cert-authority line covers the host, then each trusted key's type, its certificate
        form before the plain one.
        """
        entries = self._entries()
        algorithms: list[str] = list(_CERT_ALGORITHMS) if has_ca(entries, host_id) else []
        for key in self.trusted_keys(host_id):
            plain = _ALGORITHMS_FOR_KEY_TYPE.get(key.get_name(), (key.get_name(),))
            for name in [p + CERT_SUFFIX for p in plain] + list(plain):
                if name not in algorithms:
                    algorithms.append(name)
        return algorithms

    def add(self, host_id: str, key: paramiko.PKey) -> None:
        """Trust `key` for host_id in Benchbay's own file (replacing an own entry of the same type)."""
        lines = self._own_lines()
        kept: list[str] = []
        for line in lines:
            entry = parse_line(line)
            same_slot = entry is not None and entry.marker == MARK_NONE and entry.hosts == host_id
            if same_slot and entry.key_type == key.get_name():
                continue
            kept.append(line)
        kept.append(f"{host_id} {key.get_name()} {key.get_base64()}")
        self._write_own(kept)

    def remove(self, host_id: str) -> int:
        """Forget every key for host_id in Benchbay's own file; returns how many were removed."""
        removed = 0
        kept: list[str] = []
        for line in self._own_lines():
            entry = parse_line(line)
            if entry is None or entry.marker != MARK_NONE:
                kept.append(line)
                continue
            all_names = [entry.hosts] if entry.hosts.startswith("|1|") else entry.hosts.split(",")
            names = [n for n in all_names if not names_match([n], host_id)]
            if len(names) == len(all_names):
                kept.append(line)
                continue
            removed += 1
            if names:
                blob_text = base64.b64encode(entry.key_blob).decode("ascii")
                kept.append(f"{','.join(names)} {entry.key_type} {blob_text}")
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
    # Certificate algorithms are not in key_types (paramiko appends them last) but may be set.
    first = [name for name in algorithms if name in current or name in transport._key_info]
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
