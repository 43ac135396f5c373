"""Migration 0003 on SQLite: runs stored before it get a uid each, and keep their facts, series and events.
tests/integration/test_storage_postgres.py runs the same check on PostgreSQL."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from storage.db import open_store
from storage.engine import make_engine
from storage.migrate import alembic_config, head_revision


def store_at_revision(url: str, revision: str) -> None:
    """A store as an older Benchbay left it."""
    engine = make_engine(url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
    finally:
        engine.dispose()


def add_old_runs(url: str, count: int) -> None:
    """Runs with children, written with the 0002 schema (no uid column yet)."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for n in range(count):
                run_id = conn.execute(text(
                    "INSERT INTO runs (host_name, test, status, parameters, started_at, agent_version, engine, "
                    "engine_version, error, tags, notes) VALUES (:host, 'disk', 'done', '{}', :at, '', 'fio', "
                    "'3.33', '', '[\"old\"]', '') RETURNING id"
                ), {"host": f"web{n}", "at": f"2025-01-0{n % 9 + 1} 10:00:00"}).scalar_one()
                conn.execute(text(
                    "INSERT INTO facts_snapshots (run_id, host_name, taken_at, data) "
                    "VALUES (:id, 'web', '2025-01-01 10:00:00', '{\"cpu\": 8}')"), {"id": run_id})
                conn.execute(text(
                    "INSERT INTO results (run_id, test, metric, value, unit, metadata) "
                    "VALUES (:id, 'randread', 'iops', 1234.5, 'op/s', '{}')"), {"id": run_id})
                conn.execute(text(
                    "INSERT INTO run_events (run_id, seq, t, type, data) VALUES (:id, 1, 1.5, 'start', '{}')"
                ), {"id": run_id})
    finally:
        engine.dispose()


def check_uids_after_upgrade(url: str, count: int) -> None:
    store = open_store(url)
    try:
        runs = store.runs.list()
        assert len(runs) == count
        uids = [run.uid for run in runs]
        assert all(re.fullmatch(r"[0-9a-f]{32}", uid) for uid in uids), uids
        assert len(set(uids)) == count
        for run in runs:
            detail = store.runs.get_by_uid(run.uid)
            assert detail.run.id == run.id
            assert detail.facts == {"cpu": 8}                    # children were not cascaded away
            assert [s.value for s in detail.results] == [1234.5]
            assert store.runs.events(run.id) == [{"seq": 1, "t": 1.5, "type": "start"}]
        new_id = store.runs.create("web", "cpu", {})
        assert store.runs.get(new_id).run.uid not in uids
        assert store.comparisons.list() == []
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == head_revision()
    finally:
        store.close()


def test_upgrade_gives_existing_runs_unique_uids_sqlite(tmp_path: Path) -> None:
    db_file = tmp_path / "store.sqlite3"
    url = f"sqlite:///{db_file}"
    store_at_revision(url, "0002")
    add_old_runs(url, 25)
    check_uids_after_upgrade(url, 25)
    backups = [p.name for p in tmp_path.iterdir() if ".bak-" in p.name]
    assert len(backups) == 1, backups          # the 0002 file was copied before the upgrade


def test_uid_is_unique_in_the_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store = open_store(url)
    try:
        first = store.runs.create("web", "disk", {})
        second = store.runs.create("web", "disk", {})
        uid = store.runs.get(first).run.uid
        with store.engine.connect() as conn, pytest.raises(IntegrityError):
            conn.execute(text("UPDATE runs SET uid = :uid WHERE id = :id"), {"uid": uid, "id": second})
    finally:
        store.close()
