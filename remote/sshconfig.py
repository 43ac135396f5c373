"""The user's ~/.ssh/config: what a host name really means, as `ssh NAME` would see it.

Fields the user set on a Benchbay host win; empty ones come from the ssh config. A missing
config file is an empty config. Reading follows OpenSSH (remote/ssh_config_read.py); tokens
are expanded here as ssh.c expands them.
"""
from __future__ import annotations

import getpass
import hashlib
import os
import pwd
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from remote.errors import ConnectError
from remote.host_checks import ssh_host_problem, ssh_user_problem
from remote.hostspec import HostSpec
from remote.ssh_config_read import ConfigError, Directive, LookupState, apply, match_host, read_file

DEFAULT_SSH_CONFIG = Path("~/.ssh/config")
# Options Benchbay uses and that take exactly one argument (ssh: "extra arguments at end of line").
_ONE_ARGUMENT = ("hostname", "user", "port", "identityfile", "hostkeyalias")


@dataclass(frozen=True)
class ResolvedHost:
    """Where and as whom to connect, after ~/.ssh/config is applied."""

    alias: str                      # the name looked up in the ssh config
    address: str                    # what to connect to (HostName), also the known_hosts name
    port: int
    user: str
    key_files: list[str] = field(default_factory=list)  # expanded IdentityFile paths, in order
    proxy_jump: str | None = None   # ProxyJump as written ("none" becomes None)
    proxy_command: str | None = None  # ProxyCommand as written ("none" becomes None); not supported


def _is_concrete(pattern: str) -> bool:
    return bool(pattern) and not pattern.startswith("!") and not any(c in pattern for c in "*?")


def port_number(text: str) -> int | None:
    """misc.c a2port: 1..65535, or a service name from /etc/services; None if neither."""
    if text.isdigit():
        value = int(text)
        return value if 0 < value < 65536 else None
    try:
        return socket.getservbyname(text, "tcp")
    except OSError:
        return None


def percent_expand(text: str, tokens: dict[str, str], where: str) -> str:
    """misc.c percent_expand plus ${ENV} (percent_dollar_expand); unknown tokens are errors, as in ssh."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "$" and text.startswith("${", i):
            end = text.find("}", i + 2)
            if end < 0:
                raise ConfigError(f"ssh config: {where}: unterminated ${{ in {text!r}")
            name = text[i + 2:end]
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name not in os.environ:
                raise ConfigError(f"ssh config: {where}: environment variable ${{{name}}} is not set")
            out.append(os.environ[name])
            i = end + 1
        elif char == "%":
            key = text[i + 1:i + 2]
            if key == "%":
                out.append("%")
            elif key and key in tokens:
                out.append(tokens[key])
            else:
                raise ConfigError(f"ssh config: {where}: unknown token %{key} in {text!r}")
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _tilde(path: str) -> str:
    # misc.c tilde_expand_filename: ~ is the home directory from the password database, not $HOME.
    if not path.startswith("~"):
        return path
    name, _, rest = path[1:].partition("/")
    try:
        home = pwd.getpwnam(name).pw_dir if name else pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        raise ConfigError(f"ssh config: no such user {name!r} in {path!r}") from None
    return home.rstrip("/") + "/" + rest if rest or path.endswith("/") else home


def _local_user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return getpass.getuser()


class SSHConfigFile:
    """An ssh config file (default ~/.ssh/config), read once on first use."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path if path is not None else DEFAULT_SSH_CONFIG).expanduser()
        self._directives: list[Directive] | None = None

    def _load(self) -> list[Directive]:
        if self._directives is not None:
            return self._directives
        ssh_dir = os.path.expanduser("~/.ssh")
        # ssh checks the permissions of ~/.ssh/config, not of a file given with -F.
        own = self.path == Path(ssh_dir, "config")
        try:
            self._directives = read_file(str(self.path), ssh_dir, check_permissions=own)
        except (FileNotFoundError, NotADirectoryError):
            self._directives = []
        except ConnectError:
            raise
        except OSError as exc:
            raise ConnectError(f"cannot read ssh config {self.path}: {exc.strerror or exc}") from None
        return self._directives

    def aliases(self) -> list[str]:
        """Host names written literally in `Host` lines (no wildcards or negations), in file order."""
        names: list[str] = []

        def walk(directives: list[Directive]) -> None:
            for directive in directives:
                if directive.keyword == "host":
                    names.extend(p for p in directive.args if _is_concrete(p) and p not in names)
                for _path, children in directive.includes:
                    walk(children)

        walk(self._load())
        return names

    def _pass(self, host: str, original: str, final: bool, options: dict) -> LookupState:
        state = LookupState(host, original, _local_user(), final, options)
        state.expand_exec = lambda command, opts: self._expand(
            command, {**opts, "hostname": match_host(state)}, original, "Match exec"
        )

        def set_option(directive: Directive, active: bool) -> None:
            key, args = directive.keyword, directive.args
            if key in _ONE_ARGUMENT and len(args) != 1:
                why = "missing argument" if not args else "extra arguments at end of line"
                raise ConfigError(f"ssh config {directive.where}: {why} for {key}")
            if key == "port" and port_number(args[0]) is None:
                raise ConfigError(f"ssh config {directive.where}: bad Port {args[0]!r}")
            if not active or not args:
                return
            if key == "identityfile":
                files = options.setdefault("identityfile", [])
                if args[0] not in files:  # ssh drops a repeated IdentityFile
                    files.append(args[0])
            elif key in ("proxyjump", "proxycommand"):
                # Whichever of the two comes first wins; the other is ignored (readconf.c parse_jump).
                if "proxyjump" not in options and "proxycommand" not in options:
                    options[key] = " ".join(args) if key == "proxycommand" else _jump_text(args, directive.where)
            elif key not in options:
                options[key] = args[0]

        apply(self._load(), state, set_option)
        return state

    def lookup(self, name: str, user: str = "") -> dict:
        """`ssh -G NAME` (`ssh -G -l USER NAME` with a user) for the options Benchbay uses: hostname,
        user, port, identityfile, proxyjump.

        HostName is expanded and lower-cased, IdentityFile paths are expanded, defaults filled in.
        A user given here is set before the config is read, as ssh does, so `Match user` sees it.
        """
        _check_names(name, user)
        options: dict = {"user": user} if user else {}
        state = self._pass(name, name, False, options)
        hostname = percent_expand(options.get("hostname", name), {"h": name}, "HostName").lower()
        if state.want_final_pass:
            # `Match final`: ssh reads the config again, testing Host lines against the HostName.
            options["hostname"] = hostname
            self._pass(hostname, name, True, options)
        options["hostname"] = hostname
        options.setdefault("user", _local_user())
        options["port"] = str(port_number(options.get("port", "22")))
        options["identityfile"] = [
            self._expand(_tilde(path), options, name, "IdentityFile") for path in options.get("identityfile", [])
        ]
        if str(options.get("proxyjump", "")).lower() == "none":
            del options["proxyjump"]
        if str(options.get("proxycommand", "")).lower() == "none":
            del options["proxycommand"]
        return options

    def _expand(self, text: str, options: dict, original: str, where: str) -> str:
        local = socket.gethostname()
        host = options.get("hostname", original)
        port = str(port_number(str(options.get("port", "22"))) or 22)
        user = options.get("user") or _local_user()
        tokens = {
            "C": hashlib.sha1((local + host + port + user).encode()).hexdigest(),
            "L": local.split(".")[0], "i": str(os.getuid()), "k": options.get("hostkeyalias", original),
            "l": local, "n": original, "d": pwd.getpwuid(os.getuid()).pw_dir, "h": host, "p": port,
            "r": user, "u": _local_user(),
        }
        return percent_expand(text, tokens, where)

    def resolve(self, spec: HostSpec) -> ResolvedHost:
        """Fill the empty fields of `spec` from the ssh config.

        The config is looked up by the host's name when that is a `Host` alias or when no
        address is set (`ssh NAME`), otherwise by the address (so `Host 10.0.*` blocks apply).
        """
        alias = spec.name if (not spec.address or spec.name in self.aliases()) else spec.address
        options = self.lookup(alias, spec.user) if alias else {}
        address = spec.address or options.get("hostname") or spec.name
        port = spec.port or int(options.get("port") or 22)
        user = spec.user or options.get("user") or getpass.getuser()
        key_files: list[str] = []
        for path in ([os.path.expanduser(spec.key_path)] if spec.key_path else []) + options.get("identityfile", []):
            if path not in key_files:
                key_files.append(path)
        jump = options.get("proxyjump")
        return ResolvedHost(
            alias=alias, address=address, port=port, user=user, key_files=key_files,
            proxy_jump=jump.strip() if jump else None, proxy_command=options.get("proxycommand"),
        )


def _check_names(host: str, user: str) -> None:
    problem = ssh_host_problem(host) or ssh_user_problem(user)
    if problem:
        raise ConfigError(problem)


def _jump_text(args: list[str], where: str) -> str:
    # ssh reads ProxyJump as one word (a comma list); a space inside it is an error.
    if len(args) != 1:
        raise ConfigError(f"ssh config {where}: invalid ProxyJump {' '.join(args)!r}")
    return args[0]


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
