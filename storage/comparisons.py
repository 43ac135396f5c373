"""Saved comparisons: which runs (by uid, in order), the baseline, the report's title and notes."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from storage.errors import NotFound
from storage.models import Comparison, utcnow
from storage.records import SavedComparison
from storage.runs import SessionFactory

_UNCHANGED: Any = object()


def _saved(row: Comparison) -> SavedComparison:
    return SavedComparison(
        id=row.id,
        title=row.title,
        customer=row.customer,
        author=row.author,
        notes=row.notes,
        run_uids=tuple(row.run_uids or ()),
        baseline_uid=row.baseline_uid,
        options=dict(row.options or {}),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def checked_run_uids(run_uids: Iterable[str], baseline_uid: str | None) -> list[str]:
    """The runs of a comparison, refused when they cannot describe one (ValueError)."""
    if isinstance(run_uids, str):
        raise ValueError("run_uids is a list of run uids, not one string")
    uids = list(run_uids)
    if not all(isinstance(uid, str) and uid for uid in uids):
        raise ValueError("every run uid of a comparison is a non-empty string")
    if len(set(uids)) != len(uids):
        raise ValueError("a run appears twice in the comparison")
    if baseline_uid is not None and baseline_uid not in uids:
        raise ValueError(f"the baseline run {baseline_uid} is not one of the compared runs")
    return uids


def add_comparison(
    session: Session,
    title: str,
    run_uids: Iterable[str],
    baseline_uid: str | None = None,
    customer: str = "",
    author: str = "",
    notes: str = "",
    options: Mapping[str, Any] | None = None,
    created_at: datetime | None = None,
    updated_at: datetime | None = None,
) -> Comparison:
    """Insert in the caller's transaction (the JSON import adds runs and their comparison in one)."""
    now = utcnow()
    row = Comparison(
        title=title,
        customer=customer,
        author=author,
        notes=notes,
        run_uids=checked_run_uids(run_uids, baseline_uid),
        baseline_uid=baseline_uid,
        options=dict(options or {}),
        created_at=created_at or now,
        updated_at=updated_at or created_at or now,
    )
    session.add(row)
    session.flush()
    return row


class ComparisonRepository:
    def __init__(self, session: SessionFactory):
        self._session = session

    def save(
        self,
        title: str,
        run_uids: Iterable[str],
        baseline_uid: str | None = None,
        customer: str = "",
        author: str = "",
        notes: str = "",
        options: Mapping[str, Any] | None = None,
    ) -> SavedComparison:
        """Save a new comparison."""
        with self._session() as session:
            return _saved(add_comparison(session, title, run_uids, baseline_uid, customer, author, notes, options))

    def update(
        self,
        comparison_id: int,
        *,
        title: str = _UNCHANGED,
        run_uids: Iterable[str] = _UNCHANGED,
        baseline_uid: str | None = _UNCHANGED,
        customer: str = _UNCHANGED,
        author: str = _UNCHANGED,
        notes: str = _UNCHANGED,
        options: Mapping[str, Any] = _UNCHANGED,
    ) -> SavedComparison:
        """Change what is given (baseline_uid=None removes the baseline); the rest stays."""
        with self._session() as session:
            row = session.get(Comparison, comparison_id)
            if row is None:
                raise NotFound(f"no saved comparison with id {comparison_id}")
            uids = list(row.run_uids) if run_uids is _UNCHANGED else run_uids
            baseline = row.baseline_uid if baseline_uid is _UNCHANGED else baseline_uid
            row.run_uids = checked_run_uids(uids, baseline)
            row.baseline_uid = baseline
            for name, value in (("title", title), ("customer", customer), ("author", author), ("notes", notes)):
                if value is not _UNCHANGED:
                    setattr(row, name, value)
            if options is not _UNCHANGED:
                row.options = dict(options)
            row.updated_at = utcnow()
            session.flush()
            return _saved(row)

    def get(self, comparison_id: int) -> SavedComparison | None:
        with self._session() as session:
            row = session.get(Comparison, comparison_id)
            return _saved(row) if row is not None else None

    def list(self) -> list[SavedComparison]:
        """Most recently changed first."""
        query = select(Comparison).order_by(Comparison.updated_at.desc(), Comparison.id.desc())
        with self._session() as session:
            return [_saved(row) for row in session.scalars(query)]

    def delete(self, comparison_id: int) -> bool:
        """Delete the saved comparison only; its runs stay."""
        with self._session() as session:
            return session.execute(delete(Comparison).where(Comparison.id == comparison_id)).rowcount > 0
