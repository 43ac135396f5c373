"""Opening the store: migrations at open, read-only files, one session per user action or worker."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from storage.comparisons import ComparisonRepository
from storage.engine import SQLITE_BUSY_TIMEOUT_S, make_engine, sqlite_path, store_url
from storage.errors import StoreError
from storage.hosts import HostRepository
from storage.migrate import describe, head_revision, migrate, schema_state
from storage.read_only_store import (
    is_read_only_error,
    make_read_only_engine,
    read_only_reason,
    server_read_only_reason,
)
from storage.runs import RunRepository

DB_FILE_NAME = "benchbay.sqlite3"
# How often a writer waiting for a database server that went away asks again.
RETRY_EVERY_S = 2.0


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
        self._local = threading.local()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back if it raises. Inside
        write_when_answering() every session of this thread is that one transaction."""
        current = getattr(self._local, "session", None)
        if current is not None:
            yield current
            return
        try:
            with self._sessions.begin() as session:
                yield session
        except DBAPIError as exc:
            if is_read_only_error(exc):   # SQLite's file or PostgreSQL's read-only transaction
                why = self.read_only or "the database accepts no writes"
                raise StoreError(
                    f"the store {describe(self.engine.url)} is read-only: nothing was saved ({why}); "
                    "make it writable or copy it elsewhere and use --db"
                ) from exc
            if not isinstance(exc, OperationalError):
                raise   # a constraint (a name taken meanwhile): the repositories word it
            # Locked, disk full, server gone: one line for the user, the cause kept for the log.
            reason = " ".join(str(exc.orig).split())
            raise StoreError(f"database error on {describe(self.engine.url)}: {reason}") from exc

    def write_when_answering(self, write: Callable[[], None], wait_s: float,
                             on_wait: Callable[[str], None] | None = None) -> None:
        """write() as one transaction; when a database server does not answer (restarting, network
        gone), the writes are kept and tried again every few seconds for up to wait_s, saying so once."""
        deadline = time.monotonic() + wait_s
        told = False
        while True:
            try:
                with self.session() as session:
                    self._local.session = session
                    try:
                        write()
                    finally:
                        self._local.session = None
                return
            except StoreError as exc:
                if not self._server_gone(exc) or time.monotonic() + RETRY_EVERY_S > deadline:
                    raise
                if not told and on_wait is not None:
                    reason = " ".join(str(getattr(exc.__cause__, "orig", exc)).split())
                    on_wait(f"the store {describe(self.engine.url)} is not answering ({reason}); the results "
                            f"are kept and written when it is back (waiting up to {wait_s:.0f} s)")
                told = True
                time.sleep(RETRY_EVERY_S)

    def _server_gone(self, exc: StoreError) -> bool:
        """The server went away or is restarting (not a refusal it made, nor an SQLite file error)."""
        cause = exc.__cause__
        return (self.engine.url.get_backend_name() != "sqlite" and isinstance(cause, DBAPIError)
                and (cause.connection_invalidated or isinstance(cause, OperationalError))
                and not is_read_only_error(cause))

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
        reason = _server_read_only(engine) if url.get_backend_name() == "postgresql" else ""
        if reason:
            _check_read_only_schema(engine, reason)
            return Store(engine, read_only=reason)
        migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine)


def _server_read_only(engine: Engine) -> str:
    try:
        return server_read_only_reason(engine)
    except SQLAlchemyError as exc:
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())
        raise StoreError(f"cannot read the store at {describe(engine.url)}: {reason}") from exc


def _check_read_only_schema(engine: Engine, reason: str) -> None:
    """A read-only database can be read only when it needs no upgrade."""
    state = schema_state(engine)
    if head_revision() not in state.revisions:
        now = f"revision {state.revisions[0]}" if state.revisions else "no schema yet"
        raise StoreError(
            f"the store {describe(engine.url)} is read-only ({reason}) and needs an upgrade this Benchbay "
            f"cannot write ({now}, needs {head_revision()}); make it writable, or use another --db; "
            "nothing was changed"
        )
