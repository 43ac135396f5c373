"""Opening and migrating SQLite stores: backups, refusals, and models that match the migrations."""
from __future__ import annotations

import hashlib
import shutil
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

import storage.migrate
from storage.db import default_db_url, open_store
from storage.engine import make_engine
from storage.errors import StoreError
from storage.migrate import head_revision, pending
from storage.models import Base
from storage.records import HostRecord, SeriesData

NEXT_REVISION = '''"""test-only: a later schema change"""
import sqlalchemy as sa
from alembic import op

revision = "9000_test"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("hosts", sa.Column("colour", sa.String(20), nullable=True))


def downgrade():
    with op.batch_alter_table("hosts") as batch:
        batch.drop_column("colour")
'''


def schema_diff(url: str) -> list:
    """What Alembic autogenerate would change to make the migrated database match the models."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    finally:
        engine.dispose()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p != path)


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    return tmp_path / "data" / "store.sqlite3"


@pytest.fixture
def upgrade_benchbay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], str]:
    """Call it to become a Benchbay with one more migration than the one that wrote the store."""

    def install() -> str:
        migrations = tmp_path / "newer-migrations"
        shutil.copytree(
            storage.migrate.MIGRATIONS_DIR, migrations, ignore=shutil.ignore_patterns("__pycache__")
        )
        (migrations / "versions" / "9000_test.py").write_text(NEXT_REVISION.format(head=head_revision()))
        monkeypatch.setattr(storage.migrate, "MIGRATIONS_DIR", migrations)
        return "9000_test"

    return install


def test_new_store_is_created_at_head_without_backup(db_file: Path) -> None:
    url = f"sqlite:///{db_file}"
    assert pending(url) is True
    assert not db_file.exists()
    open_store(url).close()
    assert db_file.exists() and pending(url) is False
    assert _siblings(db_file) == []
    open_store(url).close()   # second open: nothing pending, no backup
    assert _siblings(db_file) == []


def test_models_match_migrations_sqlite(db_file: Path) -> None:
    url = f"sqlite:///{db_file}"
    open_store(url).close()
    assert schema_diff(url) == []


def test_sqlite_settings(db_file: Path) -> None:
    store = open_store(f"sqlite:///{db_file}")
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
    finally:
        store.close()


def test_backup_made_when_migration_pending(db_file: Path, upgrade_benchbay: Callable[[], str]) -> None:
    url = f"sqlite:///{db_file}"
    old = open_store(url)
    old.hosts.add(HostRecord(name="web", address="10.0.0.5"))
    run_id = old.runs.create("web", "disk", {"bs": 4096})
    old.runs.add_series(run_id, [SeriesData("util", "sda", "%", [0.0, 1.0], [12.5, 99.0])])
    old.close()
    assert _siblings(db_file) == []    # opening at head made no backup

    old_head = head_revision()
    new_head = upgrade_benchbay()
    assert pending(url) is True

    store = open_store(url)
    try:
        backups = [name for name in _siblings(db_file) if name.startswith("store.sqlite3.bak-")]
        assert len(backups) == 1, _siblings(db_file)
        assert backups[0].endswith("Z")
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == new_head
            conn.exec_driver_sql("SELECT colour FROM hosts").all()
        assert store.runs.series(run_id)[0].values == [12.5, 99.0]
    finally:
        store.close()

    backup = sqlite3.connect(db_file.parent / backups[0])
    try:
        assert backup.execute("SELECT version_num FROM alembic_version").fetchall() == [(old_head,)]
        assert backup.execute("SELECT name, address FROM hosts").fetchall() == [("web", "10.0.0.5")]
        assert backup.execute("SELECT count(*) FROM series").fetchone() == (1,)
    finally:
        backup.close()

    open_store(url).close()   # at head now: no second backup
    assert len([n for n in _siblings(db_file) if ".bak-" in n]) == 1


def test_newer_store_refused(db_file: Path) -> None:
    url = f"sqlite:///{db_file}"
    open_store(url).close()
    with sqlite3.connect(db_file) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'f00dfeed'")
    before, files = _digest(db_file), _siblings(db_file)
    with pytest.raises(StoreError) as caught:
        open_store(url)
    message = str(caught.value)
    assert message == (f"the store at {db_file} was written by a newer Benchbay (revision f00dfeed); "
                       "upgrade Benchbay or use --db")
    assert "\n" not in message
    with pytest.raises(StoreError, match="newer Benchbay"):
        pending(url)
    assert _digest(db_file) == before and _siblings(db_file) == files


@pytest.mark.parametrize("content", [
    b"this is my thesis, not a database\n" * 100,
    b"\x00" * 4096,
    b"SQLite format 3\x00" + bytes(range(256)) * 16,    # right header, garbage pages
], ids=["text", "zeros", "damaged-sqlite"])
def test_garbage_file_refused_and_untouched(db_file: Path, content: bytes) -> None:
    db_file.parent.mkdir(parents=True)
    db_file.write_bytes(content)
    with pytest.raises(StoreError) as caught:
        open_store(f"sqlite:///{db_file}")
    assert str(db_file) in str(caught.value) and "\n" not in str(caught.value)
    assert db_file.read_bytes() == content
    assert _siblings(db_file) == []


def test_foreign_sqlite_database_refused(db_file: Path) -> None:
    db_file.parent.mkdir(parents=True)
    with sqlite3.connect(db_file) as conn:
        conn.execute("CREATE TABLE hosts (hostname TEXT)")
    conn.close()
    before = _digest(db_file)
    with pytest.raises(StoreError, match="not a Benchbay store"):
        open_store(f"sqlite:///{db_file}")
    assert _digest(db_file) == before


def test_default_url_under_user_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("platformdirs.user_data_dir", lambda appname: str(tmp_path / appname))
    assert default_db_url() == f"sqlite:///{tmp_path / 'benchbay' / 'benchbay.sqlite3'}"
    open_store(default_db_url()).close()
    assert (tmp_path / "benchbay" / "benchbay.sqlite3").exists()


def test_in_memory_store() -> None:
    store = open_store("sqlite://")
    try:
        store.hosts.add(HostRecord(name="web"))
        assert [h.name for h in store.hosts.list()] == ["web"]
    finally:
        store.close()


def test_worker_writes_while_gui_reads(db_file: Path) -> None:
    """Two threads on one file (WAL + busy timeout): neither sees 'database is locked'."""
    store = open_store(f"sqlite:///{db_file}")
    errors: list[BaseException] = []
    t = [float(i) for i in range(3600)]

    def worker() -> None:
        try:
            for n in range(20):
                run_id = store.runs.create("web", "disk", {"n": n})
                store.runs.add_series(run_id, [SeriesData(f"s{k}", "", "", t, t) for k in range(10)])
                store.runs.finish(run_id, "done")
        except BaseException as exc:   # noqa: BLE001 - handed to the main thread
            errors.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        while thread.is_alive():
            for record in store.runs.list(limit=5):
                store.runs.get(record.id)
        thread.join()
        assert errors == []
        assert len(store.runs.list()) == 20
    finally:
        store.close()


def test_make_engine_sqlite_memory_and_file(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
    finally:
        engine.dispose()
