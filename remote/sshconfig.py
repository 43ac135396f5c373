"""The user's ~/.ssh/config, read through paramiko.SSHConfig: what a host name really means.

Fields the user set on a Benchbay host win; empty ones come from the ssh config, as
`ssh NAME` would use them. A missing config file is an empty config.
"""
from __future__ import annotations

import getpass
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from remote.errors import ConnectError
from remote.hostspec import HostSpec

DEFAULT_SSH_CONFIG = Path("~/.ssh/config")


@dataclass(frozen=True)
class ResolvedHost:
    """Where and as whom to connect, after ~/.ssh/config is applied."""

    alias: str                      # the name looked up in the ssh config
    address: str                    # what to connect to (HostName), also the known_hosts name
    port: int
    user: str
    key_files: list[str] = field(default_factory=list)  # expanded IdentityFile paths, in order
    proxy_jump: str | None = None   # ProxyJump as written ("none" becomes None)


def _is_concrete(pattern: str) -> bool:
    return bool(pattern) and not pattern.startswith("!") and not any(c in pattern for c in "*?")


class SSHConfigFile:
    """An ssh config file (default ~/.ssh/config), read once on first use."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path if path is not None else DEFAULT_SSH_CONFIG).expanduser()
        self._config: paramiko.SSHConfig | None = None
        self._aliases: list[str] = []

    def _load(self) -> paramiko.SSHConfig:
        if self._config is not None:
            return self._config
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError):
            text = ""
        except OSError as exc:
            raise ConnectError(f"cannot read ssh config {self.path}: {exc.strerror or exc}") from None
        try:
            config = paramiko.SSHConfig.from_text(text)
        except Exception as exc:  # paramiko raises ConfigParseError and plain errors for bad lines
            raise ConnectError(f"cannot parse ssh config {self.path}: {exc}") from None
        self._aliases = self._concrete_hosts(text)
        self._config = config
        return config

    @staticmethod
    def _concrete_hosts(text: str) -> list[str]:
        names: list[str] = []
        for line in text.splitlines():
            words = line.strip().replace("=", " ", 1).split(None, 1)
            if len(words) != 2 or words[0].lower() != "host":
                continue
            try:
                patterns = shlex.split(words[1])
            except ValueError:
                continue
            names.extend(p for p in patterns if _is_concrete(p) and p not in names)
        return names

    def aliases(self) -> list[str]:
        """Host names written literally in `Host` lines (no wildcards or negations), in file order."""
        self._load()
        return list(self._aliases)

    def lookup(self, name: str) -> dict:
        """paramiko's view of `ssh NAME`: lowercase keys, tokens (%h, %u, %r, ~) expanded."""
        config = self._load()
        try:
            return dict(config.lookup(name))
        except Exception as exc:  # Match exec, canonicalisation and the like can fail in odd ways
            raise ConnectError(f"ssh config {self.path}: cannot apply it to {name}: {exc}") from None

    def resolve(self, spec: HostSpec) -> ResolvedHost:
        """Fill the empty fields of `spec` from the ssh config.

        The config is looked up by the host's name when that is a `Host` alias or when no
        address is set (`ssh NAME`), otherwise by the address (so `Host 10.0.*` blocks apply).
        """
        self._load()
        alias = spec.name if (not spec.address or spec.name in self._aliases) else spec.address
        options = self.lookup(alias) if alias else {}
        address = spec.address or options.get("hostname") or spec.name
        port = spec.port or _port(options.get("port"), self.path, alias)
        user = spec.user or options.get("user") or getpass.getuser()
        key_files: list[str] = []
        for path in ([spec.key_path] if spec.key_path else []) + list(options.get("identityfile") or []):
            expanded = os.path.expanduser(path)
            if expanded not in key_files:
                key_files.append(expanded)
        jump = options.get("proxyjump")
        if jump is not None and jump.strip().lower() == "none":
            jump = None
        return ResolvedHost(
            alias=alias, address=address, port=port, user=user, key_files=key_files,
            proxy_jump=jump.strip() if jump else None,
        )


def _port(value: str | None, path: Path, alias: str) -> int:
    if value is None:
        return 22
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise ConnectError(f"ssh config {path}: bad Port {value!r} for {alias}")
    return port


def parse_jump(text: str) -> HostSpec:
    """`[ssh://][user@]host[:port]` (host may be [IPv6]) as a HostSpec named after the host."""
    rest = text.strip()
    if rest.startswith("ssh://"):
        rest = rest[len("ssh://"):]
    user, _, hostport = rest.rpartition("@")
    host, port_text = hostport, ""
    if hostport.startswith("["):
        host, _, tail = hostport[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    elif hostport.count(":") == 1:
        host, port_text = hostport.split(":")
    port = None
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ConnectError(f"bad jump host {text!r}: the port must be a number")
        port = int(port_text)
    if not host:
        raise ConnectError(f"bad jump host {text!r}")
    return HostSpec(name=host, port=port, user=user)
