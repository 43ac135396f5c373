"""Opening the store: migrations at open, read-only files, one session per user action or worker."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from storage.comparisons import ComparisonRepository
from storage.engine import SQLITE_BUSY_TIMEOUT_S, make_engine, sqlite_path, store_url
from storage.errors import StoreError
from storage.hosts import HostRepository
from storage.migrate import describe, migrate
from storage.read_only_store import make_read_only_engine, read_only_reason
from storage.runs import RunRepository

DB_FILE_NAME = "benchbay.sqlite3"


def default_db_url() -> str:
    return f"sqlite:///{Path(platformdirs.user_data_dir('benchbay')) / DB_FILE_NAME}"


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
