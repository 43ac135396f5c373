"""The store on a real PostgreSQL server: the shared store tests, plus schema and refusal checks."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from storage.db import Store, open_store
from storage.errors import StoreError
from storage.migrate import pending
from tests.unit.test_storage_exchange import *  # noqa: F403 - export/import with a PostgreSQL store
from tests.unit.test_storage_migrate import schema_diff
from tests.unit.test_storage_repos import *  # noqa: F403 - the same behaviours, run again on PostgreSQL
from tests.unit.test_storage_run_meta import *  # noqa: F403
from tests.unit.test_storage_run_uid import add_old_runs, check_uids_after_upgrade, store_at_revision

pytestmark = pytest.mark.integration


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:   # replaces the SQLite `store` of the imported tests
    opened = open_store(pg_url)
    yield opened
    opened.close()


def test_models_match_migrations_postgres(pg_url: str) -> None:
    assert pending(pg_url) is True
    open_store(pg_url).close()
    assert pending(pg_url) is False
    assert schema_diff(pg_url) == []


def test_upgrade_gives_existing_runs_unique_uids_postgres(pg_url: str) -> None:
    store_at_revision(pg_url, "0002")
    add_old_runs(pg_url, 25)
    assert pending(pg_url) is True
    check_uids_after_upgrade(pg_url, 25)
    assert schema_diff(pg_url) == []


def test_json_and_binary_column_types_postgres(store: Store) -> None:
    with store.engine.connect() as conn:
        types = dict(conn.execute(text(
            "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        )).all())
    assert types["series.values_blob"] == "bytea"
    assert types["results.metadata"] == "json"
    assert types["results.value"] == "double precision"
    assert types["runs.started_at"] == "timestamp with time zone"


def test_newer_store_refused_postgres(pg_url: str) -> None:
    open_store(pg_url).close()
    engine = create_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'f00dfeed'"))
    engine.dispose()
    with pytest.raises(StoreError) as caught:
        open_store(pg_url)
    assert "was written by a newer Benchbay (revision f00dfeed); upgrade Benchbay or use --db" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unreachable_server_is_one_line_store_error() -> None:
    with pytest.raises(StoreError) as caught:
        open_store("postgresql+psycopg2://postgres@127.0.0.1:1/nothing?connect_timeout=2")
    assert "127.0.0.1:1" in str(caught.value) and "\n" not in str(caught.value)
