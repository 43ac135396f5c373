"""Small pieces the CLI commands share: output, prompts, usage errors, hosts named by group (@TAG)."""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from app.errors import AppError

if TYPE_CHECKING:
    from remote.hostspec import HostSpec

GROUP_PREFIX = "@"   # app.engine.hosts_map's, said again: importing it loads the store's code, which --help needs not


class UsageError(AppError):
    """Wrong use of the command line: exit 2."""


# C0 and C1 control characters but tab and newline, DEL, and the bidirectional overrides that can
# make text read differently from what it is: names and notes come from users and imported files.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """text with every unsafe character shown as a \\uXXXX escape (also valid inside JSON strings)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class EscapingStream:
    """Wraps stdout or stderr so nothing the CLI prints can move the cursor, recolour or retitle the
    terminal: a host name or a note holding escape codes is shown escaped, never obeyed."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class HostInventory(Protocol):
    def list_hosts(self) -> list[HostSpec]: ...


def expand_hosts(bench: HostInventory, names: list[str]) -> list[str]:
    """Host arguments as hosts: NAME itself, @TAG every host with that tag; each host once, in the order given.

    An unknown tag is a UsageError naming how to tag hosts; unknown names are left to the command
    (it says how to add them).
    """
    from app.engine.hosts_map import hosts_tagged, tag_problem

    hosts: dict[str, None] = {}
    inventory: list[HostSpec] | None = None
    for name in names:
        if not name.startswith(GROUP_PREFIX):
            hosts.setdefault(name)
            continue
        tag = name[len(GROUP_PREFIX):]
        problem = tag_problem(tag)
        if problem:
            raise UsageError(f"{name}: {problem}")
        inventory = inventory if inventory is not None else bench.list_hosts()
        tagged = hosts_tagged(inventory, tag)
        if not tagged:
            known = sorted({t for spec in inventory for t in spec.tags})
            raise UsageError(f"no host has the tag {tag!r}: tag hosts with `benchbay host edit NAME --tag {tag}`"
                             + (f" (tags in use: {', '.join(known)})" if known else ""))
        for host in tagged:
            hosts.setdefault(host)
    return list(hosts)


def one_host(name: str, command: str, instead: str) -> str:
    """`name` itself, or a UsageError saying that `command` takes one host when it names a group (@TAG)."""
    if name.startswith(GROUP_PREFIX):
        raise UsageError(f"{command} takes one host, not a group ({name[:70]}): {instead}")
    return name


def changed_tags(current: tuple[str, ...], add: list[str], remove: list[str]) -> tuple[str, ...]:
    """A host's tags after --tag (add) and --untag (remove); a leading @ is allowed, case is kept as first given."""
    from app.engine.hosts_map import tag_problem

    gone = {tag.removeprefix(GROUP_PREFIX).lower() for tag in remove}
    tags = [tag for tag in current if tag.lower() not in gone]
    for given in add:
        tag = given.strip().removeprefix(GROUP_PREFIX)
        problem = tag_problem(tag)
        if problem:
            raise UsageError(f"--tag: {problem}")
        if tag.lower() not in {t.lower() for t in tags}:
            tags.append(tag)
    return tuple(tags)


MAX_ID = 2**63 - 1          # the largest id any store can hold (a signed 64-bit integer)
MAX_SETTING_DIGITS = 30     # a whole number longer than this is no test parameter


def stored_id(text: str) -> int:
    """argparse type of a run or comparison id: a whole number a store can hold."""
    digits = text.strip()
    if not digits.lstrip("+-").isdigit():
        raise argparse.ArgumentTypeError(f"not an id: {text[:40]!r}")
    if len(digits.lstrip("+-0")) > len(str(MAX_ID)) or not 1 <= int(digits) <= MAX_ID:
        raise argparse.ArgumentTypeError(f"no id is {text[:40]}{'...' if len(text) > 40 else ''}: ids are 1 to "
                                         f"{MAX_ID}")
    return int(digits)


def positive_count(text: str) -> int:
    """argparse type of a count such as --limit: a whole number of at least 1."""
    try:
        value = int(text) if len(text) <= 30 else None
    except ValueError:
        value = None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text[:40]!r}")
    return value


class _NotANumber(ValueError):
    pass


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotANumber(f"{text} is beyond the range of a number")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_SETTING_DIGITS:
        raise _NotANumber(f"a whole number of {len(text.lstrip('-'))} digits is too large")
    return int(text)


def _no_constant(name: str) -> float:
    raise _NotANumber(f"{name} is not a number a test can use")


def setting_value(key: str, text: str) -> Any:
    """The value of --set KEY=VALUE: JSON when it parses (numbers finite), else the text itself."""
    try:
        return json.loads(text, parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_no_constant)
    except _NotANumber as exc:
        raise UsageError(f"--set {key}: {exc}") from None
    except RecursionError:
        raise UsageError(f"--set {key}: the value is nested too deeply") from None
    except ValueError:
        return text


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=_json_default)
    sys.stdout.write("\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def interactive() -> bool:
    """True when a person can answer a question (stdin and stderr are terminals)."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def confirm(question: str) -> bool:
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=False)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=False))
    print(line.rstrip())
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)).rstrip())
