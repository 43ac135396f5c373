"""ssh_config files read the way OpenSSH's readconf.c reads them: lines, Include, Host and Match.

paramiko.SSHConfig differs from ssh in ways a user notices, so it is not used here:
- it ignores `Include`, so hosts defined in included files do not exist;
- it keeps `# comment` at the end of a line in the value ("Port 2301 # lab" is a bad port);
- it tests `Match host` against HostName before `%h` is expanded, and re-reads the whole file a
  second time even without `Match final` (so a Match can apply that ssh would skip);
- its Host patterns are fnmatch patterns (`[abc]` is a class; ssh knows only `*` `?` `!`).
Each rule below cites what ssh does; `ssh -G` is the reference the tests compare with.
"""
from __future__ import annotations

import glob
import os
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from remote.errors import ConnectError
from remote.known_hosts_parse import match_pattern, match_pattern_list

MAX_INCLUDE_DEPTH = 16          # readconf.c READCONF_MAX_DEPTH
MAX_FILES = 512                 # ours: a file included twice by itself would otherwise take 2^16 reads
MATCH_EXEC_TIMEOUT = 10.0       # seconds; ssh has none, but a hung command must not hang us
_WHITESPACE = " \t\r\n\f"


class ConfigError(ConnectError):
    """The ssh config cannot be used; ssh itself refuses it for the same reason."""


@dataclass
class Directive:
    keyword: str                  # lowercase
    args: list[str]
    where: str                    # "FILE line N", for messages
    includes: list[tuple[str, list[Directive]]] = field(default_factory=list)  # Include: files read


def split_args(text: str, where: str) -> list[str]:
    """misc.c argv_split(..., terminate_on_comment=1): words, quotes, backslash escapes, # comments."""
    args: list[str] = []
    i, size = 0, len(text)
    while i < size:
        if text[i] in " \t":
            i += 1
            continue
        if text[i] == "#":  # a word starting with # ends the line: "Port 2301 # lab" is Port 2301
            break
        word: list[str] = []
        quote = ""
        while i < size:
            char = text[i]
            if char == "\\" and i + 1 < size and (text[i + 1] in "'\"\\" or (not quote and text[i + 1] == " ")):
                i += 1
                word.append(text[i])
            elif not quote and char in " \t":
                break
            elif not quote and char in "'\"":
                quote = char
            elif quote and char == quote:
                quote = ""
            else:
                word.append(char)
            i += 1
        if quote:
            raise ConfigError(f"ssh config {where}: invalid quotes")
        args.append("".join(word))
    return args


def split_keyword(line: str) -> tuple[str, str]:
    """(keyword, rest) as readconf.c strdelim() splits: whitespace and/or one '='."""
    text = line.lstrip(_WHITESPACE)
    end = 0
    while end < len(text) and text[end] not in _WHITESPACE + "=":
        end += 1
    keyword, delimiter, rest = text[:end], text[end:end + 1], text[end + 1:]
    if not keyword and delimiter == "=":
        return split_keyword(rest)  # "=word ...": ssh takes the next word as the keyword
    if delimiter != "=" and rest.startswith("="):
        rest = rest[1:].lstrip(_WHITESPACE)
    return keyword, rest


def _check_permissions(path: str) -> None:
    # readconf.c SSHCONF_CHECKPERM: ssh refuses a config others may write, or owned by someone else.
    info = os.stat(path)
    if (info.st_uid not in (0, os.getuid())) or (info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        raise ConfigError(
            f"bad owner or permissions on ssh config {path} (ssh refuses it too): chmod go-w {path}"
        )


def read_file(path: str, ssh_dir: str, depth: int = 0, check_permissions: bool = False,
              budget: list[int] | None = None) -> list[Directive]:
    """The directives of one config file, with its Include directives read (recursively)."""
    budget = budget if budget is not None else [MAX_FILES]
    budget[0] -= 1
    if depth > MAX_INCLUDE_DEPTH or budget[0] < 0:
        raise ConfigError(
            f"ssh config {path}: Include nested more than {MAX_INCLUDE_DEPTH} deep or reading more than "
            f"{MAX_FILES} files: does a file include itself?"
        )
    if check_permissions:
        _check_permissions(path)
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = handle.read().splitlines()
    directives: list[Directive] = []
    for number, line in enumerate(lines, start=1):
        where = f"{path} line {number}"
        keyword, rest = split_keyword(line.rstrip(_WHITESPACE))
        if not keyword or keyword.startswith("#"):
            continue
        keyword = keyword.lower()
        if not rest:
            raise ConfigError(f"ssh config {where}: no argument after keyword {keyword!r}")
        directive = Directive(keyword, split_args(rest, where), where)
        if keyword == "include":
            directive.includes = _read_includes(directive, ssh_dir, depth, budget)
        directives.append(directive)
    return directives


def _read_includes(directive: Directive, ssh_dir: str, depth: int,
                   budget: list[int]) -> list[tuple[str, list[Directive]]]:
    found: list[tuple[str, list[Directive]]] = []
    for arg in directive.args:
        # Relative paths are relative to ~/.ssh (not to the including file); globs allowed.
        pattern = arg if arg.startswith(("/", "~")) else os.path.join(ssh_dir, arg)
        for path in sorted(glob.glob(os.path.expanduser(pattern))):
            if os.path.isdir(path):
                continue
            try:
                found.append((path, read_file(path, ssh_dir, depth + 1, True, budget)))
            except OSError as exc:
                raise ConfigError(f"ssh config {directive.where}: cannot read {path}: {exc.strerror or exc}") from None
    return found


@dataclass
class LookupState:
    """What Host and Match lines are tested against during one pass."""

    host: str                      # Host patterns are tested against this (case-sensitive)
    original_host: str             # what the user typed
    local_user: str
    final_pass: bool
    options: dict = field(default_factory=dict)
    want_final_pass: bool = False
    expand_exec: Callable[[str, dict], str] | None = None


def _host_line_matches(args: list[str], host: str) -> bool:
    active = False
    for pattern in args:
        negated = pattern.startswith("!")
        # One pattern per word, case-sensitive: `Host a,b` is the literal name "a,b" to ssh.
        if match_pattern(host, pattern[1:] if negated else pattern):
            if negated:
                return False
            active = True
    return active


def match_host(state: LookupState) -> str:
    """What `Match host` and `%h` in `Match exec` see: HostName so far, with %h expanded."""
    hostname = state.options.get("hostname")
    return hostname.replace("%h", state.host).replace("%%", "%") if hostname else state.host


def _run_exec(command: str, where: str) -> bool:
    shell = os.environ.get("SHELL") or "/bin/sh"  # ssh runs the command with the user's shell
    try:
        done = subprocess.run(
            [shell, "-c", command], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=MATCH_EXEC_TIMEOUT, check=False,
        )
    except subprocess.TimeoutExpired:
        raise ConfigError(f"ssh config {where}: Match exec did not finish within {MATCH_EXEC_TIMEOUT:g} s") from None
    except OSError as exc:
        raise ConfigError(f"ssh config {where}: Match exec cannot run: {exc.strerror or exc}") from None
    return done.returncode == 0


def match_line(directive: Directive, state: LookupState) -> bool:
    """readconf.c match_cfg_line: all criteria must hold; errors are ConfigError."""
    args, where = list(directive.args), directive.where
    result, attributes = True, 0
    while args:
        attribute = args.pop(0)
        negate = attribute.startswith("!")
        name = attribute[1:].lower() if negate else attribute.lower()
        if name == "all":
            if attributes or args:
                raise ConfigError(f"ssh config {where}: 'all' cannot be combined with other Match attributes")
            return result and not negate
        attributes += 1
        if name in ("canonical", "final"):
            if name == "final":
                state.want_final_pass = True
            passed = state.final_pass
        else:
            if not args:
                raise ConfigError(f"ssh config {where}: missing Match criteria for {name}")
            value = args.pop(0)
            if name == "host":
                passed = match_pattern_list(match_host(state).lower(), value) == 1
            elif name == "originalhost":
                passed = match_pattern_list(state.original_host.lower(), value) == 1
            elif name == "user":
                passed = match_pattern_list(state.options.get("user") or state.local_user, value, lower=False) == 1
            elif name == "localuser":
                passed = match_pattern_list(state.local_user, value, lower=False) == 1
            elif name == "exec":
                if not result:  # ssh skips the command when an earlier criterion failed
                    continue
                command = state.expand_exec(value, state.options) if state.expand_exec else value
                passed = _run_exec(command, where)
            else:
                raise ConfigError(f"ssh config {where}: unsupported Match attribute {name}")
        if passed == negate:
            result = False
    if not attributes:
        raise ConfigError(f"ssh config {where}: Match needs one or more attributes")
    return result


def apply(directives: list[Directive], state: LookupState, set_option: Callable[[Directive, bool], None],
          active: bool = True, never_match: bool = False) -> None:
    """Walk the directives as readconf.c does, calling set_option for every option line.

    set_option gets inactive lines too (with active=False): ssh checks their values as well.
    """
    for directive in directives:
        if directive.keyword == "host":
            active = False if never_match else _host_line_matches(directive.args, state.host)
        elif directive.keyword == "match":
            matched = match_line(directive, state)
            active = matched and not never_match
        elif directive.keyword == "include":
            for _path, children in directive.includes:
                # An Include in an inactive block never activates (SSHCONF_NEVERMATCH), and a
                # Host or Match in the included file does not change the including file's state.
                apply(children, state, set_option, active, never_match or not active)
        else:
            set_option(directive, active)
