"""JSON export/import of whole runs. tests/integration/test_storage_postgres.py runs these on PostgreSQL too
(the second store stays SQLite there: runs then cross backends both ways)."""
from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

import storage.run_import
from storage.db import Store, open_store
from storage.errors import NotFound
from storage.models import Comparison, FactsSnapshot, Result, Run, RunEvent, Series
from storage.records import ResultSample, SeriesData
from storage.run_exchange import InvalidRunDocument, export_comparison, export_runs, import_runs

FACTS = {"hostname": "db-primary", "cpu": {"model": "EPYC 7543", "cores": 32, "mhz": None, "max_mhz": 3737.5},
         "os": "Debian 12 — ünïcode", "disks": [{"name": "nvme0n1", "size_bytes": 2_000_398_934_016}]}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    yield opened
    opened.close()


@pytest.fixture
def second_store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'laptop-b.sqlite3'}")
    yield opened
    opened.close()


def _canonical(document: dict[str, Any]) -> str:
    return json.dumps(document, sort_keys=True)


def _counts(store: Store) -> dict[str, int]:
    with store.session() as session:
        return {model.__tablename__: session.scalar(select(func.count()).select_from(model))
                for model in (Run, FactsSnapshot, Result, Series, RunEvent, Comparison)}


def make_full_run(store: Store, host: str = "db-primary") -> int:
    run_id = store.runs.create(host, "disk", {"bs": 4096, "direct": True, "sizes": [1.5, 2e-7], "file": None},
                               agent_version="0.3.1")
    taken = datetime(2026, 11, 21, 10, 44, 1, 123456, tzinfo=timezone.utc)
    store.runs.add_facts(run_id, FACTS, taken_at=taken)
    store.runs.add_facts(run_id, {**FACTS, "hostname": "db-primary-2"}, taken_at=taken + timedelta(minutes=5))
    store.runs.add_results(run_id, [
        ResultSample("randread", "iops", 48211.53125, "op/s", {"bs": 4096, "cached": False, "note": None}),
        ResultSample("randread", "lat_p99", 0.000734, "s", {"percentile": 99.0}),
        ResultSample("randwrite", "MB/s", 1 / 3, "MB/s", {}),
    ])
    t = [i * 1.000001 for i in range(600)]
    store.runs.add_series(run_id, [
        SeriesData("util", "nvme0n1", "%", t, [math.sin(x) * 100 for x in t]),
        SeriesData("load1", "", "", [0.0, 1.0, 2.0, 3.0], [0.5, 5e-324, 1.7976931348623157e308, -0.0]),
        SeriesData("empty", "sdb", "", [], []),
    ])
    store.runs.add_events(run_id, [
        {"seq": 1, "t": 1_763_721_841.25, "type": "start", "params": {"phases": ["warmup"]}},
        {"seq": None, "t": 1_763_721_843.0, "type": "reconnected", "after_s": 2.5},
        {"seq": 2, "t": 1_763_721_900.125, "type": "done", "status": "done", "error": ""},
    ])
    store.runs.finish(run_id, "done", engine="fio", engine_version="fio-3.33")
    store.runs.set_tags(run_id, ["customer-x", "nvme"])
    store.runs.set_notes(run_id, "second rack, BIOS 2.1\nwrite cache on")
    return run_id


def test_round_trip_is_lossless(store: Store, second_store: Store) -> None:
    ids = [make_full_run(store), make_full_run(store, "db-replica")]
    first = export_runs(store, ids)
    text = json.dumps(first, allow_nan=False)          # strict JSON: non-finite values are strings
    report = import_runs(second_store, json.loads(text))
    assert [uid for uid, _ in report.imported] == [store.runs.get(i).run.uid for i in ids]
    assert report.skipped == []
    again = export_runs(second_store, [new_id for _, new_id in report.imported])
    assert _canonical(again) == _canonical(first)

    copied = second_store.runs.get(report.imported[0][1])
    assert copied.facts == {**FACTS, "hostname": "db-primary-2"}
    load = second_store.runs.series(copied.run.id, [("load1", "")])[0]
    assert load.values[1:3] == [5e-324, 1.7976931348623157e308] and math.copysign(1, load.values[3]) == -1
    assert copied.run.tags == ("customer-x", "nvme") and copied.run.notes.endswith("write cache on")


def test_round_trip_into_the_fixture_store(store: Store, second_store: Store) -> None:
    """The other direction: written by the SQLite store, read by `store` (PostgreSQL in the integration run)."""
    first = export_runs(second_store, [make_full_run(second_store)])
    report = import_runs(store, json.loads(json.dumps(first)))
    assert _canonical(export_runs(store, [report.imported[0][1]])) == _canonical(first)


def test_document_holds_no_local_ids(store: Store) -> None:
    document = export_runs(store, [make_full_run(store)])
    run = document["runs"][0]
    assert set(run) == {"uid", "host_name", "test", "status", "parameters", "started_at", "finished_at",
                        "agent_version", "engine", "engine_version", "error", "tags", "notes", "facts",
                        "results", "series", "events"}
    assert run["started_at"].endswith("+00:00") and len(run["facts"]) == 2
    assert run["series"][1]["values"] == [0.5, 5e-324, 1.7976931348623157e308, -0.0]
    rows = [run] + [row for part in ("facts", "results", "series", "events") for row in run[part]]
    assert not {"id", "run_id"} & {key for row in rows for key in row}


def test_import_twice_skips(store: Store, second_store: Store) -> None:
    document = export_runs(store, [make_full_run(store)])
    first = import_runs(second_store, document)
    before = _counts(second_store)
    second = import_runs(second_store, document)
    assert second.imported == [] and second.skipped == first.imported
    assert _counts(second_store) == before
    # Back into the store it came from: already there under its own id.
    assert import_runs(store, document).skipped == [(document["runs"][0]["uid"], store.runs.list()[0].id)]


def test_export_unknown_run_refused(store: Store) -> None:
    with pytest.raises(NotFound, match="no run with id 4242"):
        export_runs(store, [4242])


def _valid_document(store: Store) -> dict[str, Any]:
    return json.loads(json.dumps(export_runs(store, [make_full_run(store)])))


def _broken(change) -> Any:
    def apply(document: dict[str, Any]) -> Any:
        change(document)
        return document
    return apply


GARBAGE = {
    "not-an-object": (lambda d: ["runs"], "expected an object"),
    "wrong-format": (_broken(lambda d: d.update(format="fio-json")), "expected 'benchbay-runs'"),
    "newer-version": (_broken(lambda d: d.update(version=2)), "version 2 cannot be read"),
    "no-runs": (_broken(lambda d: d.pop("runs")), "missing 'runs'"),
    "runs-not-list": (_broken(lambda d: d.update(runs={"a": 1})), "runs: expected a list"),
    "missing-uid": (_broken(lambda d: d["runs"][0].pop("uid")), "runs[1]: missing 'uid'"),
    "bad-uid": (_broken(lambda d: d["runs"][0].update(uid="12")), "32 lowercase hex"),
    "bad-status": (_broken(lambda d: d["runs"][0].update(status="maybe")), "unknown status"),
    "naive-time": (_broken(lambda d: d["runs"][0].update(started_at="2026-11-21T10:44:00")), "without a zone"),
    "bad-time": (_broken(lambda d: d["runs"][0].update(finished_at="yesterday")), "not an ISO 8601 time"),
    "value-text": (_broken(lambda d: d["runs"][0]["results"][0].update(value="fast")), "runs[1].results[0].value"),
    "value-bool": (_broken(lambda d: d["runs"][0]["results"][0].update(value=True)), "expected a number"),
    "series-lengths": (_broken(lambda d: d["runs"][0]["series"][0]["values"].pop()), "times but"),
    "tags-not-text": (_broken(lambda d: d["runs"][0].update(tags=[1])), "list of text"),
    "facts-not-object": (_broken(lambda d: d["runs"][0]["facts"][0].update(data=[])), "expected an object"),
    "event-seq": (_broken(lambda d: d["runs"][0]["events"][0].update(seq="1")), "whole number"),
    "twice": (_broken(lambda d: d["runs"].append(d["runs"][0])), "appears twice"),
    "host-not-text": (_broken(lambda d: d["runs"][0].update(host_name=None)), "runs[1].host_name"),
}


@pytest.mark.parametrize("name", list(GARBAGE))
def test_garbage_refused_without_writing(store: Store, second_store: Store, name: str) -> None:
    change, expected = GARBAGE[name]
    document = _valid_document(store)
    good = json.loads(json.dumps(document["runs"][0]))
    good["uid"] = "0" * 32      # a valid run before the broken one: must not be written either
    broken = change(document)
    if isinstance(broken, dict) and isinstance(broken.get("runs"), list):
        broken["runs"].insert(0, good)
    before = _counts(second_store)
    with pytest.raises(InvalidRunDocument) as caught:
        import_runs(second_store, broken)
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert expected in message and "\n" not in message and message.endswith("nothing was imported")
    assert _counts(second_store) == before


def test_failure_while_writing_leaves_nothing(store: Store, second_store: Store,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    document = export_runs(store, [make_full_run(store), make_full_run(store, "web")])
    calls = []

    def failing_series_row(run_id, data):
        calls.append(run_id)
        if len(calls) > 3:        # the first run's three series go in, the second run's fail
            raise RuntimeError("disk full")
        return real(run_id, data)

    real = storage.run_import.series_row
    monkeypatch.setattr(storage.run_import, "series_row", failing_series_row)
    with pytest.raises(RuntimeError):
        import_runs(second_store, document)
    assert all(count == 0 for count in _counts(second_store).values())


def test_saved_comparison_moves_with_its_runs(store: Store, second_store: Store) -> None:
    ids = [make_full_run(store), make_full_run(store, "db-replica")]
    uids = [store.runs.get(i).run.uid for i in ids]
    saved = store.comparisons.save("Mail servers", uids[::-1], baseline_uid=uids[1], customer="ACME",
                                   author="sam", notes="replica wins", options={"metrics": ["iops"], "page": "A4"})
    document = export_comparison(store, saved.id)
    assert [run["uid"] for run in document["runs"]] == uids[::-1]

    report = import_runs(second_store, json.loads(json.dumps(document)))
    copy = second_store.comparisons.get(report.comparison_id)
    assert (copy.title, copy.customer, copy.author, copy.notes, copy.run_uids, copy.baseline_uid, copy.options,
            copy.created_at, copy.updated_at) == (
        saved.title, saved.customer, saved.author, saved.notes, saved.run_uids, saved.baseline_uid, saved.options,
        saved.created_at, saved.updated_at)
    assert _canonical(export_comparison(second_store, copy.id)) == _canonical(document)

    again = import_runs(second_store, document)
    assert again.comparison_id == copy.id and "already stored" in again.comparison_note
    assert len(second_store.comparisons.list()) == 1


def test_comparison_not_recreated_without_its_runs(store: Store, second_store: Store) -> None:
    ids = [make_full_run(store), make_full_run(store, "web")]
    saved = store.comparisons.save("Two", [store.runs.get(i).run.uid for i in ids])
    report = import_runs(second_store, export_runs(store, ids[:1], comparison_id=saved.id))
    assert report.comparison_id is None and "1 of its runs are not stored" in report.comparison_note
    assert len(report.imported) == 1 and second_store.comparisons.list() == []
