"""Reading a run document (see storage.run_export) into a store: all checked first, then one transaction."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from storage.comparisons import add_comparison, checked_run_uids
from storage.db import Store
from storage.errors import StoreError
from storage.models import Comparison, FactsSnapshot, Result, Run, RunEvent, Series
from storage.records import RUN_STATUSES, SeriesData
from storage.run_export import DOCUMENT_FORMAT, DOCUMENT_VERSION, NON_FINITE_NAMES
from storage.runs import clean_tags, event_row, series_row

UID_PATTERN = re.compile(r"[0-9a-f]{32}")
_TEXT_FIELDS = ("host_name", "test", "agent_version", "engine", "engine_version", "error", "notes")


class InvalidRunDocument(StoreError, ValueError):
    """The file is not a run document this Benchbay can read; nothing was imported."""


@dataclass(frozen=True)
class ImportReport:
    imported: list[tuple[str, int]]            # (uid, id in this store)
    skipped: list[tuple[str, int]]             # (uid, id of the run already stored with that uid)
    comparison_id: int | None = None           # the saved comparison re-created (or found) from the document
    comparison_note: str = ""                  # why the document's comparison was not re-created


def _fail(where: str, what: str) -> InvalidRunDocument:
    return InvalidRunDocument(f"not a Benchbay run document: {where}: {what}; nothing was imported")


def _get(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _fail(where, f"missing {key!r}")
    return obj[key]


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    value = _get(obj, key, where)
    if not isinstance(value, str):
        raise _fail(f"{where}.{key}", f"expected text, got {type(value).__name__}")
    return value


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {type(value).__name__}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value in NON_FINITE_NAMES:
        return NON_FINITE_NAMES[value]
    raise _fail(where, f"expected a number, got {value!r}"[:200])


def _time(value: Any, where: str) -> datetime:
    if not isinstance(value, str):
        raise _fail(where, f"expected an ISO 8601 time, got {type(value).__name__}")
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise _fail(where, f"not an ISO 8601 time: {value!r}"[:200]) from None
    if stamp.tzinfo is None:
        raise _fail(where, f"time without a zone: {value!r}")
    return stamp


def _uid(value: Any, where: str) -> str:
    if not isinstance(value, str) or not UID_PATTERN.fullmatch(value):
        raise _fail(where, f"a run uid is 32 lowercase hex digits, got {value!r}"[:200])
    return value


def _parse_run(raw: Any, where: str) -> dict[str, Any]:
    """The run as model fields plus its children, or InvalidRunDocument."""
    raw = _mapping(raw, where)
    run: dict[str, Any] = {name: _text(raw, name, where) for name in _TEXT_FIELDS}
    run["uid"] = _uid(_get(raw, "uid", where), f"{where}.uid")
    run["status"] = _text(raw, "status", where)
    if run["status"] not in RUN_STATUSES:
        raise _fail(f"{where}.status", f"unknown status {run['status']!r}")
    run["parameters"] = _mapping(_get(raw, "parameters", where), f"{where}.parameters")
    run["started_at"] = _time(_get(raw, "started_at", where), f"{where}.started_at")
    finished = _get(raw, "finished_at", where)
    run["finished_at"] = None if finished is None else _time(finished, f"{where}.finished_at")
    tags = _list(_get(raw, "tags", where), f"{where}.tags")
    if not all(isinstance(tag, str) for tag in tags):
        raise _fail(f"{where}.tags", "expected a list of text")
    run["tags"] = clean_tags(tags)

    facts = []
    for i, snap in enumerate(_list(_get(raw, "facts", where), f"{where}.facts")):
        at = f"{where}.facts[{i}]"
        snap = _mapping(snap, at)
        facts.append((_time(_get(snap, "taken_at", at), f"{at}.taken_at"), _mapping(_get(snap, "data", at), at)))
    results = []
    for i, sample in enumerate(_list(_get(raw, "results", where), f"{where}.results")):
        at = f"{where}.results[{i}]"
        sample = _mapping(sample, at)
        results.append({
            "test": _text(sample, "test", at), "metric": _text(sample, "metric", at),
            "value": _number(_get(sample, "value", at), f"{at}.value"), "unit": _text(sample, "unit", at),
            "meta": _mapping(_get(sample, "metadata", at), f"{at}.metadata"),
        })
    series = []
    for i, curve in enumerate(_list(_get(raw, "series", where), f"{where}.series")):
        at = f"{where}.series[{i}]"
        curve = _mapping(curve, at)
        t = [_number(x, f"{at}.t") for x in _list(_get(curve, "t", at), f"{at}.t")]
        values = [_number(x, f"{at}.values") for x in _list(_get(curve, "values", at), f"{at}.values")]
        if len(t) != len(values):
            raise _fail(at, f"{len(t)} times but {len(values)} values")
        series.append(SeriesData(_text(curve, "name", at), _text(curve, "device", at), _text(curve, "unit", at),
                                 t, values))
    events = []
    for i, event in enumerate(_list(_get(raw, "events", where), f"{where}.events")):
        at = f"{where}.events[{i}]"
        event = dict(_mapping(event, at))
        seq = _get(event, "seq", at)
        if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool)):
            raise _fail(f"{at}.seq", f"expected a whole number or null, got {seq!r}"[:200])
        event["t"] = _number(_get(event, "t", at), f"{at}.t")
        _text(event, "type", at)
        events.append(event)
    return {"run": run, "facts": facts, "results": results, "series": series, "events": events}


def _parse_comparison(raw: Any) -> dict[str, Any]:
    where = "comparison"
    raw = _mapping(raw, where)
    fields: dict[str, Any] = {name: _text(raw, name, where) for name in ("title", "customer", "author", "notes")}
    uids = [_uid(uid, f"{where}.run_uids") for uid in _list(_get(raw, "run_uids", where), f"{where}.run_uids")]
    baseline = _get(raw, "baseline_uid", where)
    fields["baseline_uid"] = None if baseline is None else _uid(baseline, f"{where}.baseline_uid")
    try:
        fields["run_uids"] = checked_run_uids(uids, fields["baseline_uid"])
    except ValueError as exc:
        raise _fail(where, str(exc)) from None
    fields["options"] = _mapping(_get(raw, "options", where), f"{where}.options")
    fields["created_at"] = _time(_get(raw, "created_at", where), f"{where}.created_at")
    fields["updated_at"] = _time(_get(raw, "updated_at", where), f"{where}.updated_at")
    return fields


def parse_document(document: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Check the whole document before anything is written."""
    document = _mapping(document, "document")
    if document.get("format") != DOCUMENT_FORMAT:
        raise _fail("format", f"expected {DOCUMENT_FORMAT!r}, got {document.get('format')!r}"[:200])
    version = document.get("version")
    if version != DOCUMENT_VERSION or isinstance(version, bool):
        raise InvalidRunDocument(
            f"run document version {version!r} cannot be read by this Benchbay (it reads version "
            f"{DOCUMENT_VERSION}); nothing was imported"
        )
    runs = [_parse_run(raw, f"runs[{i}]") for i, raw in enumerate(_list(_get(document, "runs", "document"),
                                                                        "runs"))]
    seen: set[str] = set()
    for parsed in runs:
        uid = parsed["run"]["uid"]
        if uid in seen:
            raise _fail("runs", f"run {uid} appears twice")
        seen.add(uid)
    comparison = _parse_comparison(document["comparison"]) if document.get("comparison") is not None else None
    return runs, comparison


def import_runs(store: Store, document: Any) -> ImportReport:
    """Add the document's runs that this store does not hold yet (by uid), and its comparison, atomically."""
    runs, comparison = parse_document(document)
    imported: list[tuple[str, int]] = []
    skipped: list[tuple[str, int]] = []
    comparison_id, comparison_note = None, ""
    with store.session() as session:
        uids = [parsed["run"]["uid"] for parsed in runs]
        stored = dict(session.execute(select(Run.uid, Run.id).where(Run.uid.in_(uids))).all()) if uids else {}
        for parsed in runs:
            fields = parsed["run"]
            if fields["uid"] in stored:
                skipped.append((fields["uid"], stored[fields["uid"]]))
                continue
            run = Run(**fields)
            session.add(run)
            session.flush()
            session.add_all(FactsSnapshot(run_id=run.id, host_name=run.host_name, taken_at=taken_at, data=data)
                            for taken_at, data in parsed["facts"])
            if parsed["results"]:
                session.execute(insert(Result), [{"run_id": run.id, **row} for row in parsed["results"]])
            if parsed["series"]:
                session.execute(insert(Series), [series_row(run.id, curve) for curve in parsed["series"]])
            if parsed["events"]:
                session.execute(insert(RunEvent), [event_row(run.id, event) for event in parsed["events"]])
            imported.append((fields["uid"], run.id))
        if comparison is not None:
            comparison_id, comparison_note = _import_comparison(session, comparison)
    return ImportReport(imported, skipped, comparison_id, comparison_note)


def _import_comparison(session: Session, fields: dict[str, Any]) -> tuple[int | None, str]:
    wanted = fields["run_uids"]
    present = set(session.scalars(select(Run.uid).where(Run.uid.in_(wanted)))) if wanted else set()
    missing = [uid for uid in wanted if uid not in present]
    if missing:
        return None, f"comparison {fields['title']!r} not re-created: {len(missing)} of its runs are not stored"
    for row in session.scalars(select(Comparison).where(Comparison.title == fields["title"])):
        if list(row.run_uids or ()) == wanted and row.created_at == fields["created_at"]:
            return row.id, f"comparison {fields['title']!r} already stored as comparison {row.id}"
    return add_comparison(session, **fields).id, ""
