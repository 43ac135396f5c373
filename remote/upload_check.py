"""Checking an uploaded file on the host: size and SHA-256 (cksum's CRC where there is no SHA-256 tool).

A full disk can cut an SFTP upload short without an error reaching the client (the server's answer to a
pipelined write is lost once the file is closed), and a truncated agent.pyz then fails as a baffling
SyntaxError. So every upload is read back on the host before anything runs it.
"""
from __future__ import annotations

import hashlib
import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from remote.errors import RemoteCommandError
from remote.run_dir import bytes_text, parse_df
from remote.transport import Transport

# sha256sum (GNU, busybox), shasum (BSD, macOS), python3, else POSIX cksum: whichever the host has
_HASH = (
    "if command -v sha256sum >/dev/null 2>&1; then printf 'sha256 %s\\n' \"$(sha256sum < \"$f\")\"; "
    "elif command -v shasum >/dev/null 2>&1; then printf 'sha256 %s\\n' \"$(shasum -a 256 < \"$f\")\"; "
    "elif command -v python3 >/dev/null 2>&1; then python3 -c 'import hashlib, sys; "
    "print(\"sha256 \" + hashlib.sha256(sys.stdin.buffer.read()).hexdigest())' < \"$f\"; "
    "elif command -v cksum >/dev/null 2>&1; then printf 'cksum %s\\n' \"$(cksum < \"$f\")\"; fi"
)


@dataclass(frozen=True)
class Uploaded:
    size: int | None           # None: the file is not there
    method: str = ""           # sha256 | cksum | "" (no tool: size only)
    digest: str = ""


def check_script(remote_path: str) -> str:
    """Shell code printing `size N` and `sha256 HEX` (or `cksum CRC N`) for the file; `missing` if absent."""
    return (f"f={shlex.quote(remote_path)}; [ -f \"$f\" ] || {{ echo missing; exit 0; }}; "
            "printf 'size %s\\n' \"$(($(wc -c < \"$f\")))\"; " + _HASH)


def parse_check(text: str) -> Uploaded:
    size, method, digest = None, "", ""
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "size" and words[1].isdigit():
            size = int(words[1])
        elif len(words) >= 2 and words[0] == "sha256" and re.fullmatch(r"[0-9a-f]{64}", words[1]):
            method, digest = "sha256", words[1]
        elif len(words) >= 2 and words[0] == "cksum" and words[1].isdigit():
            method, digest = "cksum", words[1]
    return Uploaded(size, method, digest)


def mismatch(data: bytes, uploaded: Uploaded, host: str, remote_path: str) -> str:
    """"" when the file on the host is `data`; otherwise the one line that says what went wrong."""
    directory, name = posixpath.split(remote_path)
    where = f"{name} to {host}:{directory}"
    if uploaded.size is None:
        return f"upload of {where} failed: the file is not there afterwards"
    if uploaded.size != len(data):
        return (f"upload of {where} was cut short ({uploaded.size} of {len(data)} bytes): no space left? "
                f"Free space in {directory}")
    # only the digest the host gave: the pure-Python cksum costs tens of ms per upload, per host
    digests = {"sha256": lambda: hashlib.sha256(data).hexdigest(), "cksum": lambda: str(posix_cksum(data))}
    expected = digests[uploaded.method]() if uploaded.method in digests else None
    if expected is not None and expected != uploaded.digest:
        return f"upload of {where} arrived damaged ({uploaded.method} differs); try again"
    return ""


GUARD_MARK = "@uploads-"                       # @uploads-bad | @uploads-unverified, then each file's check
_GUARD_SEPARATOR = "@@benchbay-next-check@@"
# SHA-256 of "$f" into $h, empty where the host has no SHA-256 tool
_SHA256 = ("h=; if command -v sha256sum >/dev/null 2>&1; then h=$(sha256sum < \"$f\"); "
           "elif command -v shasum >/dev/null 2>&1; then h=$(shasum -a 256 < \"$f\"); fi; h=${h%% *}")


def guard_script(files: Sequence[tuple[bytes, str]]) -> str:
    """sh to put before a command that runs uploads (data, remote path): it goes on only when each file is on
    the host whole (size and SHA-256), else prints GUARD_MARK + bad|unverified and each file's check_script
    output, and exits 1. Checking and starting in one command saves a round trip (and a login shell) per run.
    """
    lines = ["g=ok"]
    for data, path in files:
        lines.append(f"f={shlex.quote(path)}; if [ ! -f \"$f\" ] || [ \"$(($(wc -c < \"$f\")))\" != {len(data)} ]; "
                     f"then g=bad; else {_SHA256}; if [ -z \"$h\" ]; then [ $g = ok ] && g=unverified; "
                     f"elif [ \"$h\" != {hashlib.sha256(data).hexdigest()} ]; then g=bad; fi; fi")
    checks = "; ".join(f"( {check_script(path)} ); echo {_GUARD_SEPARATOR}" for _data, path in files)
    lines.append(f"if [ $g != ok ]; then echo {GUARD_MARK}$g; {checks}; exit 1; fi")
    return "\n".join(lines) + "\n"


def guard_problem(text: str, files: Sequence[tuple[bytes, str]], host: str) -> tuple[str, str] | None:
    """None when the guard let the command run; else (verdict, the first file's problem or "")."""
    head, mark, rest = text.partition(GUARD_MARK)
    if not mark or (head and not head.endswith("\n")):
        return None
    verdict, _newline, checks = rest.partition("\n")
    parts = checks.split(_GUARD_SEPARATOR) + [""] * len(files)
    problems = [mismatch(data, parse_check(part), host, path)
                for (data, path), part in zip(files, parts, strict=False)]
    return verdict.strip(), next((problem for problem in problems if problem), "")


def verify_upload(transport: Transport, data: bytes, remote_path: str) -> None:
    """Read the uploaded file back on the host; a short or damaged one is removed (nothing must run it)
    and named in one RemoteCommandError."""
    problem = mismatch(data, parse_check(transport.run(check_script(remote_path), timeout=60).text()),
                       transport.name, remote_path)
    if problem:
        transport.run(f"rm -f -- {shlex.quote(remote_path)}", timeout=30)
        raise RemoteCommandError(problem)


def free_space_text(df_output: str, directory: str) -> str:
    """"DIR has N KB free" from `df -Pk DIR`, or "" when df said nothing useful."""
    parsed = parse_df(df_output)
    return f"{directory} has {bytes_text(parsed[0])} free" if parsed else ""


def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else (crc << 1)
        table.append(crc & 0xFFFFFFFF)
    return table


_CRC_TABLE = _crc_table()


def posix_cksum(data: bytes) -> int:
    """The CRC that POSIX `cksum` prints: CRC-32/CKSUM over the data, then its length's bytes."""
    crc = 0
    for byte in data:
        crc = _CRC_TABLE[((crc >> 24) ^ byte) & 0xFF] ^ ((crc << 8) & 0xFFFFFFFF)
    length = len(data)
    while length:
        crc = _CRC_TABLE[((crc >> 24) ^ length) & 0xFF] ^ ((crc << 8) & 0xFFFFFFFF)
        length >>= 8
    return ~crc & 0xFFFFFFFF
