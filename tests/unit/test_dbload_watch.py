"""Which inventory host is a database load's server (its telemetry is then recorded with the run)."""
from __future__ import annotations

import pytest

from app.engine.dbload_watch import step_figures, step_windows, target_host
from app.engine.orchestrator import RunRequestError
from remote.hostspec import LOCAL_HOST, HostSpec
from storage.records import SeriesData


class Inventory:
    def __init__(self, *hosts: HostSpec) -> None:
        self.hosts = [LOCAL_HOST, *hosts]

    def list_hosts(self) -> list[HostSpec]:
        return self.hosts


BENCH = Inventory(HostSpec(name="db1", address="10.0.0.5"), HostSpec(name="db6", address="fd00::6"),
                  HostSpec(name="c1", address="10.0.0.9"))


@pytest.mark.parametrize(("params", "clients", "expected"), [
    ({"target": "10.0.0.5:5432"}, ["c1"], "db1"),            # the target's address is an inventory host's
    ({"target": "10.0.0.5"}, ["c1"], "db1"),
    ({"target": "db1:6379"}, ["c1"], "db1"),                 # or its name
    ({"target": "[fd00::6]:3306"}, ["c1"], "db6"),
    ({"target": "10.0.0.77:5432"}, ["c1"], None),            # a server the inventory does not know
    ({"target": "127.0.0.1:5432"}, ["c1"], None),            # the client's own server: its telemetry is the run's
    ({"target": "10.0.0.9:5432"}, ["c1"], None),             # the client itself
    ({"target": "127.0.0.1:5432", "target_host": "db1"}, ["c1"], "db1"),   # said outright
    ({"target": "127.0.0.1:5432", "target_host": "local"}, ["c1"], "local"),
    ({"target": "127.0.0.1:5432", "target_host": "c1"}, ["c1", "c2"], None),
])
def test_the_server_is_the_inventory_host_the_target_names(params, clients, expected) -> None:
    assert target_host(BENCH, params, clients) == expected


def test_a_target_host_not_in_the_inventory_says_what_to_do() -> None:
    with pytest.raises(RunRequestError, match=r"target_host=db9 is not a host of the inventory: add it"):
        target_host(BENCH, {"target": "127.0.0.1", "target_host": "db9"}, ["c1"])


def test_a_step_takes_the_samples_whose_middle_lies_in_it() -> None:
    events = [{"type": "phase_start", "phase": "load", "t": 90.0},
              {"type": "phase_end", "phase": "load", "t": 100.0},
              {"type": "phase_start", "phase": "step1", "t": 100.0},
              {"type": "phase_end", "phase": "step1", "t": 103.0},
              {"type": "phase_start", "phase": "step2", "t": 104.0}]   # step 2 never ended: no window
    windows = step_windows(events)
    assert windows == {1: (100.0, 103.0)}
    t = [99.0, 100.0, 101.0, 102.0, 103.0, 104.0]     # seconds since t0 = 1.0: the samples end at 100 ... 105
    series = [SeriesData("interval", "", "s", t, [1.0] * 6),
              SeriesData("cpu.idle", "", "%", t, [90.0, 50.0, 40.0, 30.0, 95.0, 99.0]),
              SeriesData("cpu.iowait", "", "%", t, [0.0, 10.0, 20.0, 0.0, 0.0, 0.0]),
              SeriesData("cpu.steal", "", "%", t, [0.0, 3.0, 0.0, 0.0, 0.0, 0.0]),
              SeriesData("load.1", "", "", t, [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]),
              SeriesData("disk.util", "sda", "%", t, [0.0, 20.0, 40.0, 60.0, 0.0, 0.0]),
              SeriesData("disk.util", "sdb", "%", t, [0.0, 5.0, 5.0, 5.0, 0.0, 0.0])]
    figures = step_figures(series, 1.0, windows[1])
    # the samples ending at 101, 102, 103 (middles 100.5 ... 102.5); not the one ending at 100 nor at 104
    assert figures["samples"] == 3
    assert figures["target_cpu_pct"] == pytest.approx((40 + 40 + 70) / 3)
    assert figures["target_iowait_pct"] == pytest.approx(10.0)
    assert figures["target_steal_pct"] == pytest.approx(1.0)
    assert figures["target_load1"] == pytest.approx(2.0)
    assert (figures["disk"], figures["target_disk_util_pct"]) == ("sda", pytest.approx(40.0))
