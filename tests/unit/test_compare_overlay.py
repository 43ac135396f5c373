"""Telemetry of compared runs on one axis: each test starts at t = 0, disk curves of the disk the test used."""
from __future__ import annotations

import pytest

from app.compare.model import compare_runs
from app.compare.overlay import aligned, overlay_runs, pick, start_offset
from storage.records import ResultSample, SeriesData


def _store_run(store, host: str, test: str, lead_in: float, busy_disk: str) -> int:
    """A run whose telemetry starts lead_in seconds before the agent's first phase."""
    run_id = store.runs.create(host, test, {})
    t = [float(i) for i in range(10)]
    store.runs.add_series(run_id, [
        SeriesData("disk.util", "sda", "%", t, [90.0 if busy_disk == "sda" else 1.0] * 10),
        SeriesData("disk.util", "sdb", "%", t, [90.0 if busy_disk == "sdb" else 1.0] * 10),
        SeriesData("disk.r/s", busy_disk, "1/s", t, [100.0] * 10),
        SeriesData("disk.w/s", busy_disk, "1/s", t, [50.0] * 10),
        SeriesData("cpu.idle", "", "%", t, [75.0] * 10),
        SeriesData("load.1", "", "", t, [1.5] * 10),
    ])
    host_t0 = 1_700_000_000.0
    store.runs.add_events(run_id, [
        {"seq": 1, "t": host_t0 + lead_in, "type": "phase_start", "phase": "storm", "label": "Storm"},
        {"seq": None, "t": host_t0 + 20, "type": "telemetry", "t0": host_t0},
    ])
    store.runs.add_results(run_id, [ResultSample(test, "accepted_per_s", 100.0, "msg/s", {})])
    store.runs.finish(run_id, "done")
    return run_id


def test_runs_are_aligned_on_their_test_start(workbench) -> None:
    store = workbench.store
    first = _store_run(store, "mail-01", "mailstorm", lead_in=2.0, busy_disk="sda")
    second = _store_run(store, "mail-02", "mailstorm", lead_in=5.0, busy_disk="sdb")
    comparison = compare_runs(workbench, [first, second])
    runs = overlay_runs(comparison, "mailstorm")
    assert runs == [("mail-01", first), ("mail-02", second)]

    util = aligned(workbench, runs, "disk.util")
    assert [(c.label, c.device) for c in util] == [("mail-01", "sda"), ("mail-02", "sdb")]
    assert util[0].t[0] == pytest.approx(-2.0) and util[1].t[0] == pytest.approx(-5.0)
    assert util[0].values[0] == 90.0

    iops = aligned(workbench, runs, "disk.iops")
    assert iops[1].device == "sdb" and iops[1].values[0] == 150.0
    busy = aligned(workbench, runs, "cpu.busy")
    assert busy[0].values[0] == 25.0 and busy[0].unit == "%"
    assert aligned(workbench, runs, "load.1")[0].values == [1.5] * 10


def test_a_run_without_telemetry_is_left_out_and_unplaced_events_do_not_shift() -> None:
    assert start_offset([]) == 0.0
    assert start_offset([{"type": "phase_start", "t": 5.0}]) == 0.0    # no t0: nothing to measure from
    assert pick([], "disk.util") is None
    assert pick([SeriesData("disk.util", "sda", "%", [0.0], [1.0])], "disk.iops") is None


def test_a_test_start_on_another_clock_than_the_series_does_not_move_the_run_hours_away() -> None:
    telemetry = {"type": "telemetry", "t": 1_700_000_100.0, "t0": 1_700_000_000.0}
    # the phase on the host's clock, as the agent writes it: 2 s into the telemetry
    assert start_offset([telemetry, {"type": "phase_start", "t": 1_700_000_002.0}], span=60.0) == 2.0
    # its time on the workbench's clock, 3.5 h apart, with the host's own time beside: the host's counts
    moved = {"type": "phase_start", "t": 1_700_012_602.0, "host_t": 1_700_000_002.0}
    assert start_offset([telemetry, moved], span=60.0) == 2.0
    # no host time beside: a start outside the run's telemetry is not on its clock; the run starts at 0
    assert start_offset([telemetry, {"type": "phase_start", "t": 1_700_012_602.0}], span=60.0) == 0.0
    assert start_offset([telemetry, {"type": "phase_start", "t": 1_699_987_402.0}], span=60.0) == 0.0


def test_a_run_stored_on_the_workbench_clock_is_placed_by_the_host_times_kept_beside() -> None:
    # a host 5 h ahead, stored as the engine stores it: t0 and t on the workbench's clock, the host's beside
    offset = 18_000.0
    telemetry = {"type": "telemetry", "t": 1_700_000_100.0, "t0": 1_700_000_000.0,
                 "host_t0": 1_700_000_000.0 + offset, "clock_offset_s": offset}
    start = {"type": "phase_start", "seq": 3, "t": 1_700_000_004.0, "host_t": 1_700_000_004.0 + offset}
    assert start_offset([telemetry, start], span=60.0) == 4.0
