"""`benchbay import` of documents no run could hold — refused in one line each, nothing imported — and of a
long series, which is read a slice at a time (memory stays at the slice, not the series)."""
from __future__ import annotations

import io
import json
import random
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import storage.run_document_reader
import storage.run_document_series
import storage.run_import
from app.cli import main
from storage.db import Store, open_store
from storage.models import pack_floats
from storage.records import SeriesData
from storage.run_exchange import export_runs, import_file, write_runs
from tests.unit.test_storage_exchange import make_full_run


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:   # tests/integration/test_store_postgres_server.py: PostgreSQL
    opened = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    yield opened
    opened.close()


@pytest.fixture
def document_text(tmp_path: Path) -> str:
    store = open_store(f"sqlite:///{tmp_path / 'source.sqlite3'}")
    try:
        out = io.StringIO()
        write_runs(store, [make_full_run(store)], out)
        return out.getvalue()
    finally:
        store.close()


def _edit(change: Callable[[dict], None], raw: Callable[[str], str] = lambda text: text) -> Callable[[str], str]:
    def apply(text: str) -> str:
        document = json.loads(text)
        change(document["runs"][0])
        return raw(json.dumps(document, indent=1))
    return apply


def _token(old: str, new: str) -> Callable[[str], str]:
    """Replace the marker put in by _edit with raw JSON text (NaN, 1e400: no json.dumps writes them)."""
    return lambda text: text.replace(json.dumps(old), new, 1)


ODD = {
    "result-NaN-token": (_edit(lambda r: r["results"][0].update(value="@"), _token("@", "NaN")),
                         "runs[0].results[0].value: NaN is not JSON"),
    "result-1e400": (_edit(lambda r: r["results"][0].update(value="@"), _token("@", "1e400")),
                     "runs[0].results[0].value: expected a finite number, got inf"),
    "result-Infinity-name": (_edit(lambda r: r["results"][1].update(value="Infinity")),
                             "runs[0].results[1].value: expected a finite number, got 'Infinity'"),
    "series-NaN": (_edit(lambda r: r["series"][0]["values"].__setitem__(5, "@"), _token("@", "NaN")),
                   "runs[0].series[0].values: expected a finite number, got 'NaN'"),
    "series-NaN-name": (_edit(lambda r: r["series"][0]["values"].__setitem__(5, "NaN")),
                        "runs[0].series[0].values: expected a finite number, got '\"NaN\"'"),
    "series-1e400": (_edit(lambda r: r["series"][0]["t"].__setitem__(7, "@"), _token("@", "1e400")),
                     "runs[0].series[0].t: a number too large for a float"),
    "series-true": (_edit(lambda r: r["series"][1]["values"].__setitem__(0, True)),
                    "runs[0].series[1].values: expected a finite number, got 'true'"),
    "event-time-1e400": (_edit(lambda r: r["events"][0].update(t="@"), _token("@", "-1e400")),
                         "runs[0].events[0].t: expected a finite number, got -inf"),
    "host-NUL": (_edit(lambda r: r.update(host_name="db\x00primary")), "runs[0].host_name: holds a NUL character"),
    "host-control": (_edit(lambda r: r.update(host_name="db\x07")), "runs[0].host_name: host name 'db\\x07' holds"),
    "times-reversed": (_edit(lambda r: r.update(started_at="9999-12-31T00:00:00+00:00",
                                                finished_at="0001-01-01T00:00:00+00:00")),
                       "runs[0]: started_at 9999-12-31T00:00:00+00:00 is not between 1970 and 2200"),
    "ends-before-start": (_edit(lambda r: r.update(started_at="2026-01-02T00:00:00+00:00",
                                                   finished_at="2026-01-01T00:00:00+00:00")),
                          "finished_at 2026-01-01T00:00:00+00:00 is before started_at"),
    "runs-twice": (lambda text: text.rstrip().rstrip("}") + ', "runs": []}',
                   "document: 'runs' appears twice; which one is meant is unclear"),
}


@pytest.mark.parametrize("name", list(ODD))
def test_odd_documents_are_refused_in_one_line(name: str, document_text: str, cli_env, tmp_path: Path,
                                               capsys) -> None:
    change, words = ODD[name]
    path = tmp_path / "odd.json"
    path.write_text(change(document_text))
    assert main(["import", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("benchbay: not a Benchbay run document: "), err
    assert words in err and err.endswith("; nothing was imported\n"), err
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_the_untouched_document_is_imported(document_text: str, cli_env, tmp_path: Path, capsys) -> None:
    path = tmp_path / "good.json"
    path.write_text(document_text)
    assert main(["import", str(path)]) == 0
    assert capsys.readouterr().out.startswith("imported run 1 (db-primary disk, ")


def _long_series_document(tmp_path: Path, points: int) -> tuple[str, SeriesData]:
    rng = random.Random(3)
    curve = SeriesData("util", "sda", "%", [i * 0.5 for i in range(points)],
                       [rng.uniform(-1e9, 1e9) for _ in range(points)])
    store = open_store(f"sqlite:///{tmp_path / 'long.sqlite3'}")
    try:
        run_id = store.runs.create("web1", "monitor", {})
        store.runs.add_series(run_id, [SeriesData("empty", "", "", [], []), curve])
        store.runs.finish(run_id, "done")
        out = io.StringIO()
        write_runs(store, [run_id], out)
    finally:
        store.close()
    return out.getvalue(), curve


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices, spools and blob writes a few kilobytes long: a short series crosses many of their edges."""
    monkeypatch.setattr(storage.run_document_reader, "SERIES_SLICE", 4096)
    monkeypatch.setattr(storage.run_document_reader, "READ_CHUNK", 1000)
    monkeypatch.setattr(storage.run_document_series, "SPOOL_IN_MEMORY", 8192)
    monkeypatch.setattr(storage.run_document_series, "WRITE_CHUNK", 5000)
    monkeypatch.setattr(storage.run_import, "PG_APPEND_CHUNK", 7000)


def test_a_long_series_is_stored_exactly_and_found_again(store, tmp_path: Path, small_slices) -> None:
    text, curve = _long_series_document(tmp_path, 20_000)
    report = import_file(store, io.StringIO(text), "long.json")
    [(_, run_id)] = report.imported
    empty, back = store.runs.series(run_id)
    assert (empty.t, empty.values) == ([], [])
    assert pack_floats(back.t) == pack_floats(curve.t) and pack_floats(back.values) == pack_floats(curve.values)
    assert export_runs(store, [run_id])["runs"][0] == json.loads(text)["runs"][0]

    again = import_file(store, io.StringIO(text), "long.json")   # the same run: compared by its bytes
    assert again.imported == [] and again.skipped == report.imported
    changed = text.replace(json.dumps(curve.values[-1]), "0.25", 1)
    assert import_file(store, io.StringIO(changed), "long.json").differing == report.imported


def test_memory_of_a_long_series_import_stays_at_the_slice(store, tmp_path: Path) -> None:
    """500 000 points (20 MB of text): held as Python floats they would take about 40 MB (two lists), as
    the whole text as much again; read a slice at a time the peak stays a fraction of that."""
    text, _ = _long_series_document(tmp_path, 500_000)
    path = tmp_path / "long.json"
    path.write_text(text)
    del text
    tracemalloc.start()
    try:
        with path.open(encoding="utf-8") as handle:
            import_file(store, handle, str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12e6, f"peak {peak / 1e6:.1f} MB"
