"""The Redis side of the "dbload" test: tool choice, fill, one step of load, cleanup of the key prefix.

The test's own keys are prefix + 12 digits in database redis_db; the fill writes them all before the first
step, and a cleanup registered before the first key is written deletes every key with the prefix (SCAN +
UNLINK) when the run ends, fails or is cancelled. Engines: redis-benchmark (when installed and no password
is needed) or the built-in RESP generator (resp_load.py).
"""
import binascii
import os
import platform
import time
from typing import Any, Callable, Dict, Optional, Tuple, Union  # noqa: F401 - some only in type comments

from . import redis_benchmark_run, resp_load, resp_wire

ENGINE_BUILTIN = "builtin RESP"
DEFAULTS = {"redis_db": 15, "value_size": 100, "keyspace": 100000, "pipeline": 1, "get_ratio": 0.9}
FITS_SHARE = 0.25          # data=fits: the keyspace takes at most this share of the server's free memory
KEY_OVERHEAD = 90          # bytes Redis spends per small string key beyond key and value (dict entry, object)
MAX_FITS_KEYS = 10000000
RATE_REFUSAL = "redis-benchmark has no constant-rate mode: use tool=builtin (or auto) with rate"


def config(params: Dict[str, Any], clients: int = 1, seconds: int = 1) -> Dict[str, Any]:
    """What resp_load and redis_benchmark_run take, from the test's parameters."""
    host, port = resp_wire.parse_target(str(params.get("target") or ""), 6379)
    prefix = params.get("key_prefix") or ""
    if not prefix:
        raise ValueError("dbload: key_prefix is needed (the test's keys are found and deleted by it)")
    rate = params.get("rate") or 0
    return {
        "host": host, "port": port, "password": params.get("password") or "", "user": params.get("user") or "",
        "db": int(_param(params, "redis_db")), "prefix": prefix.encode("utf-8") if isinstance(prefix, str) else prefix,
        "keyspace": int(_param(params, "keyspace")), "value_size": int(_param(params, "value_size")),
        "get_ratio": float(_param(params, "get_ratio")), "pipeline": int(_param(params, "pipeline")),
        "rate": float(rate), "clients": int(clients), "seconds": int(seconds),
        "processes": int(params.get("processes") or 0),
    }


def _param(params: Dict[str, Any], name: str) -> Any:
    value = params.get(name)
    return DEFAULTS[name] if value is None or value == "" else value


def default_prefix(run_id: str = "") -> str:
    return "benchbay:{}:".format(run_id or binascii.hexlify(os.urandom(4)).decode())


def redis_tool(params: Dict[str, Any]) -> Union[Tuple[str, str], str]:
    """(name, version) of the engine this run uses, or one line saying what to install / why not.

    auto: redis-benchmark when installed, no password is needed (it takes one only on its command line) and
    no constant rate is asked for (it has none), else the built-in generator."""
    tool = params.get("tool") or "auto"
    if tool == "builtin":
        return ENGINE_BUILTIN, builtin_version()
    if tool == "memtier":
        # memtier_benchmark is not driven yet: say so rather than run something else under its name
        if redis_benchmark_run.version(redis_benchmark_run.MEMTIER) is None:
            return redis_benchmark_run.MEMTIER_HINT
        return "memtier_benchmark is installed but Benchbay does not drive it yet: use tool=redis-benchmark or " \
               "tool=builtin"
    if tool not in ("auto", "redis-benchmark"):
        return "dbload: tool {} does not load Redis (auto, redis-benchmark, memtier or builtin)".format(tool)
    found = redis_benchmark_run.version()
    if tool == "redis-benchmark":
        if found is None:
            return redis_benchmark_run.INSTALL_HINT
        if params.get("password"):
            return redis_benchmark_run.PASSWORD_REFUSAL
        if params.get("rate"):
            return RATE_REFUSAL
        return redis_benchmark_run.BINARY, found
    if found is None or params.get("password") or params.get("rate"):
        return ENGINE_BUILTIN, builtin_version()
    return redis_benchmark_run.BINARY, found


def builtin_version() -> str:
    return "{} {}".format(platform.python_implementation(), platform.python_version())


def engine_name(tool: Tuple[str, str]) -> str:
    """"redis-benchmark 7.0.15" or "builtin RESP" (the contract's engine label)."""
    return tool[0] if tool[0] == ENGINE_BUILTIN else "{} {}".format(*tool)


def server_facts(params: Dict[str, Any]) -> Dict[str, Any]:
    """The server's version and memory, for the run's record and data=fits."""
    cfg = config(params)
    with resp_load._client(cfg) as client:
        info = client.info()
    facts = {"server": "Redis {}".format(info.get("redis_version", "?"))}  # type: Dict[str, Any]
    for key in ("used_memory", "maxmemory", "total_system_memory"):
        if info.get(key, "").isdigit():
            facts[key] = int(info[key])
    facts["maxmemory_policy"] = info.get("maxmemory_policy", "")
    return facts


def keyspace_for(facts: Dict[str, Any], data: str, value_size: int, prefix_len: int) -> int:
    """Keys for data=fits (a quarter of the memory Redis may still use) or scale=N; 2xram is refused: Redis
    keeps every key in memory, so twice its RAM means evictions or an out-of-memory kill, not a disk test."""
    if data.startswith("scale="):
        return int(data.split("=", 1)[1])
    if data == "2xram":
        raise ValueError("dbload: data=2xram does not apply to Redis (it holds every key in memory: the server "
                         "would evict keys or be killed); use data=fits or scale=N")
    limit = facts.get("maxmemory") or facts.get("total_system_memory") or 0
    free = max(limit - facts.get("used_memory", 0), 0)
    per_key = value_size + prefix_len + 12 + KEY_OVERHEAD
    return max(1000, min(MAX_FITS_KEYS, int(free * FITS_SHARE / per_key))) if free else DEFAULTS["keyspace"]


def _facts_and_keys(params: Dict[str, Any], cfg: Dict[str, Any]) -> Tuple[Dict[str, Any], int]:
    """The server's facts and how many keys the prefix has there; a server that does not answer or refuses
    the login is one RuntimeError with its reason."""
    try:
        return server_facts(params), resp_load.count_keys(cfg)
    except OSError as exc:
        raise RuntimeError("Redis at {}:{} does not answer: {}".format(cfg["host"], cfg["port"], exc)) from None
    except resp_wire.RedisError as exc:
        raise RuntimeError(str(exc)) from None


def prepare_redis(ctx: Any, params: Dict[str, Any]) -> Dict[str, Any]:
    """Checks the server and the prefix, registers the cleanup, writes the keyspace. Returns what it did.

    Refuses a prefix that already has keys (they are not the test's to overwrite or delete)."""
    cfg = config(params)
    facts, existing = _facts_and_keys(params, cfg)
    if existing:
        shown = cfg["prefix"].decode("utf-8", "replace")  # novermin: the prefix is bytes
        raise RuntimeError("database {} of {}:{} already has {} key(s) starting with {!r}: they are not this "
                           "test's; choose another key_prefix or delete them".format(
                               cfg["db"], cfg["host"], cfg["port"], existing, shown))

    def delete_keys() -> None:
        try:
            resp_load.cleanup(cfg)
        except (OSError, resp_wire.RedisError) as exc:
            raise RuntimeError(cleanup_hint(cfg, exc)) from None

    ctx.add_cleanup_callback(delete_keys)   # before the first key: a cancel during the fill leaves none
    started = time.monotonic()
    with ctx.phase("fill", "Writing {} keys".format(cfg["keyspace"])):
        keys = resp_load.fill(cfg, progress=lambda f: ctx.progress("fill", f), should_stop=lambda: ctx.stopping)
        ctx.check()
    facts.update({"keys": keys, "fill_s": round(time.monotonic() - started, 3)})
    return facts


def reuse_keys(params: Dict[str, Any]) -> Dict[str, Any]:
    """The keys another run wrote under key_prefix, loaded as they are (the other client hosts of a load from
    several hosts: client 0 wrote them and deletes them); the keyspace is what is there."""
    cfg = config(params)
    facts, keys = _facts_and_keys(params, cfg)
    if not keys:
        shown = cfg["prefix"].decode("utf-8", "replace")  # novermin: the prefix is bytes
        raise RuntimeError("database {} of {}:{} has no key starting with {!r} to load; leave out reuse_database to "
                           "let the test write its own".format(cfg["db"], cfg["host"], cfg["port"], shown))
    params["keyspace"] = keys
    facts.update({"keys": keys, "fill_s": 0.0})
    return facts


def other_connections(params: Dict[str, Any]) -> int:
    """Connections to the test's database index other than this one (CLIENT LIST's db= field)."""
    cfg = config(params)
    with resp_load._client(cfg) as client:
        own = client.call("CLIENT", "ID")
        listing = client.call("CLIENT", "LIST")
    if isinstance(listing, bytes):
        listing = listing.decode("utf-8", "replace")
    count = 0
    for line in str(listing).splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if fields.get("db") == str(cfg["db"]) and fields.get("id") != str(own):
            count += 1
    return count


def cleanup_hint(cfg: Dict[str, Any], exc: BaseException) -> str:
    """What is left and how to remove it, when the keys could not be deleted (the server went away)."""
    prefix = cfg["prefix"].decode("utf-8", "replace")  # novermin: bytes
    return ("the test's keys (prefix {p!r}, database {db} of {h}:{port}) could not be deleted: {e}; delete them "
            "with: redis-cli -h {h} -p {port} -n {db} --scan --pattern '{p}*' | xargs redis-cli -h {h} -p {port} "
            "-n {db} unlink").format(p=prefix, db=cfg["db"], h=cfg["host"], port=cfg["port"], e=exc)


def parallelism(params: Dict[str, Any], tool: Any, clients: int) -> int:
    """How many CPUs the step's load can keep busy at most (the processes run_redis_step starts)."""
    cfg = config(params, clients)
    if tool[0] == ENGINE_BUILTIN:
        return resp_load.process_count(clients, cfg["processes"], cfg["pipeline"], resp_load.is_local(str(cfg["host"])))
    return len(redis_benchmark_run.split_clients(clients, cfg["get_ratio"]))


def run_redis_step(ctx: Any, params: Dict[str, Any], step: int, clients: int, seconds: int,
                   emit_tick: Callable[..., None], start_at: Optional[float] = None) -> Dict[str, Any]:
    """One step of `seconds` with `clients` connections; emit_tick(second, t, ops, lat_ms, errors, retries) once
    per second. Returns engine, per_second, per_second_by_op, p50_ms/p99_ms/p999_ms per op, errors, retries,
    tool_total (None for the built-in generator) and what else the engine said. start_at (time.time() scale,
    optional): the common start of several client hosts; the built-in generator's first second begins then,
    redis-benchmark's measured run starts then (after its calibration)."""
    tool = redis_tool(params)
    if isinstance(tool, str):
        raise RuntimeError(tool)
    cfg = config(params, clients, seconds)
    cfg["start_at"] = start_at
    should_stop = lambda: ctx.stopping  # noqa: E731
    if tool[0] == ENGINE_BUILTIN:
        try:
            out = resp_load.run_load(cfg, emit_tick, should_stop)
        except resp_load.LoadError as exc:
            ctx.check()   # a stop ends the step as a cancel, not as an error
            raise RuntimeError("step {} ({} clients): {}".format(step, clients, exc)) from None
        out["tool_total"] = None
    else:
        try:
            out = redis_benchmark_run.run_step(cfg, clients, seconds, emit_tick, ctx.popen, should_stop)
        except redis_benchmark_run.ToolError as exc:
            ctx.check()
            raise RuntimeError("step {} ({} clients): {}".format(step, clients, exc)) from None
    out["engine"] = engine_name(tool)
    out["engine_version"] = tool[1]
    return out
