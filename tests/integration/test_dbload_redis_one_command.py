"""The built-in Redis generator's hot path: one connection sending batches of one command (GETs only or SETs
only), against a redis-server of the test's own: every request counted is one the server served. (A stall and a
server that goes away on this path: test_dbload_redis.py.)
"""
from __future__ import annotations

from pathlib import Path

import pytest

from remote.agent import dbload_redis, resp_wire
from tests.integration.test_dbload_redis import (  # noqa: F401 - the fixtures used here
    Ticks,
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
