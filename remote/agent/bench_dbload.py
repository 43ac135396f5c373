"""The "dbload" test: a database server under a standard load, from this host, clients raised step by step.

PostgreSQL with pgbench (dbload_pgbench), MySQL/MariaDB with sysbench (dbload_sysbench), Redis through
dbload_redis (through dbload_redis_engine). The test makes its own scratch database (or, for Redis, key prefix),
fills it, runs one timed step per client count, and removes what it made on success, failure and
cancel. Every second of every step is a "dbload_tick" event; every step gives ops_per_s (median of the
per-second totals), <op>_p50/p99/p999_ms, errors and retries; the run ends with knee_clients.
Parameters: dbload_params; data size and run length: dbload_sizing.
"""
import os
import re
from typing import Any, Dict, List, Optional  # noqa: F401 - some only in type comments

from . import dbload_stats, dbload_together, tool_cpu
from .dbload_params import KNOWN, METRICS, PARAMS, resolved, validate  # noqa: F401 - the test's interface
from .dbload_pgbench import DbLoadError, PgbenchEngine
from .dbload_redis_engine import RedisEngine
from .dbload_sizing import (  # noqa: F401 - the test's interface (the workbench reads is_loopback)
    expected_seconds,
    is_loopback,
    pg_scale,
    sysbench_table_size,
)
from .dbload_sysbench import TABLES, SysbenchEngine


def describe() -> Dict[str, Any]:
    return {"params": PARAMS, "presets": {}, "jobs": (), "metrics": METRICS}


def _run_tag(ctx: Any) -> str:
    tag = re.sub(r"[^a-z0-9]", "", os.path.basename(ctx.run_dir.rstrip("/")).lower())[-16:]
    return tag or str(os.getpid())


def scratch_database(ctx: Any, params: Dict[str, Any]) -> str:
    return params["database"] or "benchbay_dbload_{}".format(_run_tag(ctx))


def make_engine(ctx: Any, params: Dict[str, Any]) -> Any:
    if params["engine"] == "postgresql":
        return PgbenchEngine(ctx, params)
    if params["engine"] == "mysql":
        return SysbenchEngine(ctx, params)
    return RedisEngine(ctx, params, _run_tag(ctx))


def run(ctx: Any, params: Dict[str, Any]) -> None:
    params = resolved(params)
    engine = make_engine(ctx, params)
    clients = params["clients"]
    size = 0
    if params["engine"] == "postgresql" and not params["reuse_database"]:
        size = pg_scale(params)
    elif params["engine"] == "mysql" and not params["reuse_database"]:
        size = sysbench_table_size(params)
    elif params["engine"] == "redis":
        size = engine.size()
    load = {"phase": "load", "label": "Load the data"}
    if params["engine"] == "redis":   # the Redis side's own phase: "Writing N keys"
        load = {"phase": "fill", "label": "Writing {} keys".format(size)}
    # pgbench -i fills ~2 scale units a second, sysbench prepare ~50,000 rows a second, Redis ~100,000 keys a
    # second, on a modest host
    per_unit = {"postgresql": 0.5, "mysql": TABLES / 50000.0, "redis": 1 / 100000.0}[params["engine"]]
    load["seconds"] = 5.0 + size * per_unit
    ctx.emit("plan", phases=[load] + [
        {"phase": "step{}".format(i + 1), "label": "{} client{}".format(c, "" if c == 1 else "s"),
         "seconds": float(params["step_seconds"])} for i, c in enumerate(clients)])
    follower = params["wait_for_start"] and params["client_index"] > 0
    start_at = 0.0
    if follower:   # client 0 makes and fills the database before the go signal: look it up after
        start_at = dbload_together.ready_and_wait(ctx, params)
    if getattr(engine, "own_phase", False):
        info = engine.prepare("", params["reuse_database"], size)
    else:
        with ctx.phase("load", load["label"]):
            info = engine.prepare(scratch_database(ctx, params), params["reuse_database"], size)
    if params["wait_for_start"] and not follower:
        if not params["reuse_database"]:   # runs before the drop (callbacks run last first)
            ctx.add_cleanup_callback(lambda: dbload_together.wait_for_other_clients(engine, params))
        start_at = dbload_together.ready_and_wait(ctx, params)
    throughputs, p99s = [], []   # type: List[Optional[float]], List[Optional[float]]
    base = {}   # type: Dict[str, Any]
    for index, count in enumerate(clients):
        step = index + 1
        with ctx.phase("step{}".format(step), "{} client{}".format(count, "" if count == 1 else "s")):
            waits = tool_cpu.ReadyWait(enabled=bool(params["wait_for_start"]))   # read for the clients' totals

            def emit_tick(tick: Dict[str, Any], step: int = step, count: int = count,
                          waits: tool_cpu.ReadyWait = waits) -> None:
                waits.sample()   # every second: a thread's figures end with it
                ctx.emit("dbload_tick", step=step, clients=count, second=tick["second"], t=tick["t"],
                         ops=tick["ops"], lat_ms=tick["lat_ms"], errors=tick.get("errors", 0),
                         retries=tick.get("retries", 0), engine=tick.get("engine") or engine.engine)
                ctx.progress("step{}".format(step), min(tick["second"] / float(params["step_seconds"]), 1.0))

            began = dbload_together.wait_until(ctx, params, start_at, index)
            cpu_before = tool_cpu.snapshot()   # the load tool's own CPU, not the machine's
            waits.sample()
            try:
                summary = engine.run_step(step, count, params["step_seconds"], emit_tick)
            except DbLoadError as exc:
                if not throughputs:
                    raise
                # e.g. more clients than the server takes: the steps before stand, and say where it ended
                last = clients[index - 1]
                ctx.warning("{}; the sweep ends at {} client{}".format(exc, last, "" if last == 1 else "s"))
                break
        base = {"step": step, "clients": count, "engine": summary.get("engine") or engine.engine,
                "workload": params["workload"], "rate": params["rate"], "target": params["target"],
                "data": params["data"], "step_seconds": params["step_seconds"]}
        base.update(info)
        base.update(began)
        if params["wait_for_start"]:
            # out of CPU means out of what its processes/threads can use: one redis-benchmark thread on an
            # 8-CPU host is the limit at 1/8 of the host's CPU
            base["tool_cpu_busy"] = tool_cpu.busy(cpu_before, tool_cpu.snapshot(), engine.parallel(count))
            waits.sample()
            # a tool that waited for a CPU while it had work was starved by other work: its limit too
            base["tool_cpu_wait"] = waits.share(engine.parallel(count))
        dbload_stats.emit_step_results(ctx, summary, base)
        throughputs.append(dbload_stats.step_throughput(summary))
        p99s.append(dbload_stats.main_p99(summary))
        found = dbload_stats.knee(throughputs, p99s, params["p99_limit_ms"])
        if found["knee"] is not None and found["rule"].startswith("p99") and not params["wait_for_start"]:
            break   # the latency limit is passed: more clients only make it worse
    found = dbload_stats.knee(throughputs, p99s, params["p99_limit_ms"])
    knee_step = found["knee"]
    value = clients[knee_step - 1] if knee_step else clients[len(throughputs) - 1]
    meta = {k: base.get(k) for k in ("engine", "workload", "rate", "target", "server", "data")}
    meta.update(knee=knee_step, rule=found["rule"], step=knee_step or len(throughputs), clients=value,
                throughputs=throughputs, p99_ms=p99s, steps_run=len(throughputs),
                note="" if knee_step else "no knee up to {} client{}".format(value, "" if value == 1 else "s"))
    ctx.result("dbload", "knee_clients", value, "clients", meta)
