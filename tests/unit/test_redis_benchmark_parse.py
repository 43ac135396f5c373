"""Reading redis-benchmark's own output (captured from redis-benchmark 7.0.15 against Redis 7.0.15)."""
from __future__ import annotations

from pathlib import Path

import pytest

from remote.agent import dbload_redis, redis_benchmark_run
from remote.agent.redis_benchmark_run import parse_report, per_second, progress_lines, split_clients

CAPTURED = Path(__file__).resolve().parents[1] / "fixtures" / "redis_benchmark"


def _text(name: str) -> str:
    return (CAPTURED / name).read_text()


def test_progress_lines_are_read_as_printed() -> None:
    lines = progress_lines(_text("set_c10_P1.txt"))
    # 44 printed, the first before any reply (rps=0.0, overall -nan) left out
    assert len(lines) == 43
    assert lines[0] == {"rps": 1257.5, "overall": 1257.5, "avg_ms": 7.775, "avg_overall_ms": 7.775}
    assert lines[1] == {"rps": 4454.2, "overall": 2837.7, "avg_ms": 1.738, "avg_overall_ms": 3.091}


def test_seconds_are_four_of_its_quarter_second_lines() -> None:
    seconds = per_second(progress_lines(_text("set_c10_P1.txt")))
    assert len(seconds) == 10   # 43 lines: 10 whole seconds, the last 3 lines are not a whole one
    rates = (1257.5, 4454.2, 8742.1, 4067.7)
    avgs = (7.775, 1.738, 0.916, 1.906)
    assert seconds[0]["ops"] == pytest.approx(sum(rates) / 4, abs=0.05)
    assert seconds[0]["avg_ms"] == pytest.approx(sum(r * a for r, a in zip(rates, avgs, strict=True)) / sum(rates),
                                                 abs=0.0005)
    get = per_second(progress_lines(_text("get_c50_P16.txt")))
    assert len(get) == 4
    assert get[0]["ops"] == pytest.approx((38349.2 + 40407.8 + 36544.7 + 49700.8) / 4, abs=0.05)


@pytest.mark.parametrize(("name", "want"), [
    ("set_c10_P1.txt", {"requests": 30000, "seconds": 11.29, "clients": 10, "throughput": 2657.69,
                        "avg_ms": 3.501, "min_ms": 0.048, "p50_ms": 0.407, "p95_ms": 13.391, "p99_ms": 59.903,
                        "max_ms": 128.447, "p999_ms": 91.263, "p999_line": 99.902}),
    ("get_c50_P16.txt", {"requests": 200000, "seconds": 4.31, "clients": 50, "throughput": 46382.19,
                         "avg_ms": 15.737, "min_ms": 0.432, "p50_ms": 12.671, "p95_ms": 36.959, "p99_ms": 60.927,
                         "max_ms": 95.103, "p999_ms": 94.847, "p999_line": 99.902}),
])
def test_the_closing_report_is_read_to_the_printed_digit(name: str, want: dict) -> None:
    report = parse_report(_text(name))
    assert {k: v for k, v in report.items() if k != "percentiles"} == want
    # the percentile table, not the cumulative distribution printed after it (same line format)
    assert report["percentiles"][0][0] == 0.0
    assert [p for p, _, _ in report["percentiles"]] == sorted(p for p, _, _ in report["percentiles"])
    assert report["percentiles"][-1][0] == 100.0


def test_a_run_cut_short_has_no_report() -> None:
    text = _text("get_c50_P16.txt")
    with pytest.raises(redis_benchmark_run.ToolError, match="no closing report"):
        parse_report(text[:text.index("Summary:")])


@pytest.mark.parametrize(("clients", "ratio", "want"), [
    (10, 0.9, {"get": 9, "set": 1}), (10, 0.5, {"get": 5, "set": 5}), (2, 0.99, {"get": 1, "set": 1}),
    (1, 0.9, {"get": 1}), (1, 0.2, {"set": 1}), (8, 1.0, {"get": 8}), (8, 0.0, {"set": 8}),
])
def test_clients_are_split_between_get_and_set(clients: int, ratio: float, want: dict) -> None:
    assert split_clients(clients, ratio) == want
    assert sum(want.values()) == clients


def _cfg(**extra: object) -> dict:
    return dbload_redis.config({"target": "127.0.0.1:6380", "key_prefix": "benchbay:r1:", "keyspace": 5000,
                                "value_size": 64, "pipeline": 16, **extra}, clients=10, seconds=5)


def test_command_lines_use_the_test_prefix_and_database() -> None:
    args = redis_benchmark_run.argv(_cfg(), "set", 3, 1000)
    assert args[-3:] == ["-x", "SET", "benchbay:r1:__rand_int__"]   # the value comes on stdin
    assert args[args.index("--dbnum") + 1] == "15" and args[args.index("-r") + 1] == "5000"
    assert args[args.index("-P") + 1] == "16" and args[args.index("-c") + 1] == "3"
    assert redis_benchmark_run.argv(_cfg(), "get", 3, 1000)[-2:] == ["GET", "benchbay:r1:__rand_int__"]


def test_a_password_never_goes_on_its_command_line() -> None:
    with pytest.raises(redis_benchmark_run.ToolError, match="ps"):
        redis_benchmark_run.argv(_cfg(password="s3cret"), "get", 3, 1000)


def test_tool_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redis_benchmark_run, "version", lambda binary="redis-benchmark": None)
    assert dbload_redis.redis_tool({"tool": "auto"})[0] == "builtin RESP"
    assert "install redis-tools" in dbload_redis.redis_tool({"tool": "redis-benchmark"})
    assert "memtier" in dbload_redis.redis_tool({"tool": "memtier"})
    monkeypatch.setattr(redis_benchmark_run, "version", lambda binary="redis-benchmark": "7.0.15")
    assert dbload_redis.redis_tool({"tool": "auto"}) == ("redis-benchmark", "7.0.15")
    assert dbload_redis.engine_name(("redis-benchmark", "7.0.15")) == "redis-benchmark 7.0.15"
    assert dbload_redis.redis_tool({"tool": "auto", "password": "x"})[0] == "builtin RESP"
    assert dbload_redis.redis_tool({"tool": "auto", "rate": 500})[0] == "builtin RESP"
    assert "ps" in dbload_redis.redis_tool({"tool": "redis-benchmark", "password": "x"})
    assert "constant-rate" in dbload_redis.redis_tool({"tool": "redis-benchmark", "rate": 500})


def test_data_sizes_from_the_servers_memory() -> None:
    facts = {"used_memory": 1 << 20, "maxmemory": 0, "total_system_memory": (1 << 30) + (1 << 20)}
    keys = dbload_redis.keyspace_for(facts, "fits", 100, 14)
    assert keys == int((1 << 30) * dbload_redis.FITS_SHARE / (100 + 14 + 12 + dbload_redis.KEY_OVERHEAD))
    assert dbload_redis.keyspace_for(facts, "scale=5000", 100, 14) == 5000
    with pytest.raises(ValueError, match="in memory"):
        dbload_redis.keyspace_for(facts, "2xram", 100, 14)
