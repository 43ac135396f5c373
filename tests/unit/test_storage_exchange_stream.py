"""Export written and import read piece by piece: the same bytes as the whole-document path, runs read one
at a time, broken files refused in one line with nothing stored."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import storage.run_document_reader
from storage.db import Store, open_store
from storage.run_exchange import InvalidRunDocument, export_runs, import_file, write_runs
from tests.unit.test_storage_exchange import _counts, make_full_run


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


def _written(store: Store, ids: list[int], comparison_id: int | None = None) -> str:
    out = io.StringIO()
    write_runs(store, ids, out, comparison_id)
    return out.getvalue()


def test_streamed_export_is_byte_identical(store: Store) -> None:
    ids = [make_full_run(store), make_full_run(store, "db-replica")]
    uids = [store.runs.get(i).run.uid for i in ids]
    saved = store.comparisons.save("Two — ünï", uids, baseline_uid=uids[0], options={"page": "A4"})
    for run_ids, comparison in ((ids, None), (ids, saved.id), ([], None), ([], saved.id), (ids[:1], None)):
        whole = json.dumps(export_runs(store, run_ids, comparison), ensure_ascii=False, indent=1) + "\n"
        assert _written(store, run_ids, comparison) == whole


def test_unknown_run_refused_before_anything_is_written(store: Store) -> None:
    out = io.StringIO()
    with pytest.raises(Exception, match="no run with id 4242"):
        write_runs(store, [make_full_run(store), 4242], out)
    assert out.getvalue() == ""


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_import_in_small_pieces_round_trips(store: Store, second_store: Store, chunk: int,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage.run_document_reader, "READ_CHUNK", chunk)
    ids = [make_full_run(store), make_full_run(store, "web-2")]
    text = _written(store, ids)
    report = import_file(second_store, io.StringIO(text), "runs.json")
    assert len(report.imported) == 2 and report.skipped == report.differing == []
    assert _written(second_store, [new_id for _, new_id in report.imported]) == text
    again = import_file(second_store, io.StringIO(text), "runs.json")
    assert again.imported == [] and again.skipped == report.imported and again.differing == []


def test_members_in_any_order(store: Store, second_store: Store) -> None:
    document = export_runs(store, [make_full_run(store)])
    reordered = {"runs": document["runs"], "version": 1, "format": "benchbay-runs"}
    report = import_file(second_store, io.StringIO(json.dumps(reordered)), "x.json")
    assert len(report.imported) == 1
    wrong = {"runs": document["runs"], "format": "other", "version": 1}
    before = _counts(second_store)
    with pytest.raises(InvalidRunDocument, match="expected 'benchbay-runs'"):
        import_file(second_store, io.StringIO(json.dumps({**wrong, "runs": [
            {**document["runs"][0], "uid": "1" * 32}]})), "x.json")
    assert _counts(second_store) == before


def _document_text(store: Store, change) -> str:
    document = json.loads(json.dumps(export_runs(store, [make_full_run(store)])))
    return change(document) if callable(change) else change


def _run_with(**fields: Any):
    def change(document: dict[str, Any]) -> str:
        document["runs"][0].update(fields)
        return json.dumps(document)
    return change


def _event_seq(seq: int):
    def change(document: dict[str, Any]) -> str:
        document["runs"][0]["events"][0]["seq"] = seq
        return json.dumps(document)
    return change


def _result_value(raw: str):
    def change(document: dict[str, Any]) -> str:
        document["runs"][0]["results"][0]["value"] = "@VALUE@"
        return json.dumps(document).replace('"@VALUE@"', raw)
    return change


BROKEN = {
    "deep-nesting": (lambda d: json.dumps(d).replace('"parameters": {', '"parameters": {"deep": ' + "[" * 100_000
                                                     + "]" * 100_000 + ", ", 1), "nested too deeply"),
    "5000-digit-number": (_result_value("1" * 5000), "digits"),
    "4000-digit-number": (_result_value("1" * 4000), "4000 digits is too large"),
    "seq-2^63": (_event_seq(2**63), "a sequence number is 0 to 2147483647"),
    "lone-surrogate": (lambda d: json.dumps(d).replace('"second rack', '"\\ud800 second rack', 1), "lone UTF-16"),
    "long-host-name": (_run_with(host_name="h" * 201), "201 characters, at most 200 fit"),
    "empty": ("", "empty file"),
    "list": ("[]", "not a JSON object"),
    "trailing": (lambda d: json.dumps(d) + " {}", "extra data"),
    "cut-off": (lambda d: json.dumps(d)[:-300], "not JSON"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_files_are_one_line_and_store_nothing(store: Store, second_store: Store,
                                                     name: str) -> None:
    change, expected = BROKEN[name]
    text = _document_text(store, change)
    before = _counts(second_store)
    with pytest.raises(InvalidRunDocument) as caught:
        import_file(second_store, io.StringIO(text), "in.json")
    message = str(caught.value)
    assert expected in message and "\n" not in message and message.endswith("nothing was imported"), message
    assert _counts(second_store) == before


def test_same_uid_with_other_content_is_reported(store: Store, second_store: Store) -> None:
    document = json.loads(json.dumps(export_runs(store, [make_full_run(store)])))
    first = import_file(second_store, io.StringIO(json.dumps(document)), "a.json")
    document["runs"][0]["notes"] = "edited elsewhere"
    second = import_file(second_store, io.StringIO(json.dumps(document)), "b.json")
    assert second.imported == [] and second.skipped == [] and second.differing == first.imported
    assert second_store.runs.get(first.imported[0][1]).run.notes.endswith("write cache on")


def test_many_tags_import(store: Store, second_store: Store, tmp_path: Path) -> None:
    run_id = make_full_run(store)
    store.runs.set_tags(run_id, [f"t{i}" for i in range(20_000)] + ["t5", " t7 "])
    path = tmp_path / "tags.json"
    path.write_text(_written(store, [run_id]))
    with path.open(encoding="utf-8") as handle:
        report = import_file(second_store, handle, str(path))
    tags = second_store.runs.get(report.imported[0][1]).run.tags
    assert len(tags) == 20_000 and tags[:3] == ("t0", "t1", "t2")
