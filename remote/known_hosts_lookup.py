"""The host key decision as ssh makes it (sshconnect.c check_host_key), on parsed known_hosts lines.

Works on key blobs only, so it can be checked line by line against `ssh` itself.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from remote import host_certificate
from remote.known_hosts_parse import MARK_CA, MARK_NONE, MARK_REVOKED, KnownHostLine, hosts_match

OK = "ok"
NEW = "new"
CHANGED = "changed"
REVOKED = "revoked"


@dataclass(frozen=True)
class Verdict:
    status: str                        # OK, NEW, CHANGED or REVOKED
    expected_blob: bytes | None = None  # CHANGED: the known key of the host; REVOKED: the revoked key
    via_certificate: bool = False      # OK because a known CA signed the host's certificate
    certificate_problem: str = ""      # why a presented certificate was not accepted ("" if none)


def split_host_id(host_id: str) -> tuple[str, int]:
    """("host", port) from "host" or "[host]:port"."""
    if host_id.startswith("[") and "]:" in host_id:
        host, _, port = host_id[1:].rpartition("]:")
        if port.isdigit():
            return host, int(port)
    return host_id, 22


def _for_name(lines: Sequence[KnownHostLine], name: str) -> list[KnownHostLine]:
    return [line for line in lines if hosts_match(line.hosts, name)]


def _public_blob(line: KnownHostLine) -> bytes | None:
    """The line's key; for a certificate, the key it certifies (ssh's sshkey_equal_public)."""
    if not line.key_type.endswith(host_certificate.CERT_SUFFIX):
        return line.key_blob
    try:
        return host_certificate.parse(line.key_blob).key_blob
    except host_certificate.CertificateError:
        return None


def _revoked(lines: Sequence[KnownHostLine], blobs: Sequence[bytes]) -> bytes | None:
    for line in lines:
        if line.marker == MARK_REVOKED and (public := _public_blob(line)) is not None and public in blobs:
            return public
    return None


def _plain_status(lines: Sequence[KnownHostLine], blob: bytes) -> Verdict:
    """check_hostkeys_by_key_or_type for a plain key, on the lines for one name."""
    status, expected = NEW, None
    for line in lines:
        if line.marker != MARK_NONE:
            continue
        if line.key_blob == blob:
            status, expected = OK, None
            break
        # ssh calls any other key for the name a change, whatever its type.
        status, expected = CHANGED, expected or line.key_blob
    revoked = _revoked(lines, [blob])
    return Verdict(REVOKED, revoked) if revoked is not None else Verdict(status, expected)


def _name(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def _check(lines: Sequence[KnownHostLine], host: str, port: int, blob: bytes,
           cert: host_certificate.HostCertificate | None, now: float | None) -> Verdict:
    """sshconnect.c check_host_key, including its two fallbacks, in the order ssh tries them.

    A port login whose key is new is checked again under the bare host name ("found matching
    key w/out port"); a certificate no known CA accepts is checked again as its plain key.
    """
    for_name = _for_name(lines, _name(host, port))
    if cert is None:
        verdict = _plain_status(for_name, blob)
        if verdict.status == NEW and port != 22:
            bare = _check(lines, host, 22, blob, None, now)
            if bare.status in (OK, REVOKED):  # a revoked bare key is refused even so
                return bare
        return verdict
    revoked = _revoked(for_name, [cert.ca_blob, blob])
    if revoked is not None:
        return Verdict(REVOKED, revoked)
    if _lookup_ca(for_name, cert.ca_blob):
        try:
            host_certificate.check(cert, cert.ca_blob, host, now)
            return Verdict(OK, via_certificate=True)
        except host_certificate.CertificateError as exc:
            plain = _check(lines, host, port, blob, None, now)
            return Verdict(plain.status, plain.expected_blob, certificate_problem=str(exc))
    if port != 22:
        bare = _check(lines, host, 22, blob, cert, now)
        if bare.status == OK:
            return bare
    return _check(lines, host, port, blob, None, now)


def _lookup_ca(lines: Sequence[KnownHostLine], ca_blob: bytes) -> bool:
    return any(line.marker == MARK_CA and line.key_blob == ca_blob for line in lines)


def decide(lines: Sequence[KnownHostLine], host_id: str, key_blob: bytes, cert_blob: bytes | None = None,
           now: float | None = None) -> Verdict:
    """What ssh decides for the server key `key_blob` (and its certificate, if it sent one)."""
    host, port = split_host_id(host_id)
    cert = None
    if cert_blob is not None:
        try:
            cert = host_certificate.parse(cert_blob)
        except host_certificate.CertificateError as exc:
            plain = _check(lines, host, port, key_blob, None, now)
            return Verdict(plain.status, plain.expected_blob, certificate_problem=str(exc))
        if cert.key_blob != key_blob:
            plain = _check(lines, host, port, key_blob, None, now)
            return Verdict(plain.status, plain.expected_blob, certificate_problem="certificate is for another key")
    return _check(lines, host, port, key_blob, cert, now)


def trusted_blobs(lines: Sequence[KnownHostLine], host_id: str) -> list[bytes]:
    """Keys (not CAs, not revoked ones) listed for exactly this host id, in file order."""
    found: list[bytes] = []
    for line in _for_name(lines, host_id):
        if line.marker == MARK_NONE and line.key_blob not in found:
            found.append(line.key_blob)
    return found


def has_ca(lines: Sequence[KnownHostLine], host_id: str) -> bool:
    """Whether a @cert-authority line covers this host (or, for a port, the bare host)."""
    host, port = split_host_id(host_id)
    names = [host_id] + ([host] if port != 22 else [])
    return any(line.marker == MARK_CA for name in names for line in _for_name(lines, name))
