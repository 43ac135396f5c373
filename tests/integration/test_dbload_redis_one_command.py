"""The built-in Redis generator's hot path: one connection sending batches of one command (GETs only or SETs
only), against a redis-server of the test's own. Every request counted is one the server served, every second
is reported while the server stalls, and a server that goes away is counted as errors, as on the general path.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from remote.agent import dbload_redis, resp_wire
from tests.integration.test_dbload_redis import (  # noqa: F401 - the fixtures used here
    Ticks,
    _children,
    _children_before,
    _ctx,
    _keys,
    _params,
    _server_calls,
    private_redis,
)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("get_ratio", "op"), [(1.0, "get"), (0.0, "set")])
def test_one_command_counts_add_up_to_what_the_server_served(private_redis: str, tmp_path: Path,  # noqa: F811
                                                             get_ratio: float, op: str) -> None:
    params = _params(private_redis, pipeline=4, get_ratio=get_ratio)
    ctx = _ctx(tmp_path)
    try:
        dbload_redis.prepare_redis(ctx, params)
        host, port = resp_wire.parse_target(private_redis)
        with resp_wire.Client(host, port) as client:
            client.call("CONFIG", "RESETSTAT")
        ticks = Ticks()
        out = dbload_redis.run_redis_step(ctx, params, 1, 1, 3, ticks)
        served = _server_calls(private_redis)
    finally:
        assert ctx.cleanup() == []
    assert [s for s, *_ in ticks.seen] == [1, 2, 3]
    counted = sum(out["per_second"])
    other = "set" if op == "get" else "get"
    assert counted > 0 and out["errors"] == 0 and sum(out["per_second_by_op"][other]) == 0
    assert counted % 4 == 0                             # whole batches of four
    assert 0 <= served - counted <= 4, (served, counted)   # beyond them: the batch in flight at the end
    assert 0 < out["p50_ms"][op] <= out["p99_ms"][op] <= out["p999_ms"][op]
    assert _keys(params) == 0


def test_one_command_reports_every_second_of_a_stall(private_redis: str, tmp_path: Path) -> None:  # noqa: F811
    params = _params(private_redis, get_ratio=1.0)
    ctx = _ctx(tmp_path)
    host, port = resp_wire.parse_target(private_redis)

    def pause(second: int) -> None:
        if second == 1:
            with resp_wire.Client(host, port) as client:
                client.call("CLIENT", "PAUSE", 1500)

    try:
        dbload_redis.prepare_redis(ctx, params)
        ticks = Ticks(pause)
        out = dbload_redis.run_redis_step(ctx, params, 1, 1, 4, ticks)
    finally:
        assert ctx.cleanup() == []
    assert [s for s, *_ in ticks.seen] == [1, 2, 3, 4]
    assert min(out["per_second"][1:3]) < 0.5 * out["per_second"][0], out["per_second"]


def test_one_command_against_a_server_that_goes_away(private_redis: str, tmp_path: Path) -> None:  # noqa: F811
    host, port = resp_wire.parse_target(private_redis)
    with resp_wire.Client(host, port) as client:
        pid = int(client.info("server")["process_id"])
    params = _params(private_redis, get_ratio=1.0, pipeline=8)

    def kill(second: int) -> None:
        if second == 1:
            os.kill(pid, signal.SIGKILL)

    ctx = _ctx(tmp_path)
    try:
        dbload_redis.prepare_redis(ctx, params)
        out = dbload_redis.run_redis_step(ctx, params, 1, 1, 4, Ticks(kill))
    finally:
        failed = ctx.cleanup()
    assert out["per_second"][0] > 0 and out["per_second"][-1] == 0
    assert out["errors"] >= 1 and out["retries"] >= 1   # the batch in flight, then the reconnect attempts
    assert len(failed) == 1 and "could not be deleted" in failed[0]
    assert _children() == []
