"""Store behaviour on SQLite. tests/integration/test_storage_postgres.py runs these same tests on PostgreSQL."""
from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import func, select

from remote.telemetry.sample import TelemetrySample, samples_to_series, series_to_samples
from storage.db import Store, open_store
from storage.errors import DuplicateHost, NotFound, StoreError
from storage.models import FactsSnapshot, Result, RunEvent, Series
from storage.records import HostRecord, ResultSample, SeriesData

FACTS = {
    "schema": 1,
    "hostname": "web-1",
    "is_root": False,
    "cpu": {"model": "AMD EPYC 7543 32-Core", "cores": 32, "mhz": None, "max_mhz": 3737.5,
            "flags": ["avx", "avx2", "aes"]},
    "disks": [{"name": "nvme0n1", "serial": "needs root", "size_bytes": 2_000_398_934_016, "rotational": False}],
    "raid": {"mdstat": None, "arrays": [], "hardware": []},
    "os": "Debian GNU/Linux 12 (bookworm) — ünïcode",
    "errors": [],
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    yield opened
    opened.close()


def _count(store: Store, model, run_id: int) -> int:
    with store.session() as session:
        return session.scalar(select(func.count()).select_from(model).where(model.run_id == run_id))


# --- hosts -------------------------------------------------------------------------------------------

def test_host_crud(store: Store) -> None:
    web = HostRecord(name="web", address="10.0.0.5", port=2222, user="admin", auth="key",
                   key_path="~/.ssh/id_ed25519", jump="bastion", keyring=True, test_dir="/srv/bench",
                   notes="rack 4", tags=("prod", "nvme"))
    store.hosts.add(HostRecord(name="db", address="db.example.org"))
    store.hosts.add(web)
    assert [h.name for h in store.hosts.list()] == ["db", "web"]
    assert store.hosts.get("web") == web
    assert store.hosts.get("db").port is None
    assert store.hosts.get("nope") is None

    store.hosts.update("web", replace(web, port=22, tags=("prod",)))
    assert store.hosts.get("web") == replace(web, port=22, tags=("prod",))

    assert store.hosts.remove("db") is True
    assert store.hosts.remove("db") is False
    assert [h.name for h in store.hosts.list()] == ["web"]


def test_duplicate_host_refused(store: Store) -> None:
    store.hosts.add(HostRecord(name="web", address="a"))
    with pytest.raises(DuplicateHost, match="web"):
        store.hosts.add(HostRecord(name="web", address="b"))
    store.hosts.add(HostRecord(name="db", address="c"))
    with pytest.raises(DuplicateHost):
        store.hosts.update("db", HostRecord(name="web", address="c"))
    assert store.hosts.get("web").address == "a"
    assert store.hosts.get("db").address == "c"


@pytest.mark.parametrize("name", ["local", "LOCAL"])
def test_local_host_name_refused(store: Store, name: str) -> None:
    with pytest.raises(DuplicateHost, match="built-in"):
        store.hosts.add(HostRecord(name=name, address="x"))
    store.hosts.add(HostRecord(name="web", address="x"))
    with pytest.raises(DuplicateHost):
        store.hosts.update("web", HostRecord(name=name, address="x"))
    assert [h.name for h in store.hosts.list()] == ["web"]


def test_bad_host_specs_refused(store: Store) -> None:
    for spec in (HostRecord(name=""), HostRecord(name=" web"), HostRecord(name="web", port=70000),
                 HostRecord(name="web", auth="")):
        with pytest.raises(StoreError):
            store.hosts.add(spec)
    with pytest.raises(NotFound):
        store.hosts.update("ghost", HostRecord(name="ghost"))


def test_runs_survive_host_removal_and_follow_a_rename(store: Store) -> None:
    store.hosts.add(HostRecord(name="web", address="a"))
    run_id = store.runs.create("web", "facts", {})
    store.runs.add_facts(run_id, FACTS)
    store.hosts.update("web", HostRecord(name="web-1", address="a"))
    assert store.runs.list(host="web-1")[0].id == run_id
    assert store.runs.latest_facts("web-1")[1] == FACTS
    store.hosts.remove("web-1")
    assert store.runs.get(run_id).run.host_name == "web-1"


# --- runs --------------------------------------------------------------------------------------------

def test_run_lifecycle(store: Store) -> None:
    params = {"block_size": 4096, "workers": [1, 2, 4], "direct": True, "file": {"size": "2G"}}
    run_id = store.runs.create("web", "disk", params, agent_version="0.1.0")
    record = store.runs.get(run_id).run
    assert (record.status, record.parameters, record.agent_version) == ("running", params, "0.1.0")
    assert record.finished_at is None and record.tags == () and record.error == ""

    store.runs.finish(run_id, "failed", error="fio: disk full", engine="fio", engine_version="3.33")
    record = store.runs.get(run_id).run
    assert (record.status, record.error, record.engine, record.engine_version) == (
        "failed", "fio: disk full", "fio", "3.33")
    assert record.finished_at >= record.started_at

    with pytest.raises(ValueError):
        store.runs.finish(run_id, "running")
    with pytest.raises(NotFound):
        store.runs.finish(99999, "done")
    with pytest.raises(NotFound):
        store.runs.add_facts(99999, FACTS)
    assert store.runs.get(99999) is None


def test_run_list_filters_newest_first(store: Store) -> None:
    ids = [store.runs.create(host, test, {}) for host, test in
           [("a", "disk"), ("b", "disk"), ("a", "cpu"), ("a", "disk")]]
    assert [r.id for r in store.runs.list()] == ids[::-1]
    assert [r.id for r in store.runs.list(host="a")] == [ids[3], ids[2], ids[0]]
    assert [r.id for r in store.runs.list(test="disk")] == [ids[3], ids[1], ids[0]]
    assert [r.id for r in store.runs.list(host="a", test="disk", limit=1)] == [ids[3]]
    assert store.runs.list(host="nobody") == []


def test_facts_round_trip(store: Store) -> None:
    run_id = store.runs.create("web", "facts", {})
    assert store.runs.latest_facts("web") is None
    assert store.runs.get(run_id).facts is None
    store.runs.add_facts(run_id, FACTS)
    assert store.runs.get(run_id).facts == FACTS
    taken_at, facts = store.runs.latest_facts("web")
    assert facts == FACTS

    later = store.runs.create("web", "facts", {})
    store.runs.add_facts(later, {**FACTS, "hostname": "web-1b"}, taken_at=taken_at + timedelta(hours=1))
    assert store.runs.latest_facts("web")[1]["hostname"] == "web-1b"
    assert store.runs.latest_facts("other") is None


def test_result_samples(store: Store) -> None:
    run_id = store.runs.create("web", "disk", {})
    samples = [
        ResultSample("randread", "iops", 48211.5, "op/s", {"bs": 4096, "workers": 8, "engine": "fio"}),
        ResultSample("randread", "lat_p99", 0.000734, "s", {}),
        ResultSample("randwrite", "MB/s", 1e-300, "MB/s", {"cached": True, "note": None}),
    ]
    store.runs.add_results(run_id, samples)
    store.runs.add_results(run_id, [])
    assert store.runs.get(run_id).results == samples


def _awkward_floats(count: int) -> list[float]:
    rng = random.Random(7)
    values = [rng.uniform(-1e6, 1e6) for _ in range(count)]
    values[:6] = [0.0, -0.0, 5e-324, 1.7976931348623157e308, math.inf, 1 / 3]
    return values


def test_series_round_trip_exact(store: Store) -> None:
    run_id = store.runs.create("web", "disk", {})
    t = [i * 1.000001 for i in range(3600)]
    util = SeriesData("util", "nvme0n1", "%", t, _awkward_floats(3600))
    load = SeriesData("load1", "", "", t[:3], [0.5, math.nan, 2.0])
    store.runs.add_series(run_id, [util, load])

    assert store.runs.get(run_id).series_names == [("util", "nvme0n1"), ("load1", "")]
    back_util, back_load = store.runs.series(run_id)
    assert back_util == util
    assert struct.pack("<3d", *back_load.values) == struct.pack("<3d", *load.values)   # NaN bit-exact
    assert store.runs.series(run_id, names=[("load1", "")])[0].name == "load1"
    with pytest.raises(ValueError):
        store.runs.add_series(run_id, [SeriesData("r/s", "sda", "1/s", [0.0], [])])


def test_run_events_round_trip_in_order(store: Store) -> None:
    run_id = store.runs.create("web", "idle", {})
    events = [
        {"seq": 1, "t": 1_700_000_000.25, "type": "start", "agent_version": "0.1.0", "params": {"phases": []}},
        {"seq": 2, "t": 1_700_000_000.5, "type": "phase_start", "phase": "warmup", "label": "Warm-up ünï"},
        {"seq": None, "t": 1_700_000_003.0, "type": "reconnected", "after_s": 2.5},
        {"seq": 3, "t": 1_700_000_001.0, "type": "progress", "phase": "warmup", "fraction": 0.5, "eta_s": None,
         "message": ""},
        {"seq": 4, "t": 1_700_000_009.0, "type": "done", "status": "done", "error": ""},
    ]
    store.runs.add_events(run_id, events[:2])
    store.runs.add_events(run_id, events[2:])
    store.runs.add_events(run_id, [])
    assert store.runs.events(run_id) == events
    later = store.runs.create("web", "idle", {})
    store.runs.add_events(later, [{"seq": 1, "t": 2.0, "type": "result", "value": math.nan, "meta": {"x": math.inf}}])
    assert store.runs.events(later) == [{"seq": 1, "t": 2.0, "type": "result", "value": None, "meta": {"x": None}}]
    assert store.runs.events(store.runs.create("web", "idle", {})) == []
    with pytest.raises(NotFound):
        store.runs.add_events(99999, events)


def test_delete_cascades(store: Store) -> None:
    keep, doomed = store.runs.create("web", "disk", {}), store.runs.create("web", "disk", {})
    for run_id in (keep, doomed):
        store.runs.add_facts(run_id, FACTS)
        store.runs.add_results(run_id, [ResultSample("t", "m", 1.0, "u", {})])
        store.runs.add_series(run_id, [SeriesData("util", "sda", "%", [0.0], [1.0])])
        store.runs.add_events(run_id, [{"seq": 1, "t": 1.0, "type": "start"}])
    assert store.runs.delete(doomed) is True
    assert store.runs.delete(doomed) is False
    assert store.runs.get(doomed) is None
    for model in (FactsSnapshot, Result, Series, RunEvent):
        assert _count(store, model, doomed) == 0
        assert _count(store, model, keep) == 1


def test_datetimes_are_aware_utc(store: Store) -> None:
    before = datetime.now(timezone.utc)
    run_id = store.runs.create("web", "facts", {})
    store.runs.finish(run_id, "done")
    record = store.runs.get(run_id).run
    for stamp in (record.started_at, record.finished_at):
        assert stamp.tzinfo is not None and stamp.utcoffset() == timedelta(0)
        assert before - timedelta(seconds=5) <= stamp <= datetime.now(timezone.utc) + timedelta(seconds=5)

    paris_summer = datetime(2024, 7, 1, 14, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    store.runs.add_facts(run_id, FACTS, taken_at=paris_summer)
    taken_at, _ = store.runs.latest_facts("web")
    assert taken_at == paris_summer and taken_at.utcoffset() == timedelta(0)
    with pytest.raises(ValueError):
        store.runs.add_facts(run_id, FACTS, taken_at=datetime(2024, 7, 1, 12, 0))


def test_many_hosts_hour_of_series(store: Store) -> None:
    """The size a comparison loads: 8 hosts x 1 h of 1 s samples x 30 series."""
    t = [float(i) for i in range(3600)]
    runs = {}
    for host in range(8):
        run_id = store.runs.create(f"host{host}", "mail", {})
        store.runs.add_series(run_id, [SeriesData(f"s{k}", "sda", "%", t, [host + k + i / 7 for i in range(3600)])
                                       for k in range(30)])
        runs[host] = run_id
    for host, run_id in runs.items():
        loaded = store.runs.series(run_id)
        assert len(loaded) == 30 and loaded[29].values[3599] == host + 29 + 3599 / 7


def test_live_telemetry_stored_then_read_back_replays_the_same_samples(store: Store) -> None:
    samples = [TelemetrySample(t=1000.0 + i, interval=1.0, cpu={"user": 10.0 + i, "idle": 90.0 - i},
                               load=(0.5 * i, 0.4, 0.3), tasks={"running": i, "total": 100},
                               disks={"sda": {"util": 12.5 * i, "r/s": 3.0}}, mem={"dirty": 4.0}, psi={"%sio": 1.5})
               for i in range(1, 4)]
    run_id = store.runs.create("web", "disk", {})
    store.runs.add_series(run_id, samples_to_series(samples, t0=999.0))
    assert series_to_samples(store.runs.series(run_id), t0=999.0) == samples
