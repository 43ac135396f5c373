"""How long a run's small commands may take (the rule in remote.command_timeouts, and a session using it), and
what a crowded workbench changes: how often each run is read, and how long a connection may take."""
from __future__ import annotations

import pytest

from remote.command_timeouts import (
    BUSY,
    CEILING,
    CONNECT_CEILING,
    FLOOR,
    MULTIPLE,
    POLL_CEILING,
    ResponseTimes,
    poll_period,
    scaled_connect_timeout,
    scaled_timeout,
)
from remote.run_link import STALL_LIMIT
from remote.run_session import RunSession
from remote.transport import CommandResult, Transport


def test_a_fast_host_keeps_the_old_fixed_limit() -> None:
    assert scaled_timeout(None, busy_runs=1, cpus=4) == FLOOR == 20.0
    assert scaled_timeout(0.01, busy_runs=1, cpus=4) == FLOOR


def test_a_slow_host_gets_a_multiple_of_its_slowest_round_trip() -> None:
    assert scaled_timeout(1.5, busy_runs=1, cpus=4) == pytest.approx(MULTIPLE * 1.5) == pytest.approx(30.0)
    assert scaled_timeout(4.0, busy_runs=1, cpus=4) == pytest.approx(80.0)


def test_a_broken_host_is_capped() -> None:
    assert scaled_timeout(60.0, busy_runs=1, cpus=4) == CEILING


def test_fifty_runs_from_one_workbench_get_more_time_than_one() -> None:
    # the case that failed: 50 hosts started together from a 2-core laptop, each answering fast
    alone = scaled_timeout(0.05, busy_runs=1, cpus=2)
    crowded = scaled_timeout(0.05, busy_runs=50, cpus=2)
    assert alone == FLOOR
    assert crowded == pytest.approx(FLOOR * 50 / 8)     # 4 runs per CPU before our own load counts
    assert scaled_timeout(0.05, busy_runs=8, cpus=2) == FLOOR
    assert scaled_timeout(2.0, busy_runs=50, cpus=2) == CEILING


def test_one_slow_answer_raises_the_limit_until_it_leaves_the_window() -> None:
    times = ResponseTimes(window=4)
    assert times.slowest is None
    for seconds in (0.02, 3.0, 0.02):
        times.record(seconds)
    assert times.slowest == 3.0
    for _ in range(3):
        times.record(0.01)
    assert times.slowest == pytest.approx(0.02)


class _SlowTransport(Transport):
    """Answers every command at once and remembers the limit each was given."""

    name = "slow-host"

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    def run(self, command, timeout=60.0, stdin=None) -> CommandResult:
        self.timeouts.append(timeout)
        return CommandResult(0, b"", b"")

    def put_bytes(self, data, remote_path, mode=0o600) -> None:
        raise AssertionError("not used")

    def get_bytes(self, remote_path, offset=0, limit=None) -> bytes:
        return b""

    def close(self) -> None:
        pass


def test_a_session_gives_its_commands_the_scaled_limit_and_waits_longer_before_dropping_the_link(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("remote.command_timeouts.os.cpu_count", lambda: 64)   # other sessions of this process
    transport = _SlowTransport()
    session = RunSession(transport, "monitor", interval=1.0)
    try:
        session.probe()
        assert len(transport.timeouts) == 1 and len(session.response_times) == 1   # one round trip to begin
        session.run_dir = "/tmp/benchbay-unit"
        session.response_times.record(2.5)        # the host answered slowly once
        session._keepalive()
        assert transport.timeouts[-1] == pytest.approx(50.0)
        assert session.link.stall_limit >= 50.0 + 10.0 > STALL_LIMIT
    finally:
        session.close()


class _Run:
    """Stands for another run of this workbench."""


def test_a_lone_run_is_read_four_times_a_tick_and_a_hundred_runs_once_a_tick() -> None:
    assert poll_period(1.0, busy_runs=1, cpus=2) == pytest.approx(0.25)
    assert poll_period(1.0, busy_runs=8, cpus=2) == pytest.approx(0.25)     # 4 runs per CPU: still alone
    assert poll_period(1.0, busy_runs=16, cpus=2) == pytest.approx(0.5)
    assert poll_period(1.0, busy_runs=100, cpus=2) == pytest.approx(1.0)    # never later than a tick
    assert poll_period(10.0, busy_runs=100, cpus=2) == pytest.approx(POLL_CEILING)
    assert poll_period(0.5, busy_runs=1, cpus=2) == pytest.approx(0.125)


def test_the_connect_timeout_stretches_with_our_own_load_within_bounds() -> None:
    assert scaled_connect_timeout(10.0, busy_runs=1, cpus=2) == 10.0          # one host: the user's setting
    assert scaled_connect_timeout(10.0, busy_runs=20, cpus=2) == pytest.approx(25.0)
    assert scaled_connect_timeout(10.0, busy_runs=100, cpus=2) == CONNECT_CEILING
    assert scaled_connect_timeout(120.0, busy_runs=100, cpus=2) == 120.0     # never below the setting


def test_a_crowded_workbench_renews_deadlines_less_often_but_three_times_per_margin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("remote.command_timeouts.os.cpu_count", lambda: 2)
    alone = RunSession(_SlowTransport(), "monitor", interval=1.0, margin=300.0)
    short = RunSession(_SlowTransport(), "monitor", interval=1.0, margin=30.0)
    try:
        assert alone.keepalive_every == pytest.approx(10.0) and alone.poll_period == pytest.approx(0.25)
        others = [_Run() for _ in range(100)]
        for run in others:
            BUSY.add(run)
        assert alone.keepalive_every == pytest.approx(60.0)      # a command per minute, not six
        assert alone.poll_period == pytest.approx(1.0)
        assert short.keepalive_every == pytest.approx(10.0)      # still three times within a 30 s margin
    finally:
        for run in others:
            BUSY.discard(run)
        alone.close()
        short.close()
