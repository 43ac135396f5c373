"""How many worker processes the built-in Redis generator forks: from the requests in flight and whether the
server shares the host's CPUs, not one per CPU whatever the load (remote/agent/resp_load.py)."""
from __future__ import annotations

import pytest

from remote.agent import client_sync, dns_fanout, resp_load, tool_cpu


@pytest.fixture(autouse=True)
def no_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own cgroup quota, if any, stays out of these counts."""
    monkeypatch.setattr(client_sync, "_quota_dir", lambda proc, root: None)


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool_cpu.os, "sched_getaffinity", lambda pid: {0, 1})


def test_a_server_on_the_same_two_cores_keeps_one_for_itself(two_cpus: None) -> None:
    # redis-benchmark's one thread against two busy workers time-sharing the server's core
    assert resp_load.process_count(50, pipeline=1, local=True) == 1
    assert resp_load.process_count(50, pipeline=16, local=True) == 1


def test_a_remote_server_gets_a_worker_per_cpu_once_there_is_work_for_them(two_cpus: None) -> None:
    assert resp_load.process_count(10, pipeline=1, local=False) == 2
    assert resp_load.process_count(2, pipeline=16, local=False) == 2


def test_few_requests_in_flight_need_one_worker(two_cpus: None) -> None:
    assert resp_load.process_count(4, pipeline=1, local=False) == 1
    assert resp_load.process_count(8, pipeline=1, local=False) == 1
    assert resp_load.process_count(1, pipeline=64, local=False) == 1   # never more than the connections


def test_the_users_count_wins(two_cpus: None) -> None:
    assert resp_load.process_count(10, wanted=2, pipeline=1, local=True) == 2
    assert resp_load.process_count(3, wanted=8) == 3


def test_the_hosts_own_addresses_are_local() -> None:
    assert resp_load.is_local("127.0.0.1") and resp_load.is_local("localhost")
    assert not resp_load.is_local("192.0.2.1")   # TEST-NET-1: never an address of this host
    assert not resp_load.is_local("no-such-host.invalid")


def test_the_cpus_counted_are_the_ones_the_load_may_run_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # `taskset -c 0` or a container's cpuset on an 8-core machine: workers beyond one CPU only compete
    monkeypatch.setattr(tool_cpu.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(tool_cpu.os, "sched_getaffinity", lambda pid: {0})
    assert resp_load.process_count(50, pipeline=16, local=False) == 1
    assert dns_fanout.default_processes() == 1
    monkeypatch.setattr(tool_cpu.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert resp_load.process_count(50, pipeline=16, local=False) == 4
    assert dns_fanout.default_processes() == 2
    # a CPU quota of 1.5 CPUs over those 4: two workers can run at once
    monkeypatch.setattr(tool_cpu, "usable_cpus", lambda: 1.5)
    assert resp_load.process_count(50, pipeline=16, local=False) == 2
    assert dns_fanout.default_processes() == 1
