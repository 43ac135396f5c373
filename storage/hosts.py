"""The host inventory. Speaks HostRecord; the built-in host `local` is never stored."""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import date

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.errors import DuplicateHost, NotFound, StoreError
from storage.models import FactsSnapshot, Host, Run, utcnow
from storage.records import PRICE_MONTHLY, PRICE_PERIODS, RESERVED_HOST_NAME, HostPrice, HostRecord

SessionFactory = Callable[[], AbstractContextManager[Session]]


def _record_from_row(row: Host) -> HostRecord:
    return HostRecord(
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
        price=_price_from_row(row),
    )


def _price_from_row(row: Host) -> HostPrice | None:
    if row.price_amount is None:
        return None
    return HostPrice(row.price_amount, row.price_currency or "", row.price_period or PRICE_MONTHLY,
                     row.price_date or "", row.price_source or "")


def price_problem(price: HostPrice) -> str:
    """Why the store cannot keep this price ("" when it can)."""
    amount = price.amount
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not math.isfinite(amount) or amount <= 0:
        return f"a price is a positive amount, not {amount!r}"
    if not price.currency.strip() or len(price.currency) > 10:
        return f"a price needs its currency (1-10 characters, e.g. EUR), not {price.currency!r}"
    if price.period not in PRICE_PERIODS:
        return f"a price is paid per {' or '.join(PRICE_PERIODS)}, not {price.period!r}"
    if price.date:
        try:
            date.fromisoformat(price.date)
        except ValueError:
            return f"a price's date is YYYY-MM-DD, not {price.date!r}"[:200]
        if len(price.date) != 10:
            return f"a price's date is YYYY-MM-DD, not {price.date!r}"
    return ""


def _copy_price_to_row(price: HostPrice | None, row: Host) -> None:
    row.price_amount = float(price.amount) if price else None
    row.price_currency = price.currency.strip() if price else ""
    row.price_period = price.period if price else ""
    row.price_date = price.date if price else ""
    row.price_source = price.source if price else ""


def _copy_record_to_row(record: HostRecord, row: Host) -> None:
    row.name = record.name
    row.address = record.address
    row.port = record.port
    row.user = record.user
    row.auth = record.auth
    row.key_path = record.key_path
    row.jump = record.jump
    row.keyring = record.keyring
    row.test_dir = record.test_dir
    row.run_dir = record.run_dir
    row.notes = record.notes
    row.tags = list(record.tags)


# Host names end up in messages, terminals and file names: plain ASCII, no path tricks, no control codes.
HOST_NAME_RULE = "letters, digits, dots, dashes and underscores, beginning and ending with a letter or digit"
_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?")


def host_name_problem(name: str) -> str:
    """Why name cannot name a host ("" when it can)."""
    if not _HOST_NAME.fullmatch(name) or ".." in name:
        shown = name if len(name) <= 60 else name[:60] + "..."
        return f"invalid host name {shown!r}: use {HOST_NAME_RULE} (at most 200)"
    return ""


def check_host_name(name: str, renaming_from: str = "") -> None:
    """Raise the error that refuses `name` for a stored host (after a rename from renaming_from)."""
    stripped = name.strip()
    if not stripped or stripped != name:
        raise StoreError(f"host name {name!r} is empty or has leading/trailing spaces")
    problem = host_name_problem(name)
    if problem and name.lower() != RESERVED_HOST_NAME:
        # a host stored before names were checked can still be renamed, not otherwise changed
        raise StoreError(problem + ("; rename the host to change it" if renaming_from == name else ""))
    if name.lower() == RESERVED_HOST_NAME:
        raise DuplicateHost(
            f"'{RESERVED_HOST_NAME}' is the built-in host for this computer; choose another name"
        )


# Which methods exist is the workbench's rule (it checks first); the store keeps any word its column holds.
_AUTH_WIDTH = 20


def _check_record(record: HostRecord, renaming_from: str = "") -> None:
    check_host_name(record.name, renaming_from)
    name = record.name
    if record.price is not None and price_problem(record.price):
        raise StoreError(f"host {name}: {price_problem(record.price)}")
    if not record.auth or len(record.auth) > _AUTH_WIDTH:
        raise StoreError(f"host {name}: unknown authentication method {record.auth!r}")
    if record.port is not None and not 0 < record.port < 65536:
        raise StoreError(f"host {name}: port {record.port} is not between 1 and 65535")


def _duplicate(name: str) -> DuplicateHost:
    return DuplicateHost(f"a host named {name!r} exists already; choose another name")


class HostRepository:
    def __init__(self, session: SessionFactory):
        self._session = session

    def list(self) -> list[HostRecord]:
        with self._session() as session:
            rows = session.scalars(select(Host).order_by(Host.name)).all()
            return [_record_from_row(row) for row in rows]

    def get(self, name: str) -> HostRecord | None:
        with self._session() as session:
            row = session.scalar(select(Host).where(Host.name == name))
            return _record_from_row(row) if row is not None else None

    def add(self, record: HostRecord) -> None:
        _check_record(record)
        try:
            with self._session() as session:
                if session.scalar(select(Host.id).where(Host.name == record.name)) is not None:
                    raise _duplicate(record.name)
                row = Host()
                _copy_record_to_row(record, row)
                _copy_price_to_row(record.price, row)
                session.add(row)
        except IntegrityError as exc:   # another thread or process added the same name meanwhile
            raise _duplicate(record.name) from exc

    def update(self, old_name: str, record: HostRecord) -> None:
        """Replace the host named old_name; a rename carries the host's run history along.

        The stored price stays unless the record carries one (set_price clears it)."""
        _check_record(record, renaming_from=old_name)
        try:
            with self._session() as session:
                row = session.scalar(select(Host).where(Host.name == old_name))
                if row is None:
                    raise NotFound(f"no host named {old_name!r}")
                renamed = record.name != old_name
                if renamed and session.scalar(select(Host.id).where(Host.name == record.name)) is not None:
                    raise _duplicate(record.name)
                _copy_record_to_row(record, row)
                if record.price is not None:
                    _copy_price_to_row(record.price, row)
                row.updated_at = utcnow()
                if renamed:
                    session.execute(update(Run).where(Run.host_name == old_name).values(host_name=record.name))
                    session.execute(
                        update(FactsSnapshot)
                        .where(FactsSnapshot.host_name == old_name)
                        .values(host_name=record.name)
                    )
        except IntegrityError as exc:
            raise _duplicate(record.name) from exc

    def set_price(self, name: str, price: HostPrice | None) -> None:
        """Set the host's price, or clear it with None."""
        if price is not None:
            problem = price_problem(price)
            if problem:
                raise StoreError(f"host {name}: {problem}")
        with self._session() as session:
            row = session.scalar(select(Host).where(Host.name == name))
            if row is None:
                raise NotFound(f"no host named {name!r}")
            _copy_price_to_row(price, row)
            row.updated_at = utcnow()

    def remove(self, name: str) -> bool:
        """Forget the host; its runs stay (they are kept by name)."""
        with self._session() as session:
            row = session.scalar(select(Host).where(Host.name == name))
            if row is None:
                return False
            session.delete(row)
            return True
