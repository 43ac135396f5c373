"""The "dbload" test: a database server under a standard load, from this host, clients raised step by step.

PostgreSQL with pgbench (dbload_pgbench), MySQL/MariaDB with sysbench (dbload_sysbench), Redis through
dbload_redis (through dbload_redis_engine). The test makes its own scratch database (or, for Redis, key prefix),
fills it, runs one timed step per client count, and removes what it made on success, failure and
cancel. Every second of every step is a "dbload_tick" event; every step gives ops_per_s (median of the
per-second totals), <op>_p50/p99/p999_ms, errors and retries; the run ends with knee_clients.
"""
import contextlib
import math
import os
import re
from typing import Any, Callable, Dict, List, Optional  # noqa: F401 - some only in type comments

from . import dbload_redis, dbload_stats, dbload_together
from .dbload_pgbench import BUILTIN, MB_PER_SCALE, DbLoadError, PgbenchEngine
from .dbload_redis_engine import RedisEngine
from .dbload_sysbench import BYTES_PER_ROW, TABLES, WORKLOADS, SysbenchEngine

ENGINES = ("postgresql", "mysql", "redis")
TOOLS = ("auto", "pgbench", "sysbench", "redis-benchmark", "memtier", "builtin")
ENGINE_TOOLS = {"postgresql": ("pgbench",), "mysql": ("sysbench",), "redis": ("redis-benchmark", "memtier",
                                                                              "builtin")}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "redis": 6379}
DEFAULT_USERS = {"postgresql": "postgres", "mysql": "root", "redis": ""}
DEFAULT_WORKLOADS = {"postgresql": "tpcb-like", "mysql": "oltp_read_write", "redis": "getset"}
MAX_CLIENTS = 1024
DEFAULT_CLIENTS = (1, 2, 4, 8, 16)
FITS_FRACTION = 0.25      # data: fits = a quarter of the target's RAM (room for the server's own memory)
RAM_FACTOR = 2.0          # data: 2xram
MB = 1024 * 1024
REDIS = dbload_redis.DEFAULTS
PARAMS = (
    {"name": "engine", "kind": "choice", "default": "postgresql", "choices": ENGINES},
    {"name": "target", "kind": "text", "default": "127.0.0.1"},   # a server on the host the test runs on
    {"name": "target_host", "kind": "text", "default": ""},   # the inventory host that is the server (workbench)
    {"name": "tool", "kind": "choice", "default": "auto", "choices": TOOLS},
    {"name": "workload", "kind": "text", "default": ""},
    {"name": "data", "kind": "text", "default": "fits"},
    {"name": "target_ram_mb", "kind": "int", "default": 0, "low": 0, "high": 1 << 30, "unit": "MB"},
    {"name": "clients", "kind": "list", "default": list(DEFAULT_CLIENTS), "low": 1, "high": MAX_CLIENTS},
    {"name": "max_clients", "kind": "int", "default": 64, "low": 1, "high": MAX_CLIENTS},
    {"name": "step_seconds", "kind": "int", "default": 10, "low": 2, "high": 3600, "unit": "s"},
    {"name": "rate", "kind": "float", "default": None, "low": 0.0, "high": 1e9, "unit": "ops/s"},
    {"name": "p99_limit_ms", "kind": "float", "default": None, "low": 0.0, "high": 1e7, "unit": "ms"},
    {"name": "user", "kind": "text", "default": ""},
    {"name": "password", "kind": "secret", "default": ""},
    {"name": "database", "kind": "text", "default": ""},
    {"name": "reuse_database", "kind": "bool", "default": False},
    {"name": "redis_db", "kind": "int", "default": REDIS["redis_db"], "low": 0, "high": 65535},
    {"name": "key_prefix", "kind": "text", "default": ""},   # "" = benchbay:<run>: (the run's own keys)
    {"name": "value_size", "kind": "int", "default": REDIS["value_size"], "low": 1, "high": 64 * MB, "unit": "B"},
    {"name": "keyspace", "kind": "int", "default": 0, "low": 0, "high": 1 << 40},   # 0 = from data
    {"name": "pipeline", "kind": "int", "default": REDIS["pipeline"], "low": 1, "high": 10000},
    {"name": "get_ratio", "kind": "float", "default": REDIS["get_ratio"], "low": 0.0, "high": 1.0},
    {"name": "processes", "kind": "int", "default": 0, "low": 0, "high": MAX_CLIENTS},   # 0 = one per CPU
    # several client hosts against one target (app.engine.dbload_multi sets these; dbload_together)
    {"name": "wait_for_start", "kind": "bool", "default": False},
    {"name": "client_index", "kind": "int", "default": 0, "low": 0, "high": 255},
    {"name": "client_name", "kind": "text", "default": "c1"},
    {"name": "group", "kind": "text", "default": "solo"},
    {"name": "step_gap", "kind": "int", "default": 5, "low": 1, "high": 600, "unit": "s"},
    {"name": "start_wait", "kind": "int", "default": 3600, "low": 1, "high": 24 * 3600, "unit": "s"},
)
KNOWN = tuple(p["name"] for p in PARAMS)
METRICS = (("ops_per_s", "ops/s"), ("{op}_p50_ms", "ms"), ("{op}_p99_ms", "ms"), ("{op}_p999_ms", "ms"),
           ("errors", "count"), ("retries", "count"), ("knee_clients", "clients"))
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def describe() -> Dict[str, Any]:
    return {"params": PARAMS, "presets": {}, "jobs": (), "metrics": METRICS}


def _fail(message: str) -> None:
    raise ValueError("dbload: " + message)


def _int(params: Dict[str, Any], name: str, default: Any, low: int, high: int) -> Any:
    value = params.get(name, default)
    if value is None or value == "":
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _fail("{} must be a whole number {}-{}, not {!r}".format(name, low, high, value))
    return value


def _float(params: Dict[str, Any], name: str, low: float, high: float) -> Optional[float]:
    value = params.get(name)
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if isinstance(value, bool) or not math.isfinite(number) or not low < number <= high:
        _fail("{} must be a number above {:g} and at most {:g}, not {!r}".format(name, low, high, value))
    return number


def _clients(value: Any, max_clients: int) -> List[int]:
    if value is None or value == "":
        return [c for c in DEFAULT_CLIENTS if c <= max_clients] or [max_clients]
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        if not all(p.isdigit() for p in parts):
            _fail("clients must be whole numbers separated by commas (e.g. 1,2,4,8), not {!r}".format(value))
        value = [int(p) for p in parts]
    if not isinstance(value, list) or not value or not all(
            isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= max_clients for c in value):
        _fail("clients must be a list of whole numbers 1-{} (max_clients), not {!r}".format(max_clients, value))
    return list(value)


def _target(engine: str, target: Any) -> Dict[str, Any]:
    if target is None or target == "":
        target = "127.0.0.1"
    if not isinstance(target, str) or not target.strip():
        _fail("give target=ADDR:PORT, the database server to load (e.g. target=10.0.0.5:{})".format(
            DEFAULT_PORTS[engine]))
    text = target.strip()
    match = re.match(r"^\[([0-9A-Fa-f:.]+)\](?::(\d+))?$", text) or re.match(r"^([^:\s/]+)(?::(\d+))?$", text)
    if not match:
        _fail("target must be ADDR or ADDR:PORT ([IPv6]:PORT), not {!r}".format(target))
    port = int(match.group(2)) if match.group(2) else DEFAULT_PORTS[engine]
    if not 1 <= port <= 65535:
        _fail("the port in target must be 1-65535, not {}".format(port))
    return {"host": match.group(1), "port": port}


def _data(value: Any) -> Dict[str, Any]:
    text = str(value if value not in (None, "") else "fits").strip().lower()
    if text in ("fits", "2xram"):
        return {"data": text}
    match = re.match(r"^scale=(\d+)$", text)
    if match and int(match.group(1)) >= 1:
        return {"data": text, "scale": int(match.group(1))}
    _fail("data must be fits, 2xram or scale=N (N at least 1), not {!r}".format(value))
    return {}


def _workload(engine: str, value: Any) -> str:
    workload = str(value or DEFAULT_WORKLOADS[engine]).strip()
    if engine == "postgresql":
        if workload in BUILTIN:
            return workload
        if workload.startswith("script:") and os.path.isabs(workload[len("script:"):]):
            return workload
        _fail("workload for pgbench must be tpcb-like, select-only, simple-update or script:/absolute/path.sql, "
              "not {!r}".format(workload))
    if engine == "mysql" and workload not in WORKLOADS:
        _fail("workload for sysbench must be {}, not {!r}".format(", ".join(WORKLOADS), workload))
    if engine == "redis" and workload != "getset":
        _fail("workload for redis must be getset (the mix is get_ratio), not {!r}".format(workload))
    return workload


def _yes(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value or "").strip().lower()
    if text in ("", "no", "false", "0", "off"):
        return False
    if text in ("yes", "true", "1", "on"):
        return True
    _fail("reuse_database must be yes or no, not {!r}".format(value))
    return False


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(params) - set(KNOWN))
    if unknown:
        _fail("unknown parameter(s) {} (known: {})".format(", ".join(unknown), ", ".join(KNOWN)))
    engine = params.get("engine") or "postgresql"
    if engine not in ENGINES:
        _fail("engine must be postgresql, mysql or redis, not {!r}".format(engine))
    tool = params.get("tool") or "auto"
    if tool not in TOOLS:
        _fail("tool must be one of {}, not {!r}".format(", ".join(TOOLS), tool))
    if tool != "auto" and tool not in ENGINE_TOOLS[engine]:
        _fail("tool {} does not load {} (use {})".format(tool, engine, " or ".join(ENGINE_TOOLS[engine])))
    out = {"engine": engine, "tool": tool, "target": str(params.get("target") or "127.0.0.1").strip()}   # type: Dict[str, Any]
    _target(engine, params.get("target"))
    target_host = params.get("target_host") or ""
    if not isinstance(target_host, str) or len(target_host) > 200 or any(c.isspace() for c in target_host):
        _fail("target_host must be the name of a host of the inventory, not {!r}".format(target_host))
    out["target_host"] = target_host
    out["workload"] = _workload(engine, params.get("workload"))
    out["data"] = _data(params.get("data"))["data"]
    out["target_ram_mb"] = _int(params, "target_ram_mb", 0, 0, 1 << 30)
    out["max_clients"] = _int(params, "max_clients", 64, 1, MAX_CLIENTS)
    out["clients"] = _clients(params.get("clients"), out["max_clients"])
    out["step_seconds"] = _int(params, "step_seconds", 10, 2, 3600)
    out["rate"] = _float(params, "rate", 0.0, 1e9)
    out["p99_limit_ms"] = _float(params, "p99_limit_ms", 0.0, 1e7)
    user = params.get("user") or DEFAULT_USERS[engine]
    if not isinstance(user, str) or any(c in user for c in "\n\0\r"):
        _fail("user must be one line of text")
    out["user"] = user
    password = params.get("password") or ""
    if not isinstance(password, str) or any(c in password for c in "\n\0\r"):
        _fail("the password must be one line of text")
    if password:
        out["password"] = password
    database = str(params.get("database") or "")
    if database and not NAME.match(database):
        _fail("database must be a plain name (letters, digits, _; up to 63), not {!r}".format(database))
    out["database"] = database
    out["reuse_database"] = _yes(params.get("reuse_database"))
    out.update(_redis_params(params))
    if out["reuse_database"] and engine == "redis" and not out["key_prefix"]:
        _fail("reuse_database=yes for Redis needs key_prefix=PREFIX, the existing keys to load")
    if out["reuse_database"] and engine != "redis" and not database:
        _fail("reuse_database=yes needs database=NAME, the existing database to load")
    if engine == "redis":
        _check_redis(out)
    # several client hosts against one target (app.engine.dbload_multi sets these; dbload_together)
    together = params.get("wait_for_start", False)
    if not isinstance(together, bool):
        _fail("wait_for_start must be true or false")
    out["wait_for_start"] = together
    out["client_index"] = _int(params, "client_index", 0, 0, 255)
    out["client_name"] = str(params.get("client_name") or "c{}".format(out["client_index"] + 1))[:64]
    out["group"] = str(params.get("group") or "solo")[:32]
    out["step_gap"] = _int(params, "step_gap", 5, 1, 600)
    out["start_wait"] = _int(params, "start_wait", 3600, 1, 24 * 3600)
    return out


def _redis_params(params: Dict[str, Any]) -> Dict[str, Any]:
    out = {"redis_db": _int(params, "redis_db", REDIS["redis_db"], 0, 65535)}   # type: Dict[str, Any]
    prefix = params.get("key_prefix") or ""
    if not isinstance(prefix, str) or len(prefix) > 200 or any(c.isspace() or c in "*?[]\\" or ord(c) < 32
                                                               for c in prefix):
        _fail("key_prefix must be up to 200 characters without spaces or the pattern characters * ? [ ] \\, "
              "not {!r}".format(prefix))
    out["key_prefix"] = prefix
    out["value_size"] = _int(params, "value_size", REDIS["value_size"], 1, 64 * MB)
    out["keyspace"] = _int(params, "keyspace", 0, 0, 1 << 40)
    out["pipeline"] = _int(params, "pipeline", REDIS["pipeline"], 1, 10000)
    out["processes"] = _int(params, "processes", 0, 0, MAX_CLIENTS)
    ratio = params.get("get_ratio", REDIS["get_ratio"])
    if isinstance(ratio, str):
        with contextlib.suppress(ValueError):
            ratio = float(ratio)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0.0 <= float(ratio) <= 1.0:
        _fail("get_ratio must be a number 0-1 (the share of gets), not {!r}".format(ratio))
    out["get_ratio"] = float(ratio)
    return out


def _check_redis(out: Dict[str, Any]) -> None:
    """What can be refused before the run: Redis keeps every key in RAM, redis-benchmark takes a password only on
    its command line and has no constant-rate mode."""
    if out["data"] == "2xram":
        _fail("data=2xram does not apply to Redis (it holds every key in memory: the server would evict keys or "
              "be killed); use data=fits or scale=N (N keys)")
    if out["tool"] == "redis-benchmark":
        if out.get("password"):
            _fail(dbload_redis.redis_benchmark_run.PASSWORD_REFUSAL)
        if out["rate"]:
            _fail(dbload_redis.RATE_REFUSAL)


def resolved(params: Dict[str, Any]) -> Dict[str, Any]:
    """The validated parameters with what they imply: host and port of the target, the scale of data=scale=N."""
    out = dict(params)
    out.update(_target(params["engine"], params["target"]))
    out.update(_data(params["data"]))
    return out


def expected_seconds(params: Dict[str, Any]) -> float:
    steps = len(params["clients"]) * (params["step_seconds"] + 15.0 + params["step_gap"])
    if params["wait_for_start"]:
        steps += params["start_wait"]
    full = resolved(params)
    if params["reuse_database"] or params["engine"] == "redis":
        data_mb = 0.0
    elif full.get("scale"):
        data_mb = full["scale"] * (MB_PER_SCALE if params["engine"] == "postgresql" else TABLES * BYTES_PER_ROW / MB)
    else:
        try:
            data_mb = data_bytes(full) / MB
        except (DbLoadError, OSError):
            data_mb = 64 * 1024.0   # the target's RAM is asked for when the run starts: room for a large one
    if params["engine"] == "redis":   # data=fits: up to dbload_redis.MAX_FITS_KEYS, written ~50,000 a second
        steps += (params["keyspace"] or full.get("scale") or dbload_redis.MAX_FITS_KEYS) / 50000.0
    return 120.0 + steps + data_mb / 5.0   # filling: a slow disk or link does 5 MB/s


def _run_tag(ctx: Any) -> str:
    tag = re.sub(r"[^a-z0-9]", "", os.path.basename(ctx.run_dir.rstrip("/")).lower())[-16:]
    return tag or str(os.getpid())


def scratch_database(ctx: Any, params: Dict[str, Any]) -> str:
    return params["database"] or "benchbay_dbload_{}".format(_run_tag(ctx))


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def target_ram_mb(params: Dict[str, Any]) -> int:
    """The target's RAM: given, or this host's when the target is on this host."""
    if params["target_ram_mb"]:
        return params["target_ram_mb"]
    if is_loopback(params["host"]):
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    raise DbLoadError("dbload: data={} needs the target's RAM: give target_ram_mb=N (MB), or data=scale=N"
                      .format(params["data"]))


def data_bytes(params: Dict[str, Any]) -> float:
    ram = target_ram_mb(params) * float(MB)
    return ram * (FITS_FRACTION if params["data"] == "fits" else RAM_FACTOR)


def pg_scale(params: Dict[str, Any]) -> int:
    if params.get("scale"):
        return params["scale"]
    return max(1, int(data_bytes(params) / (MB_PER_SCALE * MB)))


def sysbench_table_size(params: Dict[str, Any]) -> int:
    if params.get("scale"):
        return params["scale"]
    return max(100, int(data_bytes(params) / (TABLES * BYTES_PER_ROW)))


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
            def emit_tick(tick: Dict[str, Any], step: int = step, count: int = count) -> None:
                ctx.emit("dbload_tick", step=step, clients=count, second=tick["second"], t=tick["t"],
                         ops=tick["ops"], lat_ms=tick["lat_ms"], errors=tick.get("errors", 0),
                         retries=tick.get("retries", 0), engine=tick.get("engine") or engine.engine)
                ctx.progress("step{}".format(step), min(tick["second"] / float(params["step_seconds"]), 1.0))

            began = dbload_together.wait_until(ctx, params, start_at, index)
            cpu_before = dbload_together.host_cpu()
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
            base["host_cpu_busy"] = dbload_together.cpu_busy(cpu_before, dbload_together.host_cpu())
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
