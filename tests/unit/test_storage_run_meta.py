"""Run notes and tags, lookup by uid, history filters, saved comparisons.
tests/integration/test_storage_postgres.py runs these on PostgreSQL too."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import update

from storage.db import Store, open_store
from storage.errors import NotFound
from storage.models import Run


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    yield opened
    opened.close()


def _started(store: Store, run_id: int, at: datetime) -> None:
    with store.session() as session:
        session.execute(update(Run).where(Run.id == run_id).values(started_at=at))


def test_notes_and_tags(store: Store) -> None:
    run_id = store.runs.create("web", "disk", {})
    store.runs.set_notes(run_id, "BIOS 2.1 — write cache on\nsecond line")
    assert store.runs.set_tags(run_id, [" nvme", "acme", "nvme", ""]) == ("nvme", "acme")
    record = store.runs.get(run_id).run
    assert record.notes == "BIOS 2.1 — write cache on\nsecond line" and record.tags == ("nvme", "acme")
    store.runs.set_tags(run_id, [])
    assert store.runs.get(run_id).run.tags == ()
    with pytest.raises(NotFound):
        store.runs.set_notes(99999, "x")
    with pytest.raises(NotFound):
        store.runs.set_tags(99999, ["x"])
    with pytest.raises(ValueError):
        store.runs.set_tags(run_id, [3])


def test_get_by_uid(store: Store) -> None:
    first, second = store.runs.create("web", "disk", {}), store.runs.create("db", "cpu", {})
    uid = store.runs.get(second).run.uid
    assert len(uid) == 32 and uid != store.runs.get(first).run.uid
    assert store.runs.get_by_uid(uid) == store.runs.get(second)
    assert store.runs.get_by_uid("f" * 32) is None


def test_list_by_tag_and_time(store: Store) -> None:
    day = datetime(2026, 11, 1, tzinfo=timezone.utc)
    ids = []
    for n, tags in enumerate([["acme"], ["acme", "nvme"], [], ["acmex"]]):
        run_id = store.runs.create("web", "disk", {})
        store.runs.set_tags(run_id, tags)
        _started(store, run_id, day + timedelta(days=n))
        ids.append(run_id)
    assert [r.id for r in store.runs.list(tag="acme")] == [ids[1], ids[0]]     # "acmex" is another tag
    assert [r.id for r in store.runs.list(tag="acme", limit=1)] == [ids[1]]
    assert store.runs.list(tag="none") == []
    assert [r.id for r in store.runs.list(since=day + timedelta(days=1))] == [ids[3], ids[2], ids[1]]
    assert [r.id for r in store.runs.list(until=day + timedelta(days=1))] == [ids[0]]
    paris = timezone(timedelta(hours=1))
    window = store.runs.list(since=datetime(2026, 11, 2, 1, 0, tzinfo=paris),
                             until=datetime(2026, 11, 4, 1, 0, tzinfo=paris), tag="nvme", host="web", test="disk")
    assert [r.id for r in window] == [ids[1]]
    with pytest.raises(ValueError, match="aware"):
        store.runs.list(since=datetime(2026, 11, 1))


def test_saved_comparison_crud(store: Store) -> None:
    uids = [store.runs.get(store.runs.create(h, "disk", {})).run.uid for h in ("a", "b", "c")]
    saved = store.comparisons.save("NVMe vs SAS", uids, baseline_uid=uids[0], customer="ACME", author="sam",
                                   notes="cold cache", options={"metrics": ["iops", "lat_p99"], "page": "A4"})
    assert store.comparisons.get(saved.id) == saved
    assert saved.run_uids == tuple(uids) and saved.created_at == saved.updated_at
    assert saved.created_at.utcoffset() == timedelta(0)

    changed = store.comparisons.update(saved.id, run_uids=uids[:2][::-1], baseline_uid=None, notes="")
    assert (changed.run_uids, changed.baseline_uid, changed.notes, changed.title, changed.options) == (
        (uids[1], uids[0]), None, "", "NVMe vs SAS", saved.options)
    assert changed.updated_at >= saved.updated_at and changed.created_at == saved.created_at
    later = store.comparisons.save("Second", uids[2:])
    assert [c.id for c in store.comparisons.list()] == [later.id, saved.id]

    with pytest.raises(ValueError, match="baseline"):
        store.comparisons.update(saved.id, baseline_uid=uids[2])
    with pytest.raises(ValueError, match="twice"):
        store.comparisons.save("dup", [uids[0], uids[0]])
    with pytest.raises(NotFound):
        store.comparisons.update(99999, title="x")
    assert store.comparisons.get(saved.id) == changed     # refused updates changed nothing

    assert store.comparisons.delete(saved.id) is True
    assert store.comparisons.delete(saved.id) is False
    assert store.comparisons.get(saved.id) is None
    assert len(store.runs.list()) == 3                     # runs stay
