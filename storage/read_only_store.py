"""A store that cannot be written: an SQLite store (a read-only mount, a file or folder without write permission)
is opened for reading: runs can be listed, shown, compared and exported; nothing is migrated, and a write
fails with one line saying the store is read-only. A PostgreSQL database that takes no writes (a standby,
default_transaction_read_only) is opened the same way.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from storage.errors import StoreError
from storage.migrate import ALEMBIC_TABLE, check_sqlite_file, head_revision, known_revisions

# SQLSTATE read_only_sql_transaction: PostgreSQL refused a write in a read-only transaction.
PG_READ_ONLY = "25006"


def read_only_reason(path: Path) -> str:
    """Why the existing SQLite file at path can only be read; "" when it can be written or does not exist."""
    if not path.is_file():
        return ""
    # SQLite writes beside the file too (-wal, -shm, -journal): an unwritable folder is as bad.
    for target, what in ((path, "the file"), (path.parent, "its folder")):
        if not os.access(target, os.W_OK):
            try:
                on_read_only_mount = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
            except OSError:
                on_read_only_mount = False
            return "it is on a read-only filesystem" if on_read_only_mount else f"{what} is not writable"
    return ""


def _connect_read_only(path: Path, busy_timeout_s: float) -> sqlite3.Connection:
    # immutable when the folder cannot take a -shm file, else a WAL store could not be read at all.
    immutable = "&immutable=1" if not os.access(path.parent, os.W_OK) else ""
    conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro{immutable}", uri=True, timeout=busy_timeout_s,
                           check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    return conn


def _revisions(path: Path, busy_timeout_s: float) -> tuple[str, ...]:
    try:
        conn = _connect_read_only(path, busy_timeout_s)
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if ALEMBIC_TABLE not in tables:
                if tables - {"sqlite_sequence"}:
                    raise StoreError(f"{path} holds tables but is not a Benchbay store; it was left untouched, "
                                     "use --db")
                return ()
            return tuple(row[0] for row in conn.execute(f"SELECT version_num FROM {ALEMBIC_TABLE}"))
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"the store at {path} is damaged or unreadable ({exc}); it was left untouched") from exc


def make_read_only_engine(path: Path, reason: str, busy_timeout_s: float) -> Engine:
    """An engine that only reads path, after checking the store needs no migration."""
    check_sqlite_file(path)
    revisions = _revisions(path, busy_timeout_s)
    unknown = [rev for rev in revisions if rev not in known_revisions()]
    if unknown:
        raise StoreError(f"the store at {path} was written by a newer Benchbay (revision {unknown[0]}); "
                         "upgrade Benchbay or use --db")
    if head_revision() not in revisions:
        now = f"revision {revisions[0]}" if revisions else "no schema yet"
        raise StoreError(
            f"the store {path} is read-only ({reason}) and needs an upgrade this Benchbay cannot write "
            f"({now}, needs {head_revision()}); make it writable, or copy it elsewhere and use --db; "
            "nothing was changed"
        )
    engine = create_engine(f"sqlite:///{path}", creator=lambda: _connect_read_only(path, busy_timeout_s))

    def set_pragmas(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    event.listen(engine, "connect", set_pragmas)
    return engine


def server_read_only_reason(engine: Engine) -> str:
    """Why a database server's store can only be read; "" when it takes writes."""
    with engine.connect() as conn:
        if conn.execute(text("SHOW transaction_read_only")).scalar() != "on":
            return ""
        if conn.execute(text("SELECT pg_is_in_recovery()")).scalar():
            return "the PostgreSQL server is a standby"
        return "the PostgreSQL database is read-only (default_transaction_read_only)"


def is_read_only_error(exc: DBAPIError) -> bool:
    """The database refused a write because it is read-only (SQLite file or PostgreSQL)."""
    orig = exc.orig
    if getattr(orig, "pgcode", None) == PG_READ_ONLY or getattr(orig, "sqlstate", None) == PG_READ_ONLY:
        return True
    return "readonly" in str(orig).replace("-", "").replace(" ", "").lower()
