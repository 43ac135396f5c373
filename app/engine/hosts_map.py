"""The store keeps HostRecords, a connection needs HostSpecs: the workbench maps one to the other here;
and host groups (tags), which the command line and the window pick hosts by."""
from __future__ import annotations

import re
from dataclasses import asdict

from app.errors import AppError
from remote.host_checks import address_problem, ssh_user_problem
from remote.hostspec import AUTH_METHODS, HostSpec
from storage.hosts import check_host_name
from storage.records import HostRecord

# A tag names a group of hosts (a rack, a room, a customer): `benchbay run @rack3` picks them all.
TAG_RULE = "letters, digits, dots, dashes and underscores, beginning with a letter or digit (at most 64)"
_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
GROUP_PREFIX = "@"    # where a host name is asked for, @TAG means every host with that tag


def tag_problem(tag: str) -> str:
    """Why `tag` cannot be a host's tag ("" when it can)."""
    if not _TAG.fullmatch(tag):
        shown = tag if len(tag) <= 40 else tag[:40] + "..."
        return f"invalid tag {shown!r}: use {TAG_RULE}"
    return ""


def hosts_tagged(specs: list[HostSpec], tag: str) -> list[str]:
    """Names of the hosts carrying `tag` (case-insensitive, as users type rack names), in inventory order."""
    wanted = tag.lower()
    return [spec.name for spec in specs if any(t.lower() == wanted for t in spec.tags)]


def host_groups(specs: list[HostSpec]) -> dict[str, list[str]]:
    """Every tag and its hosts, tags sorted as people read them (rack2 before rack10)."""
    groups: dict[str, list[str]] = {}
    for spec in specs:
        for tag in spec.tags:
            groups.setdefault(tag, []).append(spec.name)
    return dict(sorted(groups.items(), key=lambda item: natural_key(item[0])))


def natural_key(text: str) -> tuple:
    """rack2 < rack10: digits compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                 for part in re.split(r"(\d+)", text) if part)


def spec_from_record(record: HostRecord) -> HostSpec:
    # the price is no connection's business: the store keeps it (HostRepository.set_price)
    return HostSpec(**{key: value for key, value in asdict(record).items() if key != "price"})


def record_from_spec(spec: HostSpec) -> HostRecord:
    return HostRecord(**asdict(spec))


def connection_problem(address: str, user: str, key_path: str) -> str:
    """Why every later connection would refuse this address, user or key file ("" when none would):
    the rules those connections apply, for `host add` and the host editor to refuse at once."""
    problem = (address and address_problem(address)) or (user and ssh_user_problem(user))
    if not problem and key_path:
        from remote.connect import key_file_problem  # paramiko loads only when a key is given
        problem = key_file_problem(key_path)
    return problem


def checked_record(spec: HostSpec, renaming_from: str = "") -> HostRecord:
    """The record to store for spec; raises when the inventory must refuse it.

    The store checks names and ports itself; which authentication methods exist is known here only.
    The name is checked first so that a host wrong in both ways is refused for its name, as it always was.
    """
    check_host_name(spec.name, renaming_from)
    if spec.auth not in AUTH_METHODS:
        raise AppError(f"host {spec.name}: unknown authentication method {spec.auth!r}")
    problem = connection_problem(spec.address, spec.user, spec.key_path)
    if problem:
        raise AppError(f"host {spec.name}: {problem}")
    for tag in spec.tags:
        problem = tag_problem(tag)
        if problem:
            raise AppError(f"host {spec.name}: {problem}")
    return record_from_spec(spec)
