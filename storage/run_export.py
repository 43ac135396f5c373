"""Whole runs as one JSON-ready document, so they move between stores (laptops) without loss.

The document names runs by uid and holds no local ids: export -> import elsewhere -> export gives the
same document. Floats are written as JSON numbers (Python writes the shortest repr, which reads back
exactly); non-finite series points and result values, which JSON has no number for, as "NaN",
"Infinity", "-Infinity".
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any, TextIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.db import Store
from storage.errors import NotFound
from storage.models import Comparison, FactsSnapshot, Result, Run, RunEvent, Series, unpack_floats
from storage.run_document_floats import encode_float

DOCUMENT_FORMAT = "benchbay-runs"
DOCUMENT_VERSION = 1

def encode_time(stamp: datetime) -> str:
    """ISO 8601 in UTC, microseconds kept."""
    return stamp.astimezone(timezone.utc).isoformat()


def run_document(session: Session, run: Run, with_series: bool = True) -> dict[str, Any]:
    facts = session.execute(
        select(FactsSnapshot.taken_at, FactsSnapshot.data).where(FactsSnapshot.run_id == run.id)
        .order_by(FactsSnapshot.id)
    ).all()
    results = session.scalars(select(Result).where(Result.run_id == run.id).order_by(Result.id))
    series = [] if not with_series else session.execute(
        select(Series.name, Series.device, Series.unit, Series.t_blob, Series.values_blob)
        .where(Series.run_id == run.id).order_by(Series.id)
    ).all()
    events = session.execute(
        select(RunEvent.seq, RunEvent.t, RunEvent.type, RunEvent.data).where(RunEvent.run_id == run.id)
        .order_by(RunEvent.id)
    ).all()
    document = {
        "uid": run.uid,
        "host_name": run.host_name,
        "test": run.test,
        "status": run.status,
        "parameters": run.parameters or {},
        "started_at": encode_time(run.started_at),
        "finished_at": encode_time(run.finished_at) if run.finished_at is not None else None,
        "agent_version": run.agent_version,
        "engine": run.engine,
        "engine_version": run.engine_version,
        "error": run.error,
        "tags": list(run.tags or ()),
        "notes": run.notes,
        "facts": [{"taken_at": encode_time(taken_at), "data": data} for taken_at, data in facts],
        "results": [_result_document(row) for row in results],
        "series": [
            {"name": name, "device": device, "unit": unit,
             "t": [encode_float(x) for x in unpack_floats(t_blob)],
             "values": [encode_float(x) for x in unpack_floats(values_blob)]}
            for name, device, unit, t_blob, values_blob in series
        ] if with_series else [],
        "events": [
            {"seq": seq, "t": encode_float(t), "type": type_, **(data or {})} for seq, t, type_, data in events
        ],
    }
    # only for a repeated run: a run that is not exports exactly as it did before repeats existed
    if run.repeat_group:
        document["repeat"] = {"group": run.repeat_group, "index": run.repeat_index}
    return document


def _result_document(row: Result) -> dict[str, Any]:
    document = {"test": row.test, "metric": row.metric, "value": encode_float(row.value), "unit": row.unit,
                "metadata": row.meta or {}}
    # only when there is one: a run stored before spreads existed exports exactly as it did then
    if row.spread is not None:
        document["spread"] = row.spread
    return document


def _comparison_document(row: Comparison) -> dict[str, Any]:
    return {
        "title": row.title,
        "customer": row.customer,
        "author": row.author,
        "notes": row.notes,
        "run_uids": list(row.run_uids or ()),
        "baseline_uid": row.baseline_uid,
        "options": row.options or {},
        "created_at": encode_time(row.created_at),
        "updated_at": encode_time(row.updated_at),
    }


def export_runs(store: Store, run_ids: Iterable[int], comparison_id: int | None = None) -> dict[str, Any]:
    """The runs (in the order given, each once) and optionally a saved comparison, read in one transaction."""
    ordered = list(dict.fromkeys(run_ids))
    with store.session() as session:
        runs = []
        for run_id in ordered:
            run = session.get(Run, run_id)
            if run is None:
                raise NotFound(f"no run with id {run_id}: see `benchbay runs list`")
            runs.append(run_document(session, run))
        document: dict[str, Any] = {"format": DOCUMENT_FORMAT, "version": DOCUMENT_VERSION, "runs": runs}
        if comparison_id is not None:
            comparison = session.get(Comparison, comparison_id)
            if comparison is None:
                raise NotFound(f"no saved comparison with id {comparison_id}")
            document["comparison"] = _comparison_document(comparison)
    return document


def export_comparison(store: Store, comparison_id: int) -> dict[str, Any]:
    """A saved comparison with all its runs, so it can be reopened in another store."""
    return export_runs(store, comparison_run_ids(store, comparison_id), comparison_id)


def _indented(value: Any, depth: int) -> str:
    """value as json.dumps(indent=1) writes it `depth` levels down; JSON text holds no raw newline in strings."""
    return json.dumps(value, ensure_ascii=False, indent=1).replace("\n", "\n" + " " * depth)


def write_runs(store: Store, run_ids: Iterable[int], out: TextIO, comparison_id: int | None = None) -> int:
    """The document export_runs builds, written to out one run at a time (never the whole text in memory).

    The text is byte for byte json.dumps(export_runs(...), ensure_ascii=False, indent=1) + "\n". Every id
    is checked before the first byte is written. Returns the number of runs written.
    """
    ordered = list(dict.fromkeys(run_ids))
    with store.session() as session:
        found = set(session.scalars(select(Run.id).where(Run.id.in_(ordered)))) if ordered else set()
        for run_id in ordered:
            if run_id not in found:
                raise NotFound(f"no run with id {run_id}: see `benchbay runs list`")
        comparison = None
        if comparison_id is not None:
            row = session.get(Comparison, comparison_id)
            if row is None:
                raise NotFound(f"no saved comparison with id {comparison_id}")
            comparison = _comparison_document(row)
        out.write(f'{{\n "format": {json.dumps(DOCUMENT_FORMAT)},\n "version": {DOCUMENT_VERSION},\n "runs": [')
        for i, run_id in enumerate(ordered):
            run = session.get(Run, run_id)
            out.write(("," if i else "") + "\n  " + _indented(run_document(session, run), 2))
            session.expunge(run)   # the identity map would otherwise keep every run exported
        out.write("\n ]" if ordered else "]")
        if comparison is not None:
            out.write(',\n "comparison": ' + _indented(comparison, 1))
        out.write("\n}\n")
    return len(ordered)


def comparison_run_ids(store: Store, comparison_id: int) -> list[int]:
    """The ids of a saved comparison's runs in its order; NotFound when it or one of its runs is gone."""
    saved = store.comparisons.get(comparison_id)
    if saved is None:
        raise NotFound(f"no saved comparison with id {comparison_id}")
    with store.session() as session:
        ids = dict(session.execute(select(Run.uid, Run.id).where(Run.uid.in_(saved.run_uids))).all())
    missing = [uid for uid in saved.run_uids if uid not in ids]
    if missing:
        raise NotFound(
            f"saved comparison {comparison_id} names {len(missing)} run(s) no longer stored (uid {missing[0]})"
        )
    return [ids[uid] for uid in saved.run_uids]
