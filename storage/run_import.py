"""Reading a run document (see storage.run_export) into a store, run by run inside one transaction: a
document that turns out broken half-way is rolled back whole. A file is read piece by piece
(storage.run_document_reader), so memory follows the largest run, not the document."""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from sqlalchemy import LargeBinary, func, insert, literal, select, update
from sqlalchemy.orm import Session

from storage.comparisons import add_comparison, checked_run_uids
from storage.db import Store
from storage.errors import StoreError
from storage.models import Comparison, FactsSnapshot, Result, Run, RunEvent, Series, unpack_floats
from storage.records import RunStatus, SeriesData
from storage.run_document_floats import NON_FINITE_NAMES, encode_float
from storage.run_document_reader import DocumentReader, DocumentSyntaxError, DocumentValueError
from storage.run_document_series import SeriesNumbers
from storage.run_export import DOCUMENT_FORMAT, DOCUMENT_VERSION, run_document
from storage.run_rules import is_finite_number, run_host_problem, run_times_problem, text_problem
from storage.runs import clean_tags, event_row, series_row
from storage.spread import spread_from_json, spread_to_json

UID_PATTERN = re.compile(r"[0-9a-f]{32}")
_TEXT_FIELDS = ("host_name", "test", "agent_version", "engine", "engine_version", "error", "notes")
PG_APPEND_CHUNK = 16 << 20   # bytes of a long series appended to its PostgreSQL blob at a time
MAX_SEQ = 2**31 - 1    # run_events.seq is a 32-bit INTEGER on PostgreSQL


class InvalidRunDocument(StoreError, ValueError):
    """The file is not a run document this Benchbay can read; nothing was imported."""


@dataclass(frozen=True)
class ImportReport:
    imported: list[tuple[str, int]]            # (uid, id in this store)
    skipped: list[tuple[str, int]]             # (uid, id of the same run, already stored with that uid)
    comparison_id: int | None = None           # the saved comparison re-created (or found) from the document
    comparison_note: str = ""                  # why the document's comparison was not re-created
    # (uid, id of the stored run): the uid is taken by a run whose content differs; the file's copy was not imported
    differing: list[tuple[str, int]] = field(default_factory=list)


def _fail(where: str, what: str) -> InvalidRunDocument:
    return InvalidRunDocument(f"not a Benchbay run document: {where}: {what}; nothing was imported")


def _get(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _fail(where, f"missing {key!r}")
    return obj[key]


def _text(obj: dict[str, Any], key: str, where: str, limit: int | None = None) -> str:
    value = _get(obj, key, where)
    if not isinstance(value, str):
        raise _fail(f"{where}.{key}", f"expected text, got {type(value).__name__}")
    if limit is not None and len(value) > limit:
        raise _fail(f"{where}.{key}", f"{len(value)} characters, at most {limit} fit")
    problem = text_problem(value)
    if problem:
        raise _fail(f"{where}.{key}", problem)
    return value


def _limit(model: Any, column: str) -> int | None:
    """The column's declared length: SQLite ignores it, PostgreSQL refuses longer text."""
    return getattr(model.__table__.c[column].type, "length", None)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"expected an object, got {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {type(value).__name__}")
    return value


def _number(value: Any, where: str, not_computed: bool = False) -> float:
    """A finite number, the rule every stored point and event time follows (storage.run_rules); with
    not_computed, also "NaN", which a result that could not be computed is exported as."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:
            raise _fail(where, f"a whole number of {len(str(value))} digits is too large") from None
    if is_finite_number(value):
        return float(value)
    if not_computed and value == "NaN":
        return NON_FINITE_NAMES["NaN"]
    if isinstance(value, float) and math.isnan(value):
        raise _fail(where, "NaN is not JSON (a result that could not be computed is written \"NaN\")")
    if isinstance(value, float) or value in NON_FINITE_NAMES:
        raise _fail(where, f"expected a finite number, got {value!r} (a run holds no infinity"
                    + ("" if not_computed else " and no NaN") + ")")
    raise _fail(where, f"expected a number, got {value!r}"[:200])


def _spread(value: Any, where: str) -> dict[str, Any] | None:
    """The spread's JSON as stored (checked, and written again as the store writes it), or None."""
    if value is None:
        return None
    try:
        return spread_to_json(spread_from_json(value))
    except ValueError as exc:
        raise _fail(where, str(exc)) from None


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


def _repeat(value: Any, where: str) -> tuple[str | None, int | None]:
    """A repeated run's group and index; (None, None) for a run that is not repeated (no "repeat")."""
    if value is None:
        return None, None
    value = _mapping(value, where)
    group, index = _get(value, "group", where), _get(value, "index", where)
    if not isinstance(group, str) or not UID_PATTERN.fullmatch(group):
        raise _fail(f"{where}.group", f"a repeat group is 32 lowercase hex digits, got {group!r}"[:200])
    if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= MAX_SEQ:
        raise _fail(f"{where}.index", f"a repeat index is a whole number 1-{MAX_SEQ}, got {index!r}"[:200])
    return group, index


def _parse_run(raw: Any, where: str) -> dict[str, Any]:
    """The run as model fields plus its children, or InvalidRunDocument."""
    raw = _mapping(raw, where)
    run: dict[str, Any] = {name: _text(raw, name, where, _limit(Run, name)) for name in _TEXT_FIELDS}
    run["uid"] = _uid(_get(raw, "uid", where), f"{where}.uid")
    run["status"] = _text(raw, "status", where)
    if run["status"] not in set(RunStatus):
        raise _fail(f"{where}.status", f"unknown status {run['status']!r}")
    run["parameters"] = _mapping(_get(raw, "parameters", where), f"{where}.parameters")
    problem = run_host_problem(run["host_name"])
    if problem:
        raise _fail(f"{where}.host_name", problem)
    run["started_at"] = _time(_get(raw, "started_at", where), f"{where}.started_at")
    finished = _get(raw, "finished_at", where)
    run["finished_at"] = None if finished is None else _time(finished, f"{where}.finished_at")
    problem = run_times_problem(run["started_at"], run["finished_at"])
    if problem:
        raise _fail(where, problem)
    tags = _list(_get(raw, "tags", where), f"{where}.tags")
    if not all(isinstance(tag, str) for tag in tags):
        raise _fail(f"{where}.tags", "expected a list of text")
    run["tags"] = clean_tags(tags)
    run["repeat_group"], run["repeat_index"] = _repeat(raw.get("repeat"), f"{where}.repeat")

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
            "test": _text(sample, "test", at, _limit(Result, "test")),
            "metric": _text(sample, "metric", at, _limit(Result, "metric")),
            "value": _number(_get(sample, "value", at), f"{at}.value", not_computed=True),
            "unit": _text(sample, "unit", at, _limit(Result, "unit")),
            "meta": _mapping(_get(sample, "metadata", at), f"{at}.metadata"),
            "spread": _spread(sample.get("spread"), f"{at}.spread"),   # absent in older documents
        })
    series = []
    for i, curve in enumerate(_list(_get(raw, "series", where), f"{where}.series")):
        at = f"{where}.series[{i}]"
        curve = _mapping(curve, at)
        t, values = _points(_get(curve, "t", at), f"{at}.t"), _points(_get(curve, "values", at), f"{at}.values")
        if len(t) != len(values):
            raise _fail(at, f"{len(t)} times but {len(values)} values")
        series.append(SeriesData(_text(curve, "name", at, _limit(Series, "name")),
                                 _text(curve, "device", at, _limit(Series, "device")),
                                 _text(curve, "unit", at, _limit(Series, "unit")), t, values))
    events = []
    for i, event in enumerate(_list(_get(raw, "events", where), f"{where}.events")):
        at = f"{where}.events[{i}]"
        event = dict(_mapping(event, at))
        seq = _get(event, "seq", at)
        if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool)):
            raise _fail(f"{at}.seq", f"expected a whole number or null, got {seq!r}"[:200])
        if seq is not None and not 0 <= seq <= MAX_SEQ:
            raise _fail(f"{at}.seq", f"a sequence number is 0 to {MAX_SEQ}, got {seq}"[:200])
        event["t"] = _number(_get(event, "t", at), f"{at}.t")
        _text(event, "type", at, _limit(RunEvent, "type"))
        events.append(event)
    return {"run": run, "facts": facts, "results": results, "series": series, "events": events}


class _Spooled(Sequence[float]):
    """A series' numbers as the document reader spooled them (checked there): only their count and bytes."""

    def __init__(self, numbers: SeriesNumbers):
        self.numbers = numbers

    def __len__(self) -> int:
        return self.numbers.count

    def __getitem__(self, index):   # not needed by the importer; a Sequence must have it
        raise TypeError("a spooled series is written to the store as it is, not read by item")


def _points(value: Any, where: str) -> Sequence[float]:
    if isinstance(value, SeriesNumbers):
        return _Spooled(value)
    return [_number(x, where) for x in _list(value, where)]


def _close_spools(raw: Any) -> None:
    """Temporary files of a run's long series, once it is stored (or refused)."""
    for curve in raw.get("series", ()) if isinstance(raw, dict) and isinstance(raw.get("series"), list) else ():
        for value in curve.values() if isinstance(curve, dict) else ():
            if isinstance(value, SeriesNumbers):
                value.close()


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


def _check_header(document: dict[str, Any]) -> None:
    if document.get("format") != DOCUMENT_FORMAT:
        raise _fail("format", f"expected {DOCUMENT_FORMAT!r}, got {document.get('format')!r}"[:200])
    version = document.get("version")
    if version != DOCUMENT_VERSION or isinstance(version, bool):
        raise InvalidRunDocument(
            f"run document version {version!r}"[:200] + " cannot be read by this Benchbay (it reads version "
            f"{DOCUMENT_VERSION}); nothing was imported"
        )


def parse_document(document: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Check the whole document (already in memory) without writing anything."""
    document = _mapping(document, "document")
    _check_header(document)
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


class _Importer:
    """Adds runs to one session as they are read; the caller's transaction makes it all or nothing."""

    def __init__(self, session: Session):
        self.session = session
        self.seen: set[str] = set()
        self.imported: list[tuple[str, int]] = []
        self.skipped: list[tuple[str, int]] = []
        self.differing: list[tuple[str, int]] = []

    def add_runs(self, raw_runs: Iterable[Any]) -> None:
        for index, raw in enumerate(raw_runs):
            try:
                parsed = _parse_run(raw, f"runs[{index}]")
                uid = parsed["run"]["uid"]
                if uid in self.seen:
                    raise _fail("runs", f"run {uid} appears twice")
                self.seen.add(uid)
                self._add(parsed, raw)
            finally:
                _close_spools(raw)

    def _add(self, parsed: dict[str, Any], raw: dict[str, Any]) -> None:
        session, fields = self.session, parsed["run"]
        stored = session.scalar(select(Run).where(Run.uid == fields["uid"]))
        if stored is not None:
            same = _same_run(session, stored, raw)
            (self.skipped if same else self.differing).append((fields["uid"], stored.id))
            session.expunge(stored)
            return
        run = Run(**fields)
        session.add(run)
        session.flush()
        session.add_all(FactsSnapshot(run_id=run.id, host_name=run.host_name, taken_at=taken_at, data=data)
                        for taken_at, data in parsed["facts"])
        if parsed["results"]:
            session.execute(insert(Result), [{"run_id": run.id, **row} for row in parsed["results"]])
        for curve in parsed["series"]:
            if isinstance(curve.t, _Spooled):
                _insert_spooled(session, run.id, curve)
            else:
                session.execute(insert(Series), [series_row(run.id, curve)])
        if parsed["events"]:
            session.execute(insert(RunEvent), [event_row(run.id, event) for event in parsed["events"]])
        session.flush()
        self.imported.append((fields["uid"], run.id))
        session.expunge_all()   # a large import must not keep every run (and its facts) in the identity map

    def report(self, comparison: dict[str, Any] | None) -> ImportReport:
        comparison_id, note = _import_comparison(self.session, comparison) if comparison else (None, "")
        return ImportReport(self.imported, self.skipped, comparison_id, note, self.differing)


def import_runs(store: Store, document: Any) -> ImportReport:
    """Add the document's runs that this store does not hold yet (by uid), and its comparison, atomically."""
    document = _mapping(document, "document")
    _check_header(document)
    raw_runs = _list(_get(document, "runs", "document"), "runs")
    raw_comparison = document.get("comparison")
    comparison = _parse_comparison(raw_comparison) if raw_comparison is not None else None
    with store.session() as session:
        importer = _Importer(session)
        importer.add_runs(raw_runs)
        return importer.report(comparison)


def import_file(store: Store, handle: TextIO, name: str) -> ImportReport:
    """import_runs for a document read from handle piece by piece (a run at a time); name is the file as
    the user gave it, for messages."""
    header: dict[str, Any] = {}
    comparison = None
    has_runs = False
    try:
        with store.session() as session:
            importer = _Importer(session)
            seen: set[str] = set()
            for key, value in DocumentReader(handle).members():
                if key in seen:
                    # a JSON reader would keep the last, a streaming one the first: neither is safe to guess
                    raise _fail("document", f"{key!r} appears twice; which one is meant is unclear")
                seen.add(key)
                if key == "runs":
                    has_runs = True
                    if isinstance(value, list) or not hasattr(value, "__next__"):
                        value = _list(value, "runs")
                    if header.keys() >= {"format", "version"}:
                        _check_header(header)
                    importer.add_runs(value)
                elif key == "comparison":
                    comparison = _parse_comparison(value) if value is not None else None
                else:
                    header[key] = value
            _check_header(header)
            if not has_runs:
                raise _fail("document", "missing 'runs'")
            return importer.report(comparison)
    except DocumentValueError as exc:
        raise _fail(exc.where, exc.what) from None
    except DocumentSyntaxError as exc:
        raise InvalidRunDocument(f"{name} is not a Benchbay run document ({exc}); nothing was imported") from None
    except UnicodeDecodeError:
        raise InvalidRunDocument(f"{name} is not a Benchbay run document (not UTF-8 text); nothing was imported") \
            from None


def _insert_spooled(session: Session, run_id: int, curve: SeriesData) -> None:
    """A long series into its row a chunk at a time: its blobs never sit in memory whole (SQLite: written
    into zero-filled blobs in place; PostgreSQL: appended to)."""
    t, values = curve.t.numbers, curve.values.numbers
    row = {"run_id": run_id, "name": curve.name, "device": curve.device, "unit": curve.unit, "count": t.count}
    connection = session.connection()
    raw = connection.connection.driver_connection
    if connection.dialect.name == "sqlite" and hasattr(raw, "blobopen"):
        series_id = session.execute(insert(Series).values(
            **row, t_blob=func.zeroblob(t.nbytes), values_blob=func.zeroblob(values.nbytes))).inserted_primary_key[0]
        for column, numbers in (("t_blob", t), ("values_blob", values)):
            if numbers.count:
                with raw.blobopen("series", column, series_id) as blob:
                    for chunk in numbers.chunks():
                        blob.write(chunk)
        return
    if connection.dialect.name != "postgresql":   # an SQLite without blobopen (Python 3.10): whole blobs
        session.execute(insert(Series), [{**row, "t_blob": t.to_bytes(), "values_blob": values.to_bytes()}])
        return
    series_id = session.execute(insert(Series).values(**row, t_blob=b"", values_blob=b"")).inserted_primary_key[0]
    for column, numbers in ((Series.t_blob, t), (Series.values_blob, values)):
        # each append rewrites the value on the server: fewer, larger pieces
        for chunk in numbers.chunks(PG_APPEND_CHUNK):
            session.execute(update(Series).where(Series.id == series_id)
                            .values({column: column.op("||")(literal(chunk, LargeBinary))}))


def _same_run(session: Session, stored: Run, raw: dict[str, Any]) -> bool:
    """The stored run is the document's run: its long series compared as the bytes the store keeps."""
    curves = raw.get("series")
    if not any(isinstance(v, SeriesNumbers) for c in curves for v in c.values()):
        return run_document(session, stored) == raw
    document = run_document(session, stored, with_series=False)
    del document["series"]
    if document != {key: value for key, value in raw.items() if key != "series"}:
        return False
    rows = session.execute(select(Series.name, Series.device, Series.unit, Series.t_blob, Series.values_blob)
                           .where(Series.run_id == stored.id).order_by(Series.id)).all()
    if len(rows) != len(curves):
        return False
    for (name, device, unit, t_blob, values_blob), curve in zip(rows, curves, strict=True):
        if {"name": name, "device": device, "unit": unit} != {k: curve.get(k) for k in ("name", "device", "unit")}:
            return False
        for blob, value in ((t_blob, curve.get("t")), (values_blob, curve.get("values"))):
            if isinstance(value, SeriesNumbers):
                if blob != value.to_bytes():
                    return False
            elif [encode_float(x) for x in unpack_floats(blob)] != value:
                return False
    return True


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
