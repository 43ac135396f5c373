"""The host inventory. Speaks HostSpec; the built-in host `local` is never stored."""
from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from remote.hostspec import AUTH_METHODS, LOCAL_HOST_NAME, HostSpec
from storage.errors import DuplicateHost, NotFound, StoreError
from storage.models import FactsSnapshot, Host, Run, utcnow

SessionFactory = Callable[[], AbstractContextManager[Session]]


def _spec_from_row(row: Host) -> HostSpec:
    return HostSpec(
        name=row.name,
        address=row.address,
        port=row.port,
        user=row.user,
        auth=row.auth,
        key_path=row.key_path,
        jump=row.jump,
        keyring=row.keyring,
        test_dir=row.test_dir,
        run_dir=row.run_dir or "",
        notes=row.notes,
        tags=tuple(row.tags or ()),
    )


def _copy_spec_to_row(spec: HostSpec, row: Host) -> None:
    row.name = spec.name
    row.address = spec.address
    row.port = spec.port
    row.user = spec.user
    row.auth = spec.auth
    row.key_path = spec.key_path
    row.jump = spec.jump
    row.keyring = spec.keyring
    row.test_dir = spec.test_dir
    row.run_dir = spec.run_dir
    row.notes = spec.notes
    row.tags = list(spec.tags)


# Host names end up in messages, terminals and file names: plain ASCII, no path tricks, no control codes.
HOST_NAME_RULE = "letters, digits, dots, dashes and underscores, beginning and ending with a letter or digit"
_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?")


def host_name_problem(name: str) -> str:
    """Why name cannot name a host ("" when it can)."""
    if not _HOST_NAME.fullmatch(name) or ".." in name:
        shown = name if len(name) <= 60 else name[:60] + "..."
        return f"invalid host name {shown!r}: use {HOST_NAME_RULE} (at most 200)"
    return ""


def _check_spec(spec: HostSpec, renaming_from: str = "") -> None:
    name = spec.name.strip()
    if not name or name != spec.name:
        raise StoreError(f"host name {spec.name!r} is empty or has leading/trailing spaces")
    problem = host_name_problem(name)
    if problem and name.lower() != LOCAL_HOST_NAME:
        # a host stored before names were checked can still be renamed, not otherwise changed
        raise StoreError(problem + ("; rename the host to change it" if renaming_from == name else ""))
    if name.lower() == LOCAL_HOST_NAME:
        raise DuplicateHost(
            f"'{LOCAL_HOST_NAME}' is the built-in host for this computer; choose another name"
        )
    if spec.auth not in AUTH_METHODS:
        raise StoreError(f"host {name}: unknown authentication method {spec.auth!r}")
    if spec.port is not None and not 0 < spec.port < 65536:
        raise StoreError(f"host {name}: port {spec.port} is not between 1 and 65535")


def _duplicate(name: str) -> DuplicateHost:
    return DuplicateHost(f"a host named {name!r} exists already; choose another name")


class HostRepository:
    def __init__(self, session: SessionFactory):
        self._session = session

    def list(self) -> list[HostSpec]:
        with self._session() as session:
            rows = session.scalars(select(Host).order_by(Host.name)).all()
            return [_spec_from_row(row) for row in rows]

    def get(self, name: str) -> HostSpec | None:
        with self._session() as session:
            row = session.scalar(select(Host).where(Host.name == name))
            return _spec_from_row(row) if row is not None else None

    def add(self, spec: HostSpec) -> None:
        _check_spec(spec)
        try:
            with self._session() as session:
                if session.scalar(select(Host.id).where(Host.name == spec.name)) is not None:
                    raise _duplicate(spec.name)
                row = Host()
                _copy_spec_to_row(spec, row)
                session.add(row)
        except IntegrityError as exc:   # another thread or process added the same name meanwhile
            raise _duplicate(spec.name) from exc

    def update(self, old_name: str, spec: HostSpec) -> None:
        """Replace the host named old_name; a rename carries the host's run history along."""
        _check_spec(spec, renaming_from=old_name)
        try:
            with self._session() as session:
                row = session.scalar(select(Host).where(Host.name == old_name))
                if row is None:
                    raise NotFound(f"no host named {old_name!r}")
                renamed = spec.name != old_name
                if renamed and session.scalar(select(Host.id).where(Host.name == spec.name)) is not None:
                    raise _duplicate(spec.name)
                _copy_spec_to_row(spec, row)
                row.updated_at = utcnow()
                if renamed:
                    session.execute(update(Run).where(Run.host_name == old_name).values(host_name=spec.name))
                    session.execute(
                        update(FactsSnapshot)
                        .where(FactsSnapshot.host_name == old_name)
                        .values(host_name=spec.name)
                    )
        except IntegrityError as exc:
            raise _duplicate(spec.name) from exc

    def remove(self, name: str) -> bool:
        """Forget the host; its runs stay (they are kept by name)."""
        with self._session() as session:
            row = session.scalar(select(Host).where(Host.name == name))
            if row is None:
                return False
            session.delete(row)
            return True
