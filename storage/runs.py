"""Runs and what they produced: facts snapshot, result samples, telemetry series."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import asdict
from datetime import datetime
from typing import Any

from sqlalchemy import delete, exists, func, insert, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from storage.errors import NotFound, StoreError
from storage.models import FactsSnapshot, Result, Run, RunEvent, Series, unpack_floats, utcnow
from storage.records import (
    FINAL_STATUSES,
    AttachableRun,
    RemoteRunState,
    ResultSample,
    RunDetail,
    RunOwner,
    RunRecord,
    RunStatus,
    SeriesData,
    SeriesInput,
)
from storage.run_rows import attachable_run, event_row, json_safe, run_record, series_row, stored_spread
from storage.run_rules import clean_tags, result_value_problem, run_times_problem
from storage.spread import spread_to_json

SessionFactory = Callable[[], AbstractContextManager[Session]]
REPEAT_GROUP = re.compile(r"[0-9a-f]{32}")
MAX_REPEAT_INDEX = 2**31 - 1    # an INTEGER column on PostgreSQL


def _has_tag(dialect: str, tag: str) -> ColumnElement[bool]:
    """`tag` is one of the run's tags: the JSON list is unnested in SQL, so limit= still applies in SQL."""
    if dialect == "postgresql":
        elements = func.json_array_elements_text(Run.tags).table_valued("value")
    else:
        elements = func.json_each(Run.tags).table_valued("value")
    return exists().select_from(elements).where(elements.c.value == tag)


def _aware(name: str, stamp: datetime | None) -> None:
    if stamp is not None and stamp.tzinfo is None:
        raise ValueError(f"{name} must be an aware datetime (UTC)")


class RunRepository:
    def __init__(self, session: SessionFactory):
        self._session = session

    @staticmethod
    def _run(session: Session, run_id: int) -> Run:
        run = session.get(Run, run_id)
        if run is None:
            raise NotFound(f"no run with id {run_id}")
        return run

    def create(
        self, host_name: str, test: str, parameters: Mapping[str, Any], agent_version: str = "",
        owner: RunOwner | None = None,
    ) -> int:
        with self._session() as session:
            run = Run(
                host_name=host_name,
                test=test,
                status=RunStatus.RUNNING.value,
                parameters=dict(parameters),
                started_at=utcnow(),
                agent_version=agent_version,
                owner=asdict(owner) if owner is not None else None,
            )
            session.add(run)
            session.flush()
            return run.id

    def finish(
        self, run_id: int, status: str, error: str = "", engine: str = "", engine_version: str = ""
    ) -> None:
        if status not in FINAL_STATUSES:
            raise ValueError(f"a run finishes as one of {', '.join(FINAL_STATUSES)}, not {str(status)!r}")
        with self._session() as session:
            run = self._run(session, run_id)
            run.status = RunStatus(status).value   # the plain text, whether given as text or as RunStatus
            run.finished_at = utcnow()
            run.error = error
            run.remote_state = run.owner = None   # only a running run is re-attached to
            # An engine set earlier stays when finish() is called without one (e.g. on cancel).
            if engine:
                run.engine = engine
            if engine_version:
                run.engine_version = engine_version

    def set_times(self, run_id: int, started_at: datetime, finished_at: datetime) -> None:
        """When the measured work began and ended, where that is not when the run was created and finished
        (a shared-storage total is stored after its clients' sweep)."""
        problem = run_times_problem(started_at, finished_at)
        if problem:
            raise StoreError(f"run {run_id}: {problem}")
        with self._session() as session:
            run = self._run(session, run_id)
            run.started_at, run.finished_at = started_at, finished_at

    def set_remote_state(self, run_id: int, state: RemoteRunState) -> None:
        """Where the run lives on its host, stored as soon as it runs there (for a later re-attach)."""
        with self._session() as session:
            self._run(session, run_id).remote_state = json_safe(asdict(state))

    def set_repeat(self, run_id: int, group: str, index: int) -> None:
        """Make the run the index-th (1, 2 ...) of the repeat group `group` (32 lowercase hex digits)."""
        if not REPEAT_GROUP.fullmatch(group):
            raise ValueError(f"a repeat group is 32 lowercase hex digits, not {group!r}"[:200])
        if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= MAX_REPEAT_INDEX:
            raise ValueError(f"a repeat index is a whole number 1-{MAX_REPEAT_INDEX}, not {index!r}")
        with self._session() as session:
            run = self._run(session, run_id)
            run.repeat_group, run.repeat_index = group, index

    def repeats(self, group: str) -> list[RunRecord]:
        """The runs of a repeat group in their order (by index, then id)."""
        query = select(Run).where(Run.repeat_group == group).order_by(Run.repeat_index, Run.id)
        with self._session() as session:
            return [run_record(run) for run in session.scalars(query)]

    def set_owner(self, run_id: int, owner: RunOwner | None) -> None:
        with self._session() as session:
            self._run(session, run_id).owner = asdict(owner) if owner is not None else None

    def mark_lost_link(self, run_id: int, error: str) -> None:
        """The workbench gave up the link while the run went on on its host: nothing of it is stored yet,
        its remote state stays (to collect it later), its owner goes (anyone may collect it)."""
        with self._session() as session:
            run = self._run(session, run_id)
            run.status, run.error, run.owner = RunStatus.LOST_LINK.value, error, None

    def running(self, host: str | None = None, lost_link: bool = False) -> list[AttachableRun]:
        """Runs still stored as running (and lost link, when asked), oldest first, with their remote state
        and owner."""
        wanted = [RunStatus.RUNNING.value] + ([RunStatus.LOST_LINK.value] if lost_link else [])
        query = select(Run).where(Run.status.in_(wanted)).order_by(Run.started_at, Run.id)
        if host is not None:
            query = query.where(Run.host_name == host)
        with self._session() as session:
            return [attachable_run(run) for run in session.scalars(query)]

    def add_facts(self, run_id: int, facts: Mapping[str, Any], taken_at: datetime | None = None) -> None:
        if taken_at is not None and taken_at.tzinfo is None:
            raise ValueError("taken_at must be an aware datetime (UTC)")
        with self._session() as session:
            run = self._run(session, run_id)
            session.add(
                FactsSnapshot(
                    run_id=run_id, host_name=run.host_name, taken_at=taken_at or utcnow(), data=dict(facts)
                )
            )

    def add_results(self, run_id: int, samples: Iterable[ResultSample]) -> None:
        rows = [
            {
                "run_id": run_id,
                "test": sample.test,
                "metric": sample.metric,
                "value": float(sample.value),
                "unit": sample.unit,
                "meta": dict(sample.metadata),
                "spread": spread_to_json(sample.spread) if sample.spread is not None else None,
            }
            for sample in samples
        ]
        for row in rows:
            problem = result_value_problem(row["value"])
            if problem:
                raise StoreError(f"run {run_id}: result {row['metric']}: {problem}; nothing was stored")
        with self._session() as session:
            self._run(session, run_id)
            if rows:
                session.execute(insert(Result), rows)   # one executemany, not one INSERT per object

    def add_series(self, run_id: int, series: Iterable[SeriesInput]) -> None:
        rows = [series_row(run_id, data) for data in series]
        with self._session() as session:
            self._run(session, run_id)
            if rows:
                session.execute(insert(Series), rows)

    def add_events(self, run_id: int, events: Iterable[Mapping[str, Any]]) -> None:
        """Events as the agent wrote them ({"seq", "t", "type", ...}); kept in the order given."""
        rows = [event_row(run_id, event) for event in events]
        with self._session() as session:
            self._run(session, run_id)
            if rows:
                session.execute(insert(RunEvent), rows)

    def events(self, run_id: int) -> list[dict[str, Any]]:
        """The run's events in stored order, each as one dict again (seq, t, type and the rest)."""
        query = select(RunEvent.seq, RunEvent.t, RunEvent.type, RunEvent.data).where(
            RunEvent.run_id == run_id).order_by(RunEvent.id)
        with self._session() as session:
            rows = session.execute(query).all()
        return [{"seq": seq, "t": t, "type": type_, **(data or {})} for seq, t, type_, data in rows]

    def set_notes(self, run_id: int, text: str) -> None:
        with self._session() as session:
            self._run(session, run_id).notes = text

    def set_tags(self, run_id: int, tags: Iterable[str]) -> tuple[str, ...]:
        """Replace the run's tags; returns them as stored (trimmed, each once)."""
        cleaned = clean_tags(tags)
        with self._session() as session:
            self._run(session, run_id).tags = cleaned
        return tuple(cleaned)

    def list(
        self,
        host: str | None = None,
        test: str | None = None,
        limit: int | None = None,
        tag: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        exclude_test: str | None = None,
    ) -> list[RunRecord]:
        """Newest first. since/until bound the start time: since <= started_at < until."""
        _aware("since", since)
        _aware("until", until)
        query = select(Run).order_by(Run.started_at.desc(), Run.id.desc())
        if host is not None:
            query = query.where(Run.host_name == host)
        if test is not None:
            query = query.where(Run.test == test)
        if exclude_test is not None:
            query = query.where(Run.test != exclude_test)
        if since is not None:
            query = query.where(Run.started_at >= since)
        if until is not None:
            query = query.where(Run.started_at < until)
        if limit is not None:
            query = query.limit(limit)
        with self._session() as session:
            if tag is not None:
                query = query.where(_has_tag(session.get_bind().dialect.name, tag))
            return [run_record(run) for run in session.scalars(query)]

    def get(self, run_id: int) -> RunDetail | None:
        with self._session() as session:
            run = session.get(Run, run_id)
            return self._detail(session, run) if run is not None else None

    def get_by_uid(self, uid: str) -> RunDetail | None:
        with self._session() as session:
            run = session.scalar(select(Run).where(Run.uid == uid))
            return self._detail(session, run) if run is not None else None

    @staticmethod
    def _detail(session: Session, run: Run) -> RunDetail:
        facts = session.scalar(
            select(FactsSnapshot.data)
            .where(FactsSnapshot.run_id == run.id)
            .order_by(FactsSnapshot.taken_at.desc(), FactsSnapshot.id.desc())
            .limit(1)
        )
        results = [
            ResultSample(row.test, row.metric, row.value, row.unit, dict(row.meta or {}), stored_spread(row.spread))
            for row in session.scalars(select(Result).where(Result.run_id == run.id).order_by(Result.id))
        ]
        names = session.execute(
            select(Series.name, Series.device).where(Series.run_id == run.id).order_by(Series.id)
        ).all()
        return RunDetail(
            run=run_record(run),
            facts=facts,
            results=results,
            series_names=[(name, device) for name, device in names],
        )

    def series(self, run_id: int, names: Iterable[tuple[str, str]] | None = None) -> list[SeriesData]:
        """All series of a run in stored order, or only the (name, device) pairs asked for."""
        query = select(
            Series.name, Series.device, Series.unit, Series.t_blob, Series.values_blob
        ).where(Series.run_id == run_id).order_by(Series.id)
        wanted = set(names) if names is not None else None
        with self._session() as session:
            rows = session.execute(query).all()
        return [
            SeriesData(name, device, unit, unpack_floats(t_blob), unpack_floats(values_blob))
            for name, device, unit, t_blob, values_blob in rows
            if wanted is None or (name, device) in wanted
        ]

    def latest_facts(self, host_name: str) -> tuple[datetime, dict[str, Any]] | None:
        with self._session() as session:
            row = session.execute(
                select(FactsSnapshot.taken_at, FactsSnapshot.data)
                .where(FactsSnapshot.host_name == host_name)
                .order_by(FactsSnapshot.taken_at.desc(), FactsSnapshot.id.desc())
                .limit(1)
            ).first()
        return (row.taken_at, row.data) if row is not None else None

    def delete(self, run_id: int) -> bool:
        """Delete a run; its facts, results, series and events go with it (ON DELETE CASCADE)."""
        with self._session() as session:
            return session.execute(delete(Run).where(Run.id == run_id)).rowcount > 0
