"""A NaN result (a metric that could not be computed) is stored, shown, exported and imported back (an
infinite one is refused: no measurement is infinite), and
the 0006 upgrade that allows it keeps every row of an existing store."""
from __future__ import annotations

import io
import math
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.db import open_store
from storage.engine import make_engine
from storage.errors import StoreError
from storage.records import ResultSample
from storage.run_exchange import export_runs, import_file, write_runs
from tests.unit.test_storage_migrate import schema_diff
from tests.unit.test_storage_run_uid import store_at_revision


def test_nan_result_round_trips(tmp_path: Path) -> None:
    check_nan_round_trip(f"sqlite:///{tmp_path / 'a.sqlite3'}", f"sqlite:///{tmp_path / 'b.sqlite3'}")


def check_nan_round_trip(url: str, other_url: str) -> None:
    """Also run by tests/integration/test_store_unusual.py with PostgreSQL on either side."""
    store = open_store(url)
    other = open_store(other_url)
    try:
        run_id = store.runs.create("db1", "disk", {})
        with pytest.raises(StoreError, match="result iops: the value inf is not a measurement"):
            store.runs.add_results(run_id, [ResultSample("randread", "iops", math.inf, "op/s", {})])
        store.runs.add_results(run_id, [ResultSample("randread", "lat_p99", math.nan, "s", {}),
                                        ResultSample("randread", "MB/s", 12.5, "MB/s", {})])
        store.runs.finish(run_id, "done")
        values = [r.value for r in store.runs.get(run_id).results]
        assert math.isnan(values[0]) and values[1:] == [12.5]
        assert [r["value"] for r in export_runs(store, [run_id])["runs"][0]["results"]] == ["NaN", 12.5]

        out = io.StringIO()
        write_runs(store, [run_id], out)
        report = import_file(other, io.StringIO(out.getvalue()), "nan.json")
        again = io.StringIO()
        write_runs(other, [report.imported[0][1]], again)
        assert again.getvalue() == out.getvalue()
        assert math.isnan(other.runs.get(report.imported[0][1]).results[0].value)
    finally:
        store.close()
        other.close()


def _fill_0005_store(url: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for n in range(3):
                run_id = conn.execute(text(
                    "INSERT INTO runs (uid, host_name, test, status, parameters, started_at, agent_version, engine, "
                    "engine_version, error, tags, notes) VALUES (:uid, :host, 'disk', 'done', '{}', "
                    "'2025-01-01 10:00:00', '', 'fio', '3.33', '', '[]', '') RETURNING id"
                ), {"uid": f"{n:032x}", "host": f"web{n}"}).scalar_one()
                conn.execute(text("INSERT INTO facts_snapshots (run_id, host_name, taken_at, data) "
                                  "VALUES (:id, 'web', '2025-01-01 10:00:00', '{\"cpu\": 8}')"), {"id": run_id})
                for metric, value in (("iops", 1000.0 + n), ("MB/s", 4.0 * n)):
                    conn.execute(text("INSERT INTO results (run_id, test, metric, value, unit, metadata) "
                                      "VALUES (:id, 'randread', :metric, :value, '', '{\"bs\": 4096}')"),
                                 {"id": run_id, "metric": metric, "value": value})
                conn.execute(text("INSERT INTO series (run_id, name, device, unit, t_blob, values_blob, count) "
                                  "VALUES (:id, 'util', 'sda', '%', x'', x'', 0)"), {"id": run_id})
                conn.execute(text("INSERT INTO run_events (run_id, seq, t, type, data) "
                                  "VALUES (:id, 1, 1.5, 'start', '{}')"), {"id": run_id})
    finally:
        engine.dispose()


def _counts(url: str) -> dict[str, int]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return {table: conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
                    for table in ("runs", "facts_snapshots", "results", "series", "run_events")}
    finally:
        engine.dispose()


def test_upgrade_to_0006_keeps_every_row_and_the_cascade(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    store_at_revision(url, "0005")
    _fill_0005_store(url)
    before = _counts(url)
    assert before == {"runs": 3, "facts_snapshots": 3, "results": 6, "series": 3, "run_events": 3}

    store = open_store(url)
    try:
        assert _counts(url) == before
        assert schema_diff(url) == []
        first = store.runs.list()[-1]
        assert [(r.metric, r.value, r.metadata) for r in store.runs.get(first.id).results] == [
            ("iops", 1000.0, {"bs": 4096}), ("MB/s", 0.0, {"bs": 4096})]
        store.runs.add_results(first.id, [ResultSample("randread", "lat", math.nan, "s", {})])
        assert math.isnan(store.runs.get(first.id).results[-1].value)
        with store.engine.connect() as conn:
            cascade = conn.execute(text("SELECT on_delete FROM pragma_foreign_key_list('results')")).scalars().all()
            indexes = conn.execute(text("SELECT name FROM pragma_index_list('results')")).scalars().all()
        assert cascade == ["CASCADE"] and "ix_results_run_id" in indexes
        assert store.runs.delete(first.id)
    finally:
        store.close()
    # the deleted run's children went with it (the recreated table kept ON DELETE CASCADE); the rest stayed
    assert _counts(url) == {"runs": 2, "facts_snapshots": 2, "results": 4, "series": 2, "run_events": 2}
    assert [p.name for p in tmp_path.iterdir() if ".bak-" in p.name], "a backup was made before upgrading"
