"""OpenSSH host certificates (PROTOCOL.certkeys): read one and check it against a CA key.

paramiko negotiates `*-cert-v01@openssh.com` host keys and checks that the server holds the
certified key, but it does not look inside the certificate. This module does what ssh's
check_host_cert does: a host certificate, signed by the @cert-authority key, for this host
name, valid now.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import paramiko

CERT_SUFFIX = "-cert-v01@openssh.com"
_HOST_CERT = 2
# Public key fields that follow the nonce, per key type (PROTOCOL.certkeys).
_KEY_FIELDS = {
    "ssh-ed25519": ("string",),
    "ssh-rsa": ("mpint", "mpint"),
    "ecdsa-sha2-nistp256": ("string", "string"),
    "ecdsa-sha2-nistp384": ("string", "string"),
    "ecdsa-sha2-nistp521": ("string", "string"),
}
# The signature algorithms ssh accepts from a CA by default (no SHA-1 "ssh-rsa").
_CA_SIGNATURE_ALGORITHMS = (
    "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
    "rsa-sha2-512", "rsa-sha2-256",
)


class CertificateError(ValueError):
    """The certificate is malformed or does not vouch for this host; str() says why."""


@dataclass(frozen=True)
class HostCertificate:
    cert_type: str              # e.g. "ssh-ed25519-cert-v01@openssh.com"
    key_blob: bytes             # the certified public key, as a plain key blob
    serial: int
    kind: int                   # 1 user, 2 host
    key_id: str
    principals: tuple[str, ...]
    valid_after: int
    valid_before: int
    ca_blob: bytes              # the signing CA's public key blob
    signed_part: bytes          # what the CA signed
    signature: bytes
    critical_options: bytes = b""  # packed; ssh refuses a host certificate that has any


def parse(blob: bytes) -> HostCertificate:
    """Read a certificate blob; CertificateError if it is not one this module knows."""
    try:
        message = paramiko.Message(blob)
        cert_type = message.get_text()
        plain_type = cert_type[: -len(CERT_SUFFIX)] if cert_type.endswith(CERT_SUFFIX) else ""
        if plain_type not in _KEY_FIELDS:
            raise CertificateError(f"unsupported certificate type {cert_type!r}")
        message.get_string()  # nonce
        plain = paramiko.Message()
        plain.add_string(plain_type)
        for kind in _KEY_FIELDS[plain_type]:
            if kind == "mpint":
                plain.add_mpint(message.get_mpint())
            else:
                plain.add_string(message.get_binary())
        serial = message.get_int64()
        kind = message.get_int()
        key_id = message.get_string().decode("utf-8", "replace")
        packed = paramiko.Message(message.get_binary())
        principals: list[str] = []
        while packed.get_remainder():
            principals.append(packed.get_string().decode("utf-8", "replace"))
        valid_after, valid_before = message.get_int64(), message.get_int64()
        critical = message.get_binary()
        message.get_binary()  # extensions
        message.get_binary()  # reserved
        ca_blob = message.get_binary()
        signed_end = message.packet.tell()
        signature = message.get_binary()
    except CertificateError:
        raise
    except Exception as exc:  # paramiko.Message reads past the end in odd ways
        raise CertificateError(f"malformed certificate ({exc or type(exc).__name__})") from None
    if not ca_blob or not signature:
        raise CertificateError("malformed certificate (no CA key or signature)")
    return HostCertificate(
        cert_type, plain.asbytes(), serial, kind, key_id, tuple(principals), valid_after, valid_before,
        ca_blob, blob[:signed_end], signature, critical,
    )


def _signature_algorithm(signature: bytes) -> str:
    try:
        return paramiko.Message(signature).get_text()
    except Exception:  # a signature too short to name its algorithm
        return ""


def check(cert: HostCertificate, ca_blob: bytes, host: str, now: float | None = None) -> None:
    """Raise CertificateError unless `cert` is a valid host certificate from `ca_blob` for `host`.

    As ssh does: the CA must be the one known, the signature must verify with it (and not use
    SHA-1), it must be a host certificate, `host` must be one of its principals (when it lists
    any), it must be valid now and have no critical options.
    """
    if cert.ca_blob != ca_blob:
        raise CertificateError("certificate is signed by a different CA")
    algorithm = _signature_algorithm(cert.signature)
    if algorithm not in _CA_SIGNATURE_ALGORITHMS:
        raise CertificateError(f"certificate signature algorithm {algorithm or '?'} is not accepted")
    try:
        ca_type = paramiko.Message(ca_blob).get_text()
        ca_key = paramiko.PKey.from_type_string(ca_type, ca_blob)
        valid = ca_key.verify_ssh_sig(cert.signed_part, paramiko.Message(cert.signature))
    except Exception:  # an unusable CA key or signature verifies nothing
        valid = False
    if not valid:
        raise CertificateError("certificate signature does not verify with the CA key")
    if cert.kind != _HOST_CERT:
        raise CertificateError("certificate is a user certificate, not a host certificate")
    if cert.principals and host.lower() not in cert.principals:
        raise CertificateError(f"certificate is not for {host} (it names {', '.join(cert.principals)})")
    moment = int(time.time() if now is None else now)
    if moment < cert.valid_after:
        raise CertificateError("certificate is not valid yet")
    if moment >= cert.valid_before:
        raise CertificateError("certificate has expired")
    if cert.critical_options:
        raise CertificateError("certificate has critical options, which ssh refuses in a host certificate")
