"""Migration 0008: runs and hosts stored before it read as not repeated and without a price; down again."""
from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from storage.db import open_store
from storage.engine import make_engine
from storage.migrate import alembic_config
from storage.records import HostPrice
from tests.unit.test_storage_run_attach import _add_0003_runs
from tests.unit.test_storage_run_uid import store_at_revision


def _add_host(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO hosts (name, address, user, auth, key_path, jump, keyring, test_dir, run_dir, notes, "
                "tags, created_at, updated_at) VALUES ('db1', '192.0.2.1', '', 'auto', '', '', 0, '', '', '', "
                "'[]', '2026-11-01 10:00:00', '2026-11-01 10:00:00')"))
    finally:
        engine.dispose()


def test_upgrade_to_0008_keeps_hosts_and_runs_unrepeated_and_unpriced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store_at_revision(url, "0007")
    _add_0003_runs(url)
    _add_host(url)
    store = open_store(url)
    try:
        assert {(r.repeat_group, r.repeat_index) for r in store.runs.list()} == {("", None)}
        host = store.hosts.get("db1")
        assert host is not None and host.price is None and host.address == "192.0.2.1"
        store.hosts.set_price("db1", HostPrice(99.0, "EUR"))
        assert store.hosts.get("db1").price == HostPrice(99.0, "EUR", "month")
        run = store.runs.list()[0]
        store.runs.set_repeat(run.id, "c" * 32, 1)
        assert [r.id for r in store.runs.repeats("c" * 32)] == [run.id]
        with pytest.raises(ValueError, match="32 lowercase hex"):
            store.runs.set_repeat(run.id, "not-a-group", 1)
        with pytest.raises(ValueError, match="whole number"):
            store.runs.set_repeat(run.id, "c" * 32, 0)
    finally:
        store.close()


def test_downgrade_from_0008_keeps_hosts_and_runs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store_at_revision(url, "0008")
    _add_0003_runs(url)
    _add_host(url)
    engine = make_engine(url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0007")
        with engine.connect() as conn:
            runs = {row[1] for row in conn.execute(text("PRAGMA table_info(runs)"))}
            hosts = {row[1] for row in conn.execute(text("PRAGMA table_info(hosts)"))}
            assert not {"repeat_group", "repeat_index"} & runs
            assert not {c for c in hosts if c.startswith("price_")}
            assert conn.execute(text("SELECT count(*) FROM results")).scalar() == 2
            assert conn.execute(text("SELECT address FROM hosts")).scalar() == "192.0.2.1"
    finally:
        engine.dispose()
