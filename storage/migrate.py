"""Bring a database to the newest schema, safely: refuse what we do not understand, back up first.

No alembic.ini: the Alembic config is built here, with the migrations directory of this package.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import SQLAlchemyError

from storage.engine import make_engine, sqlite_path
from storage.errors import StoreError
from storage.revisions import head_of, read_revisions

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
SQLITE_HEADER = b"SQLite format 3\x00"
ALEMBIC_TABLE = "alembic_version"


@dataclass(frozen=True)
class SchemaState:
    revisions: tuple[str, ...]   # what alembic_version holds; () for a new or empty database
    tables: frozenset[str]


def alembic_config() -> Config:
    from alembic.config import Config  # Alembic only when a migration runs: its import costs the start

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def head_revision() -> str:
    """The newest revision of the schema (read from the migration files)."""
    return head_of(read_revisions(MIGRATIONS_DIR / "versions"))


def known_revisions() -> set[str]:
    return set(read_revisions(MIGRATIONS_DIR / "versions"))


def describe(url: URL) -> str:
    """How a database is named in messages: the file for SQLite, the URL without password otherwise."""
    path = sqlite_path(url)
    return str(path) if path is not None else url.render_as_string(hide_password=True)



def check_sqlite_file(path: Path) -> None:
    """Refuse a file that is not SQLite before anything opens it (opening could write to it)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    if path.is_dir():
        raise StoreError(f"the store at {path} is a directory, not a database file; use --db to pick a file")
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read the store at {path}: {exc.strerror or exc}") from exc
    if header != SQLITE_HEADER:
        raise StoreError(
            f"{path} is not a Benchbay store (not an SQLite database); it was left untouched, use --db"
        )


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """No statement may write to a file we may be about to refuse or back up. Not `mode=ro`: a
    read-only connection to a WAL database leaves -wal and -shm files behind; this one tidies up."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA query_only = ON")
    return conn


def _sqlite_state(path: Path) -> SchemaState:
    if not path.exists() or path.stat().st_size == 0:
        return SchemaState((), frozenset())
    try:
        conn = _read_only_connection(path)
        try:
            tables = frozenset(
                row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            )
            revisions: tuple[str, ...] = ()
            if ALEMBIC_TABLE in tables:
                revisions = tuple(row[0] for row in conn.execute(f"SELECT version_num FROM {ALEMBIC_TABLE}"))
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"the store at {path} is damaged or unreadable ({exc}); it was left untouched"
        ) from exc
    return SchemaState(revisions, tables - {"sqlite_sequence"})


def _engine_state(engine: Engine) -> SchemaState:
    try:
        with engine.connect() as conn:
            tables = frozenset(inspect(conn).get_table_names())
            revisions: tuple[str, ...] = ()
            if ALEMBIC_TABLE in tables:   # what Alembic's MigrationContext would read, without importing it
                revisions = tuple(row[0] for row in conn.execute(text(f"SELECT version_num FROM {ALEMBIC_TABLE}")))
    except SQLAlchemyError as exc:
        raise StoreError(f"cannot read the store at {describe(engine.url)}: {_one_line(exc)}") from exc
    return SchemaState(revisions, tables)


def _one_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return " ".join(str(orig).split()) or type(orig).__name__


def schema_state(engine_or_url: Engine | str | URL) -> SchemaState:
    """Where the database stands, refusing newer and foreign databases with a one-line StoreError."""
    url = engine_or_url.url if isinstance(engine_or_url, Engine) else make_url(engine_or_url)
    path = sqlite_path(url)
    if path is not None:
        check_sqlite_file(path)
        state = _sqlite_state(path)
    else:
        engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(url)
        try:
            state = _engine_state(engine)
        finally:
            if engine is not engine_or_url:
                engine.dispose()
    unknown = [rev for rev in state.revisions if rev not in known_revisions()]
    if unknown:
        raise StoreError(
            f"the store at {describe(url)} was written by a newer Benchbay (revision {unknown[0]}); "
            "upgrade Benchbay or use --db"
        )
    if not state.revisions and state.tables:
        raise StoreError(
            f"{describe(url)} holds tables but is not a Benchbay store; it was left untouched, use --db"
        )
    return state


def pending(url: str | URL) -> bool:
    """True when the database needs migrating (a database that does not exist yet does)."""
    return head_revision() not in schema_state(url).revisions


def backup_sqlite(path: Path) -> Path:
    """Copy through SQLite's backup API: consistent even while the file is in WAL mode or in use."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.bak-{stamp}")
    suffix = 1
    while target.exists():
        target = path.with_name(f"{path.name}.bak-{stamp}-{suffix}")
        suffix += 1
    try:
        source = _read_only_connection(path)
        try:
            copy = sqlite3.connect(target)
            try:
                source.backup(copy)
            finally:
                copy.close()
        finally:
            source.close()
    except (sqlite3.Error, OSError) as exc:
        target.unlink(missing_ok=True)
        raise StoreError(
            f"could not back up {path} before upgrading it ({exc}); nothing was changed"
        ) from exc
    return target


def migrate(engine_or_url: Engine | str | URL) -> Path | None:
    """Upgrade to the newest revision; returns the backup file made first, if any."""
    state = schema_state(engine_or_url)
    if head_revision() in state.revisions:
        return None
    own_engine = not isinstance(engine_or_url, Engine)
    engine = make_engine(engine_or_url) if own_engine else engine_or_url
    path = sqlite_path(engine.url)
    backup = backup_sqlite(path) if path is not None and state.revisions else None
    from alembic import command

    config = alembic_config()
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    except SQLAlchemyError as exc:
        where = f"; the copy made before is {backup}" if backup else ""
        raise StoreError(
            f"could not upgrade the store at {describe(engine.url)}: {_one_line(exc)}{where}"
        ) from exc
    finally:
        if own_engine:
            engine.dispose()
    return backup
