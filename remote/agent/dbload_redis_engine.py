"""The dbload sweep's Redis engine: tool choice, key prefix, keyspace and fill before the first step, and each
step's figures from dbload_redis turned into the step summary the core stores (dbload_stats' docstring).

What the Redis side returns that the other engines do not: rates as floats (redis-benchmark prints ops/s with
decimals), a per-second latency of only an average (redis-benchmark: p50/p99/p99.9 None), no percentiles at
all for an op that saw no traffic (None: no figure is stored rather than a made-up one), a warning for the
step (redis-benchmark ended before its report), and requests a constant rate sent that were never answered.
"""
from typing import Any, Callable, Dict, List, Optional  # noqa: F401 - some only in type comments

from . import dbload_redis
from .dbload_pgbench import DbLoadError

OPS = ("get", "set")
PCTS = ("p50", "p99", "p999")
# what the step summary leaves out of the stored ops_per_s metadata (already elsewhere, or too large)
NOT_STORED = ("per_second", "per_second_by_op", "p50_ms", "p99_ms", "p999_ms", "errors", "retries", "tool_total",
              "engine", "warning")
SOURCES = {"redis-benchmark": "redis-benchmark's report for the whole step (per second it prints only the "
                              "average)"}


def tool_or_fail(params: Dict[str, Any]) -> Any:
    """(name, version) of the engine, or DbLoadError with the one line saying what to install or why not."""
    tool = dbload_redis.redis_tool(params)
    if isinstance(tool, str):
        raise DbLoadError(tool if tool.startswith("dbload:") else "dbload: " + tool)
    return tool


def _ms(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def step_summary(out: Dict[str, Any], ticks: List[Dict[str, Any]], params: Dict[str, Any]) -> Dict[str, Any]:
    """dbload_redis.run_redis_step's figures as the core's step summary."""
    engine = out.get("engine") or ""
    lat = {}   # type: Dict[str, Dict[str, Any]]
    for op in OPS:
        figures = {p: _ms((out.get(p + "_ms") or {}).get(op)) for p in PCTS}
        if any(v is not None for v in figures.values()):
            source = SOURCES.get(engine.split(" ")[0])
            if source:
                figures["source"] = source
            lat[op] = figures
    extra = {k: v for k, v in out.items() if k not in NOT_STORED}
    extra["latency_from"] = "scheduled start" if params.get("rate") else "request sent"
    if params.get("rate") and not out.get("unfinished"):
        extra["unfinished"] = 0
    return {"engine": engine, "per_second": ticks, "lat_ms": lat, "errors": int(out.get("errors") or 0),
            "retries": int(out.get("retries") or 0), "tool_total": out.get("tool_total"), "total_op": None,
            "extra": extra}


class RedisEngine:
    """prepare(): tool, prefix, keyspace, fill (its own "fill" phase and the prefix's cleanup); run_step()."""

    own_phase = True   # prepare_redis opens the "fill" phase itself

    def __init__(self, ctx: Any, params: Dict[str, Any], run_tag: str) -> None:
        self.ctx, self.params = ctx, params
        self.tool = tool_or_fail(params)
        self.engine = dbload_redis.engine_name(self.tool)
        if not params.get("key_prefix"):
            params["key_prefix"] = dbload_redis.default_prefix(run_tag)

    def size(self) -> int:
        """The keyspace: as given, else from data= (scale=N, or fits: a share of the memory Redis may still use)."""
        if self.params.get("keyspace"):
            return int(self.params["keyspace"])
        if self.params["data"].startswith("scale="):
            return int(self.params["data"].split("=", 1)[1])
        try:
            facts = dbload_redis.server_facts(self.params)
        except OSError as exc:
            raise DbLoadError("dbload: Redis at {}:{} does not answer: {}; check target and that the server lets "
                              "this host in".format(self.params["host"], self.params["port"], exc)) from None
        except dbload_redis.resp_wire.RedisError as exc:
            raise DbLoadError("dbload: Redis at {}:{}: {}; check user and password".format(
                self.params["host"], self.params["port"], exc)) from None
        return dbload_redis.keyspace_for(facts, self.params["data"], int(self.params["value_size"]),
                                         len(self.params["key_prefix"].encode("utf-8")))

    def prepare(self, _database: str, reuse: bool, size: int) -> Dict[str, Any]:
        self.params["keyspace"] = size
        try:
            facts = dbload_redis.reuse_keys(self.params) if reuse else dbload_redis.prepare_redis(self.ctx, self.params)
        except RuntimeError as exc:
            text = str(exc)
            if not text.startswith("Redis at "):   # say which server, as the other failures do
                text = "Redis at {}:{}: {}".format(self.params["host"], self.params["port"], text)
            raise DbLoadError("dbload: " + text) from None
        info = {k: facts.get(k) for k in ("server", "keys", "fill_s", "maxmemory_policy") if k in facts}
        info.update({k: self.params[k] for k in ("redis_db", "key_prefix", "keyspace", "value_size", "pipeline",
                                                 "get_ratio")})
        return info

    def other_sessions(self) -> Optional[int]:
        """Connections of other clients in the test's Redis database (several client hosts: client 0 deletes the
        keys once they are gone); None when the server cannot say."""
        try:
            return dbload_redis.other_connections(self.params)
        except (OSError, dbload_redis.resp_wire.RedisError):
            return None

    def parallel(self, clients: int) -> int:
        """Processes the load runs for `clients` connections: the built-in generator's workers, or one
        redis-benchmark (a single thread) per command of the mix."""
        return dbload_redis.parallelism(self.params, self.tool, clients)

    def run_step(self, step: int, clients: int, seconds: int, emit_tick: "Callable[[Dict[str, Any]], None]",
                 start_at: Optional[float] = None) -> Dict[str, Any]:
        ticks = []   # type: List[Dict[str, Any]]

        def on_second(second: int, t: float, ops: Dict[str, float], lat_ms: Dict[str, Any], errors: int,
                      retries: int) -> None:
            tick = {"second": second, "t": t, "ops": dict(ops), "lat_ms": lat_ms, "errors": errors,
                    "retries": retries, "engine": self.engine}
            ticks.append(tick)
            emit_tick(tick)

        try:
            out = dbload_redis.run_redis_step(self.ctx, self.params, step, clients, seconds, on_second, start_at)
        except RuntimeError as exc:
            raise DbLoadError("dbload: Redis at {}:{}: {}".format(self.params["host"], self.params["port"], exc)) \
                from None
        self.engine = out.get("engine") or self.engine
        if out.get("warning"):
            self.ctx.warning("step {} ({} clients): {}".format(step, clients, out["warning"]))
        if out.get("unfinished"):
            self.ctx.warning("step {} ({} clients): {} request{} sent at the constant rate had no answer when the "
                             "step ended (the server fell behind; their latency is not in the figures)".format(
                                 step, clients, out["unfinished"], "" if out["unfinished"] == 1 else "s"))
        return step_summary(out, ticks, self.params)
