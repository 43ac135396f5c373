"""The checks of an imported run document: the same rules as runs the agent writes (storage.run_rules),
each piece refused with one line that says where (`runs[0].series[2].t[5]: ...`); nothing is written here."""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from storage.comparisons import checked_run_uids
from storage.errors import StoreError
from storage.models import Result, Run, RunEvent, Series
from storage.records import RunStatus, SeriesData
from storage.run_document_floats import NON_FINITE_NAMES
from storage.run_document_series import SeriesNumbers
from storage.run_export import DOCUMENT_FORMAT, DOCUMENT_VERSION
from storage.run_rules import clean_tags, is_finite_number, run_host_problem, run_times_problem, text_problem
from storage.spread import spread_from_json, spread_to_json

UID_PATTERN = re.compile(r"[0-9a-f]{32}")
_TEXT_FIELDS = ("host_name", "test", "agent_version", "engine", "engine_version", "error", "notes")
MAX_SEQ = 2**31 - 1    # run_events.seq is a 32-bit INTEGER on PostgreSQL


class InvalidRunDocument(StoreError, ValueError):
    """The file is not a run document this Benchbay can read; nothing was imported."""


def fail(where: str, what: str) -> InvalidRunDocument:
    return InvalidRunDocument(f"not a Benchbay run document: {where}: {what}; nothing was imported")


def member(obj: dict[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise fail(where, f"missing {key!r}")
    return obj[key]


def _text(obj: dict[str, Any], key: str, where: str, limit: int | None = None) -> str:
    value = member(obj, key, where)
    if not isinstance(value, str):
        raise fail(f"{where}.{key}", f"expected text, got {type(value).__name__}")
    if limit is not None and len(value) > limit:
        raise fail(f"{where}.{key}", f"{len(value)} characters, at most {limit} fit")
    problem = text_problem(value)
    if problem:
        raise fail(f"{where}.{key}", problem)
    return value


def _limit(model: Any, column: str) -> int | None:
    """The column's declared length: SQLite ignores it, PostgreSQL refuses longer text."""
    return getattr(model.__table__.c[column].type, "length", None)


def mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(where, f"expected an object, got {type(value).__name__}")
    return value


def listed(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise fail(where, f"expected a list, got {type(value).__name__}")
    return value


def _number(value: Any, where: str, not_computed: bool = False) -> float:
    """A finite number, the rule every stored point and event time follows (storage.run_rules); with
    not_computed, also "NaN", which a result that could not be computed is exported as."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:
            raise fail(where, f"a whole number of {len(str(value))} digits is too large") from None
    if is_finite_number(value):
        return float(value)
    if not_computed and value == "NaN":
        return NON_FINITE_NAMES["NaN"]
    if isinstance(value, float) and math.isnan(value):
        raise fail(where, "NaN is not JSON (a result that could not be computed is written \"NaN\")")
    if isinstance(value, float) or value in NON_FINITE_NAMES:
        raise fail(where, f"expected a finite number, got {value!r} (a run holds no infinity"
                    + ("" if not_computed else " and no NaN") + ")")
    raise fail(where, f"expected a number, got {value!r}"[:200])


def _spread(value: Any, where: str) -> dict[str, Any] | None:
    """The spread's JSON as stored (checked, and written again as the store writes it), or None."""
    if value is None:
        return None
    try:
        return spread_to_json(spread_from_json(value))
    except ValueError as exc:
        raise fail(where, str(exc)) from None


def _time(value: Any, where: str) -> datetime:
    if not isinstance(value, str):
        raise fail(where, f"expected an ISO 8601 time, got {type(value).__name__}")
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        raise fail(where, f"not an ISO 8601 time: {value!r}"[:200]) from None
    if stamp.tzinfo is None:
        raise fail(where, f"time without a zone: {value!r}")
    return stamp


def _uid(value: Any, where: str) -> str:
    if not isinstance(value, str) or not UID_PATTERN.fullmatch(value):
        raise fail(where, f"a run uid is 32 lowercase hex digits, got {value!r}"[:200])
    return value


def _repeat(value: Any, where: str) -> tuple[str | None, int | None]:
    """A repeated run's group and index; (None, None) for a run that is not repeated (no "repeat")."""
    if value is None:
        return None, None
    value = mapping(value, where)
    group, index = member(value, "group", where), member(value, "index", where)
    if not isinstance(group, str) or not UID_PATTERN.fullmatch(group):
        raise fail(f"{where}.group", f"a repeat group is 32 lowercase hex digits, got {group!r}"[:200])
    if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= MAX_SEQ:
        raise fail(f"{where}.index", f"a repeat index is a whole number 1-{MAX_SEQ}, got {index!r}"[:200])
    return group, index


def parse_run(raw: Any, where: str) -> dict[str, Any]:
    """The run as model fields plus its children, or InvalidRunDocument."""
    raw = mapping(raw, where)
    run: dict[str, Any] = {name: _text(raw, name, where, _limit(Run, name)) for name in _TEXT_FIELDS}
    run["uid"] = _uid(member(raw, "uid", where), f"{where}.uid")
    run["status"] = _text(raw, "status", where)
    if run["status"] not in set(RunStatus):
        raise fail(f"{where}.status", f"unknown status {run['status']!r}")
    run["parameters"] = mapping(member(raw, "parameters", where), f"{where}.parameters")
    problem = run_host_problem(run["host_name"])
    if problem:
        raise fail(f"{where}.host_name", problem)
    run["started_at"] = _time(member(raw, "started_at", where), f"{where}.started_at")
    finished = member(raw, "finished_at", where)
    run["finished_at"] = None if finished is None else _time(finished, f"{where}.finished_at")
    problem = run_times_problem(run["started_at"], run["finished_at"])
    if problem:
        raise fail(where, problem)
    tags = listed(member(raw, "tags", where), f"{where}.tags")
    if not all(isinstance(tag, str) for tag in tags):
        raise fail(f"{where}.tags", "expected a list of text")
    run["tags"] = clean_tags(tags)
    run["repeat_group"], run["repeat_index"] = _repeat(raw.get("repeat"), f"{where}.repeat")

    facts = []
    for i, snap in enumerate(listed(member(raw, "facts", where), f"{where}.facts")):
        at = f"{where}.facts[{i}]"
        snap = mapping(snap, at)
        facts.append((_time(member(snap, "taken_at", at), f"{at}.taken_at"), mapping(member(snap, "data", at), at)))
    results = []
    for i, sample in enumerate(listed(member(raw, "results", where), f"{where}.results")):
        at = f"{where}.results[{i}]"
        sample = mapping(sample, at)
        results.append({
            "test": _text(sample, "test", at, _limit(Result, "test")),
            "metric": _text(sample, "metric", at, _limit(Result, "metric")),
            "value": _number(member(sample, "value", at), f"{at}.value", not_computed=True),
            "unit": _text(sample, "unit", at, _limit(Result, "unit")),
            "meta": mapping(member(sample, "metadata", at), f"{at}.metadata"),
            "spread": _spread(sample.get("spread"), f"{at}.spread"),   # absent in older documents
        })
    series = []
    for i, curve in enumerate(listed(member(raw, "series", where), f"{where}.series")):
        at = f"{where}.series[{i}]"
        curve = mapping(curve, at)
        t, values = _points(member(curve, "t", at), f"{at}.t"), _points(member(curve, "values", at), f"{at}.values")
        if len(t) != len(values):
            raise fail(at, f"{len(t)} times but {len(values)} values")
        series.append(SeriesData(_text(curve, "name", at, _limit(Series, "name")),
                                 _text(curve, "device", at, _limit(Series, "device")),
                                 _text(curve, "unit", at, _limit(Series, "unit")), t, values))
    events = []
    for i, event in enumerate(listed(member(raw, "events", where), f"{where}.events")):
        at = f"{where}.events[{i}]"
        event = dict(mapping(event, at))
        seq = member(event, "seq", at)
        if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool)):
            raise fail(f"{at}.seq", f"expected a whole number or null, got {seq!r}"[:200])
        if seq is not None and not 0 <= seq <= MAX_SEQ:
            raise fail(f"{at}.seq", f"a sequence number is 0 to {MAX_SEQ}, got {seq}"[:200])
        event["t"] = _number(member(event, "t", at), f"{at}.t")
        _text(event, "type", at, _limit(RunEvent, "type"))
        events.append(event)
    return {"run": run, "facts": facts, "results": results, "series": series, "events": events}


class Spooled(Sequence[float]):
    """A series' numbers as the document reader spooled them (checked there): only their count and bytes."""

    def __init__(self, numbers: SeriesNumbers):
        self.numbers = numbers

    def __len__(self) -> int:
        return self.numbers.count

    def __getitem__(self, index):   # not needed by the importer; a Sequence must have it
        raise TypeError("a spooled series is written to the store as it is, not read by item")


def _points(value: Any, where: str) -> Sequence[float]:
    if isinstance(value, SeriesNumbers):
        return Spooled(value)
    return [_number(x, where) for x in listed(value, where)]


def close_spools(raw: Any) -> None:
    """Temporary files of a run's long series, once it is stored (or refused)."""
    for curve in raw.get("series", ()) if isinstance(raw, dict) and isinstance(raw.get("series"), list) else ():
        for value in curve.values() if isinstance(curve, dict) else ():
            if isinstance(value, SeriesNumbers):
                value.close()


def parse_comparison(raw: Any) -> dict[str, Any]:
    where = "comparison"
    raw = mapping(raw, where)
    fields: dict[str, Any] = {name: _text(raw, name, where) for name in ("title", "customer", "author", "notes")}
    uids = [_uid(uid, f"{where}.run_uids") for uid in listed(member(raw, "run_uids", where), f"{where}.run_uids")]
    baseline = member(raw, "baseline_uid", where)
    fields["baseline_uid"] = None if baseline is None else _uid(baseline, f"{where}.baseline_uid")
    try:
        fields["run_uids"] = checked_run_uids(uids, fields["baseline_uid"])
    except ValueError as exc:
        raise fail(where, str(exc)) from None
    fields["options"] = mapping(member(raw, "options", where), f"{where}.options")
    fields["created_at"] = _time(member(raw, "created_at", where), f"{where}.created_at")
    fields["updated_at"] = _time(member(raw, "updated_at", where), f"{where}.updated_at")
    return fields


def check_header(document: dict[str, Any]) -> None:
    if document.get("format") != DOCUMENT_FORMAT:
        raise fail("format", f"expected {DOCUMENT_FORMAT!r}, got {document.get('format')!r}"[:200])
    version = document.get("version")
    if version != DOCUMENT_VERSION or isinstance(version, bool):
        raise InvalidRunDocument(
            f"run document version {version!r}"[:200] + " cannot be read by this Benchbay (it reads version "
            f"{DOCUMENT_VERSION}); nothing was imported"
        )


def parse_document(document: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Check the whole document (already in memory) without writing anything."""
    document = mapping(document, "document")
    check_header(document)
    runs = [parse_run(raw, f"runs[{i}]") for i, raw in enumerate(listed(member(document, "runs", "document"),
                                                                        "runs"))]
    seen: set[str] = set()
    for parsed in runs:
        uid = parsed["run"]["uid"]
        if uid in seen:
            raise fail("runs", f"run {uid} appears twice")
        seen.add(uid)
    comparison = parse_comparison(document["comparison"]) if document.get("comparison") is not None else None
    return runs, comparison


