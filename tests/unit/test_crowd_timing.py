"""What a crowded workbench changes: how often each run is read, and how long a connection may take."""
from __future__ import annotations

import pytest

from remote.command_timeouts import BUSY, CONNECT_CEILING, POLL_CEILING, poll_period, scaled_connect_timeout
from remote.run_session import RunSession
from remote.transport import CommandResult, Transport


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


class _Run:
    """Stands for another run of this workbench."""


class _QuietTransport(Transport):
    name = "quiet-host"

    def run(self, command, timeout=60.0, stdin=None) -> CommandResult:
        return CommandResult(0, b"", b"")

    def put_bytes(self, data, remote_path, mode=0o600) -> None:
        raise AssertionError("not used")

    def get_bytes(self, remote_path, offset=0, limit=None) -> bytes:
        return b""

    def close(self) -> None:
        pass


def test_a_crowded_workbench_renews_deadlines_less_often_but_three_times_per_margin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("remote.command_timeouts.os.cpu_count", lambda: 2)
    alone = RunSession(_QuietTransport(), "monitor", interval=1.0, margin=300.0)
    short = RunSession(_QuietTransport(), "monitor", interval=1.0, margin=30.0)
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
