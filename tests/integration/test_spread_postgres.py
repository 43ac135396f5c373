"""A result's spread goes through a PostgreSQL store and back to SQLite (and the other way) unchanged."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_result_spread_store import check_spread_round_trip

pytestmark = pytest.mark.integration


def test_spread_round_trips_through_postgres(pg_url: str, tmp_path: Path) -> None:
    check_spread_round_trip(pg_url, f"sqlite:///{tmp_path / 'laptop.sqlite3'}")


def test_spread_round_trips_from_sqlite_into_postgres(pg_url: str, tmp_path: Path) -> None:
    check_spread_round_trip(f"sqlite:///{tmp_path / 'laptop.sqlite3'}", pg_url)
