"""Migration 0004 and what the store keeps to re-attach to a run whose workbench went away."""
from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from storage.db import open_store
from storage.engine import make_engine
from storage.migrate import alembic_config
from storage.records import RemoteRunState, RunOwner, RunStatus
from tests.unit.test_storage_run_uid import store_at_revision


def _add_0003_runs(url: str) -> None:
    """A run left running and a finished one with children, as Benchbay 0003 wrote them."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for n, status in enumerate(("running", "done")):
                run_id = conn.execute(text(
                    "INSERT INTO runs (uid, host_name, test, status, parameters, started_at, agent_version, engine, "
                    "engine_version, error, tags, notes) VALUES (:uid, 'web', 'idle', :status, '{}', "
                    "'2026-11-01 10:00:00', '', '', '', '', '[]', '') RETURNING id"
                ), {"uid": f"{n:032x}", "status": status}).scalar_one()
                conn.execute(text(
                    "INSERT INTO results (run_id, test, metric, value, unit, metadata) "
                    "VALUES (:id, 'idle', 'elapsed', 5.0, 's', '{}')"), {"id": run_id})
    finally:
        engine.dispose()


def test_upgrade_to_0004_keeps_runs_and_children(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store_at_revision(url, "0003")
    _add_0003_runs(url)
    store = open_store(url)
    try:
        [old] = store.runs.running()
        assert (old.uid, old.remote, old.owner) == ("0" * 32, None, None)   # nothing known: interrupted later
        [done] = [r for r in store.runs.list() if r.status == "done"]
        assert [s.value for s in store.runs.get(done.id).results] == [5.0]
    finally:
        store.close()
    assert len([p for p in tmp_path.iterdir() if ".bak-" in p.name]) == 1   # copied before the upgrade


def test_downgrade_from_0004_keeps_runs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    store_at_revision(url, "0004")
    _add_0003_runs(url)
    engine = make_engine(url)
    try:
        config = alembic_config()
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0003")
        with engine.connect() as conn:
            columns = {row[1] for row in conn.execute(text("PRAGMA table_info(runs)"))}
            assert "remote_state" not in columns and "owner" not in columns
            assert conn.execute(text("SELECT count(*) FROM results")).scalar() == 2
    finally:
        engine.dispose()


def check_remote_state_round_trip(store) -> None:
    owner = RunOwner("laptop", 4321, "/home/u/.config/benchbay/running/ab.lock")
    run_id = store.runs.create("web", "idle", {"interval": 0.5}, owner=owner)
    other = store.runs.create("db", "idle", {})
    state = RemoteRunState("/tmp/benchbay-x1", agent_pid=777, deadline=1305.0, expected_end=1005.0, interval=0.5)
    store.runs.set_remote_state(run_id, state)
    found = {run.id: run for run in store.runs.running()}
    assert (found[run_id].remote, found[run_id].owner) == (state, owner)
    assert found[other].remote is None and found[other].owner is None
    assert [r.id for r in store.runs.running(host="web")] == [run_id]

    store.runs.finish(run_id, RunStatus.INTERRUPTED, error="web: the run directory is gone")
    assert [r.id for r in store.runs.running()] == [other]
    assert store.runs.get(run_id).run.status == "interrupted"
    with store.engine.connect() as conn:   # only a running run is re-attached to: nothing kept after
        row = conn.execute(text("SELECT remote_state, owner FROM runs WHERE id = :id"), {"id": run_id}).one()
    assert tuple(row) == (None, None)


def test_remote_state_and_owner_round_trip_until_the_run_ends(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        check_remote_state_round_trip(store)
    finally:
        store.close()


def test_a_run_cannot_be_finished_as_running(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        run_id = store.runs.create("web", "idle", {})
        with pytest.raises(ValueError, match="interrupted"):
            store.runs.finish(run_id, "running")
    finally:
        store.close()


def test_a_lost_link_run_keeps_where_it_lives_and_is_collected_like_a_running_one(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    try:
        run_id = store.runs.create("web", "idle", {"interval": 1.0}, owner=RunOwner("box", 42, "/locks/1"))
        remote = RemoteRunState(run_dir="/tmp/benchbay-run.x", agent_pid=7, deadline=900.0, boot_id="b" * 36)
        store.runs.set_remote_state(run_id, remote)
        store.runs.mark_lost_link(run_id, "web: link lost: could not reconnect within 120 s")

        detail = store.runs.get(run_id)
        assert detail.run.status == RunStatus.LOST_LINK == "lost link"
        assert detail.run.finished_at is None and "could not reconnect" in detail.run.error
        assert store.runs.running() == []                      # not running: nobody drives it
        [lost] = store.runs.running(lost_link=True)            # but collected as one
        assert (lost.id, lost.status, lost.remote, lost.owner) == (run_id, "lost link", remote, None)

        store.runs.finish(run_id, RunStatus.DONE)              # collected: an ordinary finished run
        assert store.runs.running(lost_link=True) == []
        assert store.runs.get(run_id).run.status == "done"
        with pytest.raises(ValueError, match="finishes as one of"):
            store.runs.finish(run_id, RunStatus.LOST_LINK)     # never a final status
    finally:
        store.close()
