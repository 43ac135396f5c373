"""Migration 0004 and a running run's remote state and owner on a real PostgreSQL server."""
from __future__ import annotations

import pytest

from storage.db import open_store
from storage.migrate import pending
from tests.unit.test_storage_migrate import schema_diff
from tests.unit.test_storage_run_attach import check_remote_state_round_trip
from tests.unit.test_storage_run_uid import store_at_revision

pytestmark = pytest.mark.integration


def test_upgrade_from_0003_and_remote_state_round_trip_postgres(pg_url: str) -> None:
    store_at_revision(pg_url, "0003")
    assert pending(pg_url) is True
    store = open_store(pg_url)
    try:
        assert schema_diff(pg_url) == []
        check_remote_state_round_trip(store)
    finally:
        store.close()
