"""What the host views read and return: the editor's own record, the list's view of a host, and
the authentication choices app hands the editor.

The engine owns the host type; the editor builds values, so it has its own record with the same
field names, and app converts at the one place the editor is opened.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol


@dataclass(frozen=True)
class HostFields:
    """A host as the editor shows and returns it; empty fields are filled from ~/.ssh/config."""

    name: str
    address: str = ""
    port: int | None = None
    user: str = ""
    auth: str = ""          # an AuthChoice value
    key_path: str = ""
    jump: str = ""
    keyring: bool = False
    test_dir: str = ""
    run_dir: str = ""
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    def with_changes(self, **changes: Any) -> HostFields:
        return replace(self, **changes)


class HostView(Protocol):
    """A host as the host list reads it."""

    @property
    def name(self) -> str: ...
    @property
    def address(self) -> str: ...
    @property
    def port(self) -> int | None: ...
    @property
    def user(self) -> str: ...
    @property
    def notes(self) -> str: ...
    @property
    def is_local(self) -> bool: ...


@dataclass(frozen=True)
class AuthChoice:
    """One way to log in, as the editor offers it."""

    value: str
    label: str
    needs_key: bool = False        # the key file field applies
    asks_password: bool = False    # a password may be kept in the keyring
