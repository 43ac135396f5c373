"""The dbload sweep with engine=redis: what the run accepts, and what the Redis side's figures become as stored
results (remote/agent/dbload_redis_engine.py). The Redis side itself is faked here; the real servers are in
tests/integration/test_dbload_redis_ssh.py."""
from __future__ import annotations

import pytest

from app.summary.text import summary_text
from remote.agent import bench_dbload, benches, dbload_redis, dbload_redis_engine, dbload_stats
from remote.agent.dbload_pgbench import DbLoadError


def _redis(**params: object) -> dict:
    return benches.validate("dbload", dict({"engine": "redis", "target": "10.0.0.7"}, **params))


def test_redis_params_are_taken_with_their_defaults() -> None:
    params = _redis()
    assert (params["tool"], params["workload"], params["redis_db"], params["key_prefix"]) == ("auto", "getset", 15, "")
    assert params["value_size"] == dbload_redis.DEFAULTS["value_size"] and params["get_ratio"] == 0.9
    assert bench_dbload.resolved(params)["port"] == 6379
    given = _redis(user="app", password="s3cret", redis_db="3", key_prefix="bb:x:", keyspace="5000",
                   value_size=512, get_ratio="0.5", pipeline=16, processes=2, rate="2000", tool="builtin")
    assert {k: given[k] for k in ("user", "password", "redis_db", "key_prefix", "keyspace", "value_size",
                                  "get_ratio", "pipeline", "processes", "rate")} == {
        "user": "app", "password": "s3cret", "redis_db": 3, "key_prefix": "bb:x:", "keyspace": 5000,
        "value_size": 512, "get_ratio": 0.5, "pipeline": 16, "processes": 2, "rate": 2000.0}
    assert benches.redact(given)["password"] == "***"


@pytest.mark.parametrize("params, words", [
    ({"key_prefix": "a b"}, "key_prefix must be"),
    ({"key_prefix": "bb:*"}, "key_prefix must be"),
    ({"get_ratio": 1.5}, "get_ratio must be a number 0-1"),
    ({"get_ratio": "most"}, "get_ratio must be a number 0-1"),
    ({"data": "2xram"}, "data=2xram does not apply to Redis"),
    ({"tool": "redis-benchmark", "rate": 1000}, "redis-benchmark has no constant-rate mode"),
    ({"tool": "redis-benchmark", "password": "pw"}, "takes a password only on its command line"),
    ({"tool": "pgbench"}, "tool pgbench does not load redis"),
    ({"pipeline": 0}, "pipeline must be a whole number"),
])
def test_bad_redis_params_are_refused_in_one_line(params: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("*", r"\*")):
        _redis(**params)


class Ctx:
    def __init__(self) -> None:
        self.results: list[tuple] = []
        self.warnings: list[str] = []
        self.stopping = False
        self.run_dir = "/run/benchbay-run.Ab12Cd/"

    def result(self, test: str, metric: str, value: float, unit: str, metadata: dict | None = None) -> None:
        self.results.append((test, metric, value, unit, metadata or {}))

    def emit(self, event_type: str, **data: object) -> None:
        if event_type == "result":
            self.result(data["test"], data["metric"], data["value"], data["unit"], data["metadata"])

    def warning(self, message: str) -> None:
        self.warnings.append(message)


def _benchmark_step(*args, **_kwargs) -> dict:
    """What dbload_redis gives for a redis-benchmark step with one client: gets only, rates with decimals, a
    per-second average and no per-second percentiles, and a report cut short."""
    on_second = args[5]
    for second in (1, 2):
        on_second(second, 1000.0 + second, {"get": 4210.5 + second, "set": 0.0},
                  {"get": {"avg": 0.21, "p50": None, "p99": None, "p999": None},
                   "set": {"avg": None, "p50": None, "p99": None, "p999": None}}, 0, 0)
    return {"per_second": [4211.5, 4212.5], "per_second_by_op": {"get": [4211.5, 4212.5], "set": [0.0, 0.0]},
            "errors": 0, "retries": 0, "tool_total": 4212.07, "p50_ms": {"get": 0.2, "set": None},
            "p99_ms": {"get": 0.41, "set": None}, "p999_ms": {"get": 0.9, "set": None}, "unfinished": 0,
            "warning": "redis-benchmark was still running", "clients_by_op": {"get": 1},
            "engine": "redis-benchmark 7.0.15", "engine_version": "7.0.15"}


def test_a_redis_benchmark_step_stores_its_figures_and_no_made_up_ones(monkeypatch) -> None:
    monkeypatch.setattr(dbload_redis, "redis_tool", lambda _p: ("redis-benchmark", "7.0.15"))
    monkeypatch.setattr(dbload_redis, "run_redis_step", _benchmark_step)
    ctx = Ctx()
    params = bench_dbload.resolved(_redis(tool="redis-benchmark", data="scale=100"))
    engine = bench_dbload.make_engine(ctx, params)
    assert params["key_prefix"].startswith("benchbay:") and engine.engine == "redis-benchmark 7.0.15"
    ticks: list[dict] = []
    summary = engine.run_step(1, 1, 2, ticks.append)
    assert [t["ops"]["get"] for t in ticks] == [4211.5, 4212.5] and ticks[0]["engine"] == "redis-benchmark 7.0.15"
    assert ctx.warnings == ["step 1 (1 clients): redis-benchmark was still running"]
    dbload_stats.emit_step_results(ctx, summary, {"step": 1, "clients": 1, "engine": summary["engine"]})
    stored = {metric: (value, meta) for _t, metric, value, _u, meta in ctx.results}
    assert sorted(stored) == ["errors", "get_p50_ms", "get_p999_ms", "get_p99_ms", "ops_per_s", "retries"]
    value, meta = stored["ops_per_s"]
    assert value == 4212.0 and meta["per_second"] == [4211.5, 4212.5] and meta["tool_total"] == 4212.07
    assert meta["per_second_by_op"]["set"] == [0.0, 0.0] and meta["clients_by_op"] == {"get": 1}
    assert stored["get_p99_ms"][0] == 0.41 and stored["get_p99_ms"][1]["p99_per_second"] == [None, None]
    assert "redis-benchmark's report" in stored["get_p99_ms"][1]["source"]
    assert dbload_stats.main_p99(summary) == 0.41
    results = [{"test": t, "metric": m, "value": v, "unit": u, "metadata": meta} for t, m, v, u, meta in ctx.results]
    text = summary_text("client", "done", results, run_id=4)
    assert "step 1: redis-benchmark runs one command per process, so its 1 client ran gets only" in text
    assert "p50/p99/p99.9 from redis-benchmark's report for the whole step" in text


def test_constant_rate_requests_left_unanswered_are_said(monkeypatch) -> None:
    def step(*args, **_kwargs) -> dict:
        args[5](1, 1001.0, {"get": 90, "set": 10}, {"get": {"p50": 0.1, "p99": 0.5, "p999": 0.7},
                                                    "set": {"p50": 0.1, "p99": 0.6, "p999": 0.8}}, 0, 0)
        return {"per_second": [100], "errors": 0, "retries": 0, "tool_total": None, "unfinished": 37,
                "p50_ms": {"get": 0.1, "set": 0.1}, "p99_ms": {"get": 0.5, "set": 0.6},
                "p999_ms": {"get": 0.7, "set": 0.8}, "engine": "builtin RESP"}

    monkeypatch.setattr(dbload_redis, "run_redis_step", step)
    ctx = Ctx()
    engine = bench_dbload.make_engine(ctx, bench_dbload.resolved(_redis(tool="builtin", rate=100)))
    summary = engine.run_step(2, 4, 1, lambda _tick: None)
    assert summary["extra"]["unfinished"] == 37 and summary["extra"]["latency_from"] == "scheduled start"
    assert len(ctx.warnings) == 1 and "step 2 (4 clients): 37 requests" in ctx.warnings[0]
    assert summary["lat_ms"]["set"] == {"p50": 0.1, "p99": 0.6, "p999": 0.8}
    base = {"step": 2, "clients": 4, "engine": "builtin RESP", "rate": 100.0, "data": "scale=100", "keyspace": 100,
            "value_size": 100, "redis_db": 15, "key_prefix": "benchbay:x:", "pipeline": 1, "get_ratio": 0.9,
            "server": "Redis 7.0.15", "target": "10.0.0.7", "workload": "getset"}
    dbload_stats.emit_step_results(ctx, summary, base)
    results = [{"test": t, "metric": m, "value": v, "unit": u, "metadata": meta} for t, m, v, u, meta in ctx.results]
    text = summary_text("client", "done", results, run_id=3)
    assert "engine builtin RESP against Redis 7.0.15 at 10.0.0.7" in text and "100 keys of 100 B" in text
    assert "unanswered: 37 request(s)" in text and "latency counted from each request's scheduled start" in text


def test_a_missing_tool_is_one_line_saying_what_to_install(monkeypatch) -> None:
    monkeypatch.setattr(dbload_redis.redis_benchmark_run, "version", lambda *_a: None)
    with pytest.raises(DbLoadError, match="^dbload: redis-benchmark is not installed on this host: install redis-"):
        bench_dbload.make_engine(Ctx(), bench_dbload.resolved(_redis(tool="redis-benchmark")))
    engine = bench_dbload.make_engine(Ctx(), bench_dbload.resolved(_redis()))   # auto: the built-in generator
    assert engine.engine == "builtin RESP"


def test_the_step_failing_is_one_line_naming_the_target(monkeypatch) -> None:
    def step(*_args, **_kwargs) -> dict:
        raise RuntimeError("step 1 (2 clients): Connection refused")

    monkeypatch.setattr(dbload_redis, "run_redis_step", step)
    engine = dbload_redis_engine.RedisEngine(Ctx(), bench_dbload.resolved(_redis(tool="builtin")), "tag")
    with pytest.raises(DbLoadError, match=r"^dbload: Redis at 10.0.0.7:6379: step 1 \(2 clients\): Connection"):
        engine.run_step(1, 2, 2, lambda _tick: None)
