"""Reading a run document (see storage.run_export) into a store, run by run inside one transaction: a
document that turns out broken half-way is rolled back whole. A file is read piece by piece
(storage.run_document_reader), so memory follows the largest run, not the document."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

from sqlalchemy import LargeBinary, func, insert, literal, select, update
from sqlalchemy.orm import Session

from storage.comparisons import add_comparison
from storage.db import Store
from storage.models import Comparison, FactsSnapshot, Result, Run, RunEvent, Series, unpack_floats
from storage.records import SeriesData
from storage.run_document_floats import encode_float
from storage.run_document_reader import DocumentReader, DocumentSyntaxError, DocumentValueError
from storage.run_document_series import SeriesNumbers
from storage.run_export import run_document
from storage.run_import_check import (  # noqa: F401 - callers import InvalidRunDocument, parse_document from here
    InvalidRunDocument,
    Spooled,
    check_header,
    close_spools,
    fail,
    listed,
    mapping,
    member,
    parse_comparison,
    parse_document,
    parse_run,
)
from storage.run_rows import event_row, series_row

PG_APPEND_CHUNK = 16 << 20   # bytes of a long series appended to its PostgreSQL blob at a time


@dataclass(frozen=True)
class ImportReport:
    imported: list[tuple[str, int]]            # (uid, id in this store)
    skipped: list[tuple[str, int]]             # (uid, id of the same run, already stored with that uid)
    comparison_id: int | None = None           # the saved comparison re-created (or found) from the document
    comparison_note: str = ""                  # why the document's comparison was not re-created
    # (uid, id of the stored run): the uid is taken by a run whose content differs; the file's copy was not imported
    differing: list[tuple[str, int]] = field(default_factory=list)


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
                parsed = parse_run(raw, f"runs[{index}]")
                uid = parsed["run"]["uid"]
                if uid in self.seen:
                    raise fail("runs", f"run {uid} appears twice")
                self.seen.add(uid)
                self._add(parsed, raw)
            finally:
                close_spools(raw)

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
            if isinstance(curve.t, Spooled):
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
    document = mapping(document, "document")
    check_header(document)
    raw_runs = listed(member(document, "runs", "document"), "runs")
    raw_comparison = document.get("comparison")
    comparison = parse_comparison(raw_comparison) if raw_comparison is not None else None
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
                    raise fail("document", f"{key!r} appears twice; which one is meant is unclear")
                seen.add(key)
                if key == "runs":
                    has_runs = True
                    if isinstance(value, list) or not hasattr(value, "__next__"):
                        value = listed(value, "runs")
                    if header.keys() >= {"format", "version"}:
                        check_header(header)
                    importer.add_runs(value)
                elif key == "comparison":
                    comparison = parse_comparison(value) if value is not None else None
                else:
                    header[key] = value
            check_header(header)
            if not has_runs:
                raise fail("document", "missing 'runs'")
            return importer.report(comparison)
    except DocumentValueError as exc:
        raise fail(exc.where, exc.what) from None
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
