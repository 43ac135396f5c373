"""Opening the store: engine set-up, migrations at open, one session per user action or worker."""
from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from storage.comparisons import ComparisonRepository
from storage.errors import StoreError
from storage.hosts import HostRepository
from storage.migrate import describe, migrate, sqlite_path
from storage.read_only_store import make_read_only_engine, read_only_reason
from storage.runs import RunRepository

# A GUI worker writing a run and the GUI thread reading may meet on the file: wait, do not fail.
SQLITE_BUSY_TIMEOUT_S = 15.0
DB_FILE_NAME = "benchbay.sqlite3"
# A server that accepts the connection and never answers must not hang the CLI or the window.
CONNECT_TIMEOUT_S = 10
BACKENDS = ("sqlite", "postgresql")
# postgresql:// names SQLAlchemy's default driver; any of these installed will do.
POSTGRES_DRIVERS = (("psycopg", "postgresql+psycopg"), ("psycopg2", "postgresql+psycopg2"),
                    ("pg8000", "postgresql+pg8000"))
URL_EXAMPLES = "sqlite:///PATH/benchbay.sqlite3 or postgresql://USER@HOST/DATABASE"


def default_db_url() -> str:
    return f"sqlite:///{Path(platformdirs.user_data_dir('benchbay')) / DB_FILE_NAME}"


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
            raise StoreError(f"no driver for {url.drivername} is installed ({exc}); use {URL_EXAMPLES}") from None
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


class Store:
    """The opened database. Thread-safe to share; each session() belongs to one thread.

    read_only: why the store was opened for reading only ("" when writable); writing then fails with
    "the store X is read-only: ..."."""

    def __init__(self, engine: Engine, read_only: str = ""):
        self.engine = engine
        self.read_only = read_only
        self.url = engine.url.render_as_string(hide_password=False)
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self.hosts = HostRepository(self.session)
        self.runs = RunRepository(self.session)
        self.comparisons = ComparisonRepository(self.session)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back if it raises."""
        try:
            with self._sessions.begin() as session:
                yield session
        except OperationalError as exc:
            # Locked, disk full, server gone: one line for the user, the cause kept for the log.
            reason = " ".join(str(exc.orig).split())
            if self.read_only and "readonly" in reason.replace("-", "").replace(" ", "").lower():
                raise StoreError(
                    f"the store {describe(self.engine.url)} is read-only: nothing was saved ({self.read_only}); "
                    "make it writable or copy it elsewhere and use --db"
                ) from exc
            raise StoreError(f"database error on {describe(self.engine.url)}: {reason}") from exc

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({describe(self.engine.url)!r})"


def open_store(url: str | URL | None = None) -> Store:
    """Open (creating if needed) and migrate the store; an existing SQLite file is backed up first.
    An SQLite file that cannot be written (read-only mount or file) is opened for reading only."""
    url = store_url(url if url is not None else default_db_url())
    path = sqlite_path(url)
    reason = read_only_reason(path) if path is not None else ""
    if path is not None and reason:
        return Store(make_read_only_engine(path, reason, SQLITE_BUSY_TIMEOUT_S), read_only=reason)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for the store {path}: {exc.strerror or exc}") from exc
    engine = make_engine(url)
    try:
        migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine)
