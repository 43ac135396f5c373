"""Rows of runs and what they produced, both ways: stored rows to records, and what an agent sent (or a run
document holds) to rows ready to insert."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storage.models import Run, pack_floats
from storage.records import AttachableRun, RemoteRunState, RunOwner, RunRecord, SeriesInput, Spread
from storage.run_rules import is_finite_number
from storage.spread import spread_from_json


def run_record(run: Run) -> RunRecord:
    return RunRecord(
        id=run.id,
        host_name=run.host_name,
        test=run.test,
        status=run.status,
        parameters=dict(run.parameters or {}),
        started_at=run.started_at,
        finished_at=run.finished_at,
        agent_version=run.agent_version,
        engine=run.engine,
        engine_version=run.engine_version,
        error=run.error,
        tags=tuple(run.tags or ()),
        notes=run.notes,
        uid=run.uid,
        repeat_group=run.repeat_group or "",
        repeat_index=run.repeat_index,
    )


def attachable_run(run: Run) -> AttachableRun:
    remote = owner = None
    state = run.remote_state
    if isinstance(state, dict) and state.get("run_dir"):
        known = {key: state[key] for key in RemoteRunState.__dataclass_fields__ if state.get(key) is not None}
        remote = RemoteRunState(**known)
    if isinstance(run.owner, dict) and {"machine", "pid", "lock"} <= set(run.owner):
        owner = RunOwner(str(run.owner["machine"]), int(run.owner["pid"]), str(run.owner["lock"]))
    return AttachableRun(run.id, run.uid, run.host_name, run.test, dict(run.parameters or {}), run.started_at,
                         remote, owner, run.status)


EVENT_KEYS = ("seq", "t", "type")


def json_safe(value: Any) -> Any:
    """NaN and infinity are not JSON (PostgreSQL refuses them): stored as null."""
    if isinstance(value, float) and not is_finite_number(value):
        return None
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def stored_spread(data: Any) -> Spread | None:
    """The spread as stored; None for none, and for one this version cannot read (never a crash)."""
    if data is None:
        return None
    try:
        return spread_from_json(data)
    except ValueError:
        return None


def event_row(run_id: int, event: Mapping[str, Any]) -> dict[str, Any]:
    seq = event.get("seq")
    return {
        "run_id": run_id,
        "seq": int(seq) if seq is not None else None,
        "t": float(event.get("t") or 0.0),
        "type": str(event.get("type") or ""),
        "data": json_safe({key: value for key, value in event.items() if key not in EVENT_KEYS}),
    }


def series_row(run_id: int, data: SeriesInput) -> dict[str, Any]:
    if len(data.t) != len(data.values):
        raise ValueError(
            f"series {data.name}/{data.device or 'host'}: {len(data.t)} times but {len(data.values)} values"
        )
    return {
        "run_id": run_id,
        "name": data.name,
        "device": data.device,
        "unit": data.unit,
        "t_blob": pack_floats(data.t),
        "values_blob": pack_floats(data.values),
        "count": len(data.values),
    }
