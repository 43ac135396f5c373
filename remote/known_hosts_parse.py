"""known_hosts lines read the way OpenSSH reads them (hostfile.c, match.c), without paramiko.

paramiko's HostKeyEntry splits on single spaces (so a line with two spaces is lost), drops
marker lines (so `@revoked` is not seen) and accepts a hashed name inside a comma list, which
ssh never matches. Here: fields are separated by any run of spaces and tabs, a hashed host
field is the whole field, patterns know `*`, `?` and `!`, and host names are compared in
lower case.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import struct
from dataclasses import dataclass

MARK_NONE = ""
MARK_REVOKED = "@revoked"
MARK_CA = "@cert-authority"
_HASH_MAGIC = "|1|"
_FIELD_SPLIT = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class KnownHostLine:
    """One usable known_hosts line."""

    marker: str          # MARK_NONE, MARK_REVOKED or MARK_CA
    hosts: str           # the host field as written (patterns, or one hashed name)
    key_type: str        # e.g. "ssh-ed25519", as the key blob names itself
    key_blob: bytes      # the public key in SSH wire format
    line_number: int


def _blob_type(blob: bytes) -> str | None:
    """The key type a wire-format blob starts with, or None if it is not one."""
    if len(blob) < 4:
        return None
    (size,) = struct.unpack(">I", blob[:4])
    if size == 0 or size > len(blob) - 4:
        return None
    try:
        return blob[4:4 + size].decode("ascii")
    except UnicodeDecodeError:
        return None


def _decode_key(key_type: str, text: str) -> bytes | None:
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    # sshkey_read refuses a blob whose inner type differs from the type written before it.
    return blob if _blob_type(blob) == key_type else None


def _openssh_marker(text: str) -> tuple[str | None, str]:
    """(marker or None if invalid, rest of line), as hostfile.c check_markers() finds it.

    OpenSSH ends the marker at the first SPACE anywhere on the line and only then at the first
    tab, so `@revoked<TAB>host key...` is an invalid marker and the whole line is skipped.
    """
    end = text.find(" ")
    if end < 0:
        end = text.find("\t")
    if end < 0:
        return None, ""
    marker = text[:end]
    if marker not in (MARK_REVOKED, MARK_CA):
        return None, ""
    return marker, text[end:].lstrip(" \t")


def parse_line(line: str, line_number: int = 0) -> KnownHostLine | None:
    """The line as ssh uses it, or None for blanks, comments and lines ssh skips."""
    text = line.rstrip("\r\n").lstrip(" \t")
    if not text or text.startswith("#"):
        return None
    marker = MARK_NONE
    if text.startswith("@"):
        found, text = _openssh_marker(text)
        if found is None:
            return None
        marker = found
    fields = _FIELD_SPLIT.split(text.strip(" \t\r"), 3)
    if len(fields) < 3:
        return None
    hosts, key_type, key_text = fields[:3]
    # A certificate is kept: ssh reads it too (a plain line with one makes the key "changed",
    # a @revoked one revokes the certified key).
    blob = _decode_key(key_type, key_text)
    if blob is None:
        return None
    return KnownHostLine(marker, hosts, key_type, blob, line_number)


def revoked_blobs_any_form(line: str) -> tuple[str, bytes] | None:
    """(host field, key blob) of a line that says @revoked in any spelling or spacing.

    Stricter than OpenSSH on purpose: ssh skips `@revoked<TAB>host ...` and `@REVOKED`, so a key
    the user revoked would be trusted. Benchbay refuses it.
    """
    fields = _FIELD_SPLIT.split(line.strip(" \t\r\n"), 4)
    if len(fields) < 4 or fields[0].lower() != MARK_REVOKED:
        return None
    blob = _decode_key(fields[2], fields[3])
    return (fields[1], blob) if blob is not None else None


def parse_text(text: str) -> list[KnownHostLine]:
    """Every line ssh would use, plus @revoked lines in the forms ssh would skip."""
    entries: list[KnownHostLine] = []
    for number, line in enumerate(text.splitlines(), start=1):
        entry = parse_line(line, number)
        if entry is None:
            lenient = revoked_blobs_any_form(line)
            if lenient is not None:
                hosts, blob = lenient
                entry = KnownHostLine(MARK_REVOKED, hosts, _blob_type(blob) or "", blob, number)
        if entry is not None:
            entries.append(entry)
    return entries


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    # OpenSSH patterns know only `*` and `?`; brackets in "[host]:port" are literal.
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.S)


def match_pattern(name: str, pattern: str) -> bool:
    """match.c match_pattern: the whole name against one pattern with `*` and `?`."""
    if "*" not in pattern and "?" not in pattern:
        return name == pattern  # most lines: no regex needed (a 10,000-line file stays fast)
    return _pattern_regex(pattern).fullmatch(name) is not None


def match_pattern_list(name: str, patterns: str, lower: bool = True) -> int:
    """match.c match_pattern_list (dolower=lower): 1 match, -1 negated match, 0 no match."""
    found = 0
    for pattern in patterns.split(","):
        negated = pattern.startswith("!")
        if negated:
            pattern = pattern[1:]
        if match_pattern(name, pattern.lower() if lower else pattern):
            if negated:
                return -1
            found = 1
    return found


def hash_name(name: str, salt: bytes) -> str:
    """A hashed known_hosts name (`ssh-keygen -H`): |1|base64(salt)|base64(HMAC-SHA1(salt, name))."""
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return _HASH_MAGIC + base64.b64encode(salt).decode() + "|" + base64.b64encode(digest).decode()


def _hashed_matches(field: str, name: str) -> bool:
    salt_text = field[len(_HASH_MAGIC):].split("|", 1)[0]
    try:
        salt = base64.b64decode(salt_text, validate=True)
    except (binascii.Error, ValueError):
        return False
    if len(salt) != hashlib.sha1().digest_size:
        return False
    # The whole field must be this one hash: ssh never matches a hash inside a comma list.
    return hmac.compare_digest(hash_name(name, salt), field)


def hosts_match(hosts: str, name: str) -> bool:
    """Whether a line's host field covers `name` ("host" or "[host]:port"), as ssh decides."""
    name = name.lower()
    if hosts.startswith(_HASH_MAGIC):
        return _hashed_matches(hosts, name)
    return match_pattern_list(name, hosts) == 1
