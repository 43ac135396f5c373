"""How long a run's small commands may take: the rule in remote.command_timeouts, and a session using it."""
from __future__ import annotations

import pytest

from remote.command_timeouts import CEILING, FLOOR, MULTIPLE, ResponseTimes, scaled_timeout
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
