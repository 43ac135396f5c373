"""Opening the store: engine set-up, migrations at open, one session per user action or worker."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from storage.comparisons import ComparisonRepository
from storage.errors import StoreError
from storage.hosts import HostRepository
from storage.migrate import describe, migrate, sqlite_path
from storage.runs import RunRepository

# A GUI worker writing a run and the GUI thread reading may meet on the file: wait, do not fail.
SQLITE_BUSY_TIMEOUT_S = 15.0
DB_FILE_NAME = "benchbay.sqlite3"


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


def make_engine(url: str | URL) -> Engine:
    """An engine with the settings Benchbay relies on (SQLite: foreign keys, WAL, busy timeout)."""
    url = make_url(url)
    if url.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True)
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
    """The opened database. Thread-safe to share; each session() belongs to one thread."""

    def __init__(self, engine: Engine):
        self.engine = engine
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
    """Open (creating if needed) and migrate the store; an existing SQLite file is backed up first."""
    url = make_url(url if url is not None else default_db_url())
    path = sqlite_path(url)
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
