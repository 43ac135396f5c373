"""Engines for the store's database: which URLs Benchbay accepts and the settings it relies on."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import StaticPool

from storage.errors import StoreError

# A GUI worker writing a run and the GUI thread reading may meet on the file: wait, do not fail.
SQLITE_BUSY_TIMEOUT_S = 15.0
# A server that accepts the connection and never answers must not hang the CLI or the window.
CONNECT_TIMEOUT_S = 10
BACKENDS = ("sqlite", "postgresql")
# postgresql:// names SQLAlchemy's default driver; any of these installed will do.
POSTGRES_DRIVERS = (("psycopg", "postgresql+psycopg"), ("psycopg2", "postgresql+psycopg2"),
                    ("pg8000", "postgresql+pg8000"))
URL_EXAMPLES = "sqlite:///PATH/benchbay.sqlite3 or postgresql://USER@HOST/DATABASE"


def _on_sqlite_connect(in_memory: bool):
    def set_pragmas(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA foreign_keys = ON")   # off by default: needed for ON DELETE CASCADE
            cursor.execute(f"PRAGMA busy_timeout = {int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
            if not in_memory:
                # WAL: readers never block the writer and the writer never blocks readers.
                cursor.execute("PRAGMA journal_mode = WAL")
                cursor.execute("PRAGMA synchronous = NORMAL")
        finally:
            cursor.close()

    return set_pragmas


def store_url(url: str | URL) -> URL:
    """The URL parsed and checked: a backend Benchbay supports, with a driver that is installed."""
    if isinstance(url, URL):
        parsed = url
    else:
        try:
            parsed = make_url(url)
        except (ArgumentError, ValueError):
            raise StoreError(f"{url!r} is not a database URL; use {URL_EXAMPLES}") from None
    if parsed.drivername in ("postgres", "pgsql"):   # as libpq, Heroku and others write it
        parsed = parsed.set(drivername="postgresql")
    backend = parsed.get_backend_name()
    if backend not in BACKENDS:
        raise StoreError(f"Benchbay keeps its store in SQLite or PostgreSQL, not {backend!r}; use {URL_EXAMPLES}")
    if parsed.drivername == "postgresql":
        for module, drivername in POSTGRES_DRIVERS:
            if importlib.util.find_spec(module) is not None:
                return parsed.set(drivername=drivername)
        raise StoreError("no PostgreSQL driver is installed: pip install 'psycopg[binary]' (or psycopg2-binary)")
    return parsed


def make_engine(url: str | URL) -> Engine:
    """An engine with the settings Benchbay relies on (SQLite: foreign keys, WAL, busy timeout;
    elsewhere: a connect timeout)."""
    url = store_url(url)
    if url.get_backend_name() != "sqlite":
        connect_args = {} if "connect_timeout" in url.query else {"connect_timeout": CONNECT_TIMEOUT_S}
        try:
            return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
        except (NoSuchModuleError, ImportError) as exc:
            installed = [name for module, name in POSTGRES_DRIVERS if importlib.util.find_spec(module)]
            instead = (f"; write postgresql://... to use the installed {installed[0]}" if installed
                       else f"; use {URL_EXAMPLES}")
            raise StoreError(f"no driver for {url.drivername} is installed ({exc}){instead}") from None
    in_memory = sqlite_path(url) is None
    if in_memory:
        # One shared connection, or every checkout would see a different empty database.
        engine = create_engine(
            url, poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
    event.listen(engine, "connect", _on_sqlite_connect(in_memory))
    return engine


def sqlite_path(url: URL) -> Path | None:
    """The file behind an SQLite URL; None for other backends and in-memory databases."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database).expanduser()
