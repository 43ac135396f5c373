"""A result's spread: computed right, stored, exported and imported back exactly; older stores and
documents without one still open and import."""
from __future__ import annotations

import io
import json
import math
import statistics
from pathlib import Path

import pytest
from sqlalchemy import text

from storage.db import open_store
from storage.records import SPREAD_ACROSS_RUNS, ResultSample, SeriesData, Spread
from storage.run_exchange import InvalidRunDocument, export_runs, import_file, import_runs, write_runs
from storage.spread import spread_from_json, spread_of, spread_to_json
from tests.unit.test_storage_migrate import schema_diff
from tests.unit.test_storage_result_nan import _counts, _fill_0005_store
from tests.unit.test_storage_run_uid import store_at_revision

RATES = [1012.5, 998.25, 1003.0, 870.125, 1105.75, 1001.0, 999.5, 1000.0 / 3]


def test_spread_of_matches_the_textbook() -> None:
    spread = spread_of(RATES, interval_s=1.0)
    assert spread is not None
    assert spread.n == len(RATES)
    assert spread.mean == pytest.approx(statistics.fmean(RATES))
    assert spread.sd == pytest.approx(statistics.stdev(RATES))
    assert (spread.min, spread.max) == (min(RATES), max(RATES))
    assert spread.p50 == pytest.approx(statistics.median(RATES))
    assert spread.p5 < spread.p50 < spread.p95 <= spread.max
    assert spread.cv_percent == pytest.approx(100 * statistics.stdev(RATES) / statistics.fmean(RATES))
    assert spread.kind == "within run" and spread.interval_s == 1.0


def test_spread_of_edge_cases() -> None:
    assert spread_of([]) is None
    assert spread_of([math.nan, math.inf]) is None
    one = spread_of([5.0, math.nan])
    assert one is not None and (one.n, one.sd, one.p5, one.p95) == (1, 0.0, 5.0, 5.0)
    assert one.sem_percent is None
    zero = spread_of([0.0, 0.0])
    assert zero is not None and zero.cv_percent is None
    with pytest.raises(ValueError, match="within run or across runs"):
        spread_of([1.0], kind="sometimes")


def test_json_form_round_trips_exactly() -> None:
    spread = spread_of(RATES, 0.2)
    assert spread is not None
    assert spread_from_json(json.loads(json.dumps(spread_to_json(spread)))) == spread
    odd = Spread(2, 1.0, 0.5, -math.inf, math.inf, 0.1, 1.0, 2.0, 0.0, SPREAD_ACROSS_RUNS)
    assert spread_from_json(json.loads(json.dumps(spread_to_json(odd)))) == odd
    for bad in ([], {"n": 2}, dict(spread_to_json(spread), n=-1), dict(spread_to_json(spread), kind="x"),
                dict(spread_to_json(spread), mean="fast"), dict(spread_to_json(spread), n=True)):
        with pytest.raises(ValueError):
            spread_from_json(bad)


def _stored_run(store, spread: Spread | None) -> int:   # type: ignore[no-untyped-def]
    run_id = store.runs.create("db1", "disk", {"preset": "quick"})
    store.runs.add_results(run_id, [
        ResultSample("disk", "randread_4k.iops", 1000.25, "IOPS", {"engine": "fio"}, spread),
        ResultSample("disk", "randread_4k.lat_p99", 0.25, "ms", {"engine": "fio"}),
    ])
    store.runs.add_series(run_id, [SeriesData("rate.randread_4k.iops", "", "IOPS", [1.0, 2.0], RATES[:2])])
    store.runs.finish(run_id, "done")
    return run_id


def test_spread_is_stored_and_read_back(tmp_path: Path) -> None:
    spread = spread_of(RATES, 1.0)
    store = open_store(f"sqlite:///{tmp_path / 's.sqlite3'}")
    try:
        run_id = _stored_run(store, spread)
        results = store.runs.get(run_id).results
        assert results[0].spread == spread
        assert results[1].spread is None
    finally:
        store.close()


def test_export_import_round_trip_is_exact(tmp_path: Path) -> None:
    check_spread_round_trip(f"sqlite:///{tmp_path / 'a.sqlite3'}", f"sqlite:///{tmp_path / 'b.sqlite3'}")


def check_spread_round_trip(url: str, other_url: str) -> None:
    """Also run by tests/integration/test_spread_postgres.py with PostgreSQL on either side."""
    spread = spread_of(RATES, 1.0)
    store = open_store(url)
    other = open_store(other_url)
    try:
        run_id = _stored_run(store, spread)
        document = export_runs(store, [run_id])
        assert "spread" in document["runs"][0]["results"][0]
        assert "spread" not in document["runs"][0]["results"][1]   # none: the key is left out
        out = io.StringIO()
        write_runs(store, [run_id], out)
        report = import_file(other, io.StringIO(out.getvalue()), "spread.json")
        imported = other.runs.get(report.imported[0][1])
        assert imported.results[0].spread == spread
        assert imported.results == store.runs.get(run_id).results
        again = io.StringIO()
        write_runs(other, [imported.run.id], again)
        assert again.getvalue() == out.getvalue()
        # importing the same file again finds the same run, not a differing one
        assert import_file(other, io.StringIO(out.getvalue()), "spread.json").skipped
    finally:
        store.close()
        other.close()


def test_older_document_without_spread_imports(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'a.sqlite3'}")
    other = open_store(f"sqlite:///{tmp_path / 'b.sqlite3'}")
    try:
        document = export_runs(store, [_stored_run(store, None)])
        assert all("spread" not in r for r in document["runs"][0]["results"])
        report = import_runs(other, document)
        assert [r.spread for r in other.runs.get(report.imported[0][1]).results] == [None, None]
    finally:
        store.close()
        other.close()


def test_broken_spread_in_a_document_is_refused(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'a.sqlite3'}")
    other = open_store(f"sqlite:///{tmp_path / 'b.sqlite3'}")
    try:
        document = export_runs(store, [_stored_run(store, spread_of(RATES, 1.0))])
        document["runs"][0]["results"][0]["spread"]["sd"] = "wide"
        with pytest.raises(InvalidRunDocument, match=r"results\[0\]\.spread.*sd.*nothing was imported"):
            import_runs(other, document)
        assert other.runs.list() == []
    finally:
        store.close()
        other.close()


def test_upgrade_from_0006_keeps_every_row(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    store_at_revision(url, "0006")
    _fill_0005_store(url)   # the tables it fills are the same at 0006
    before = _counts(url)
    assert before["results"] == 6

    store = open_store(url)
    try:
        assert _counts(url) == before
        assert schema_diff(url) == []
        first = store.runs.list()[-1]
        old = store.runs.get(first.id).results
        assert [(r.metric, r.value, r.metadata, r.spread) for r in old] == [
            ("iops", 1000.0, {"bs": 4096}, None), ("MB/s", 0.0, {"bs": 4096}, None)]
        spread = spread_of(RATES, 1.0)
        store.runs.add_results(first.id, [ResultSample("randread", "iops2", 1.0, "IOPS", {}, spread)])
        assert store.runs.get(first.id).results[-1].spread == spread
        with store.engine.connect() as conn:
            nulls = conn.execute(text("SELECT count(*) FROM results WHERE spread IS NULL")).scalar_one()
        assert nulls == 6
    finally:
        store.close()
