"""The dbload test's parameters: what each means, its default and range, and the check of a request.

validate() fills in the defaults and refuses what cannot run (ValueError, one line that says what to give);
resolved() adds what they imply (the target's host and port, the scale of data=scale=N).
"""
import contextlib
import math
import os
import re
from typing import Any, Dict, List, Optional  # noqa: F401 - some only in type comments

from . import dbload_redis
from .dbload_pgbench import BUILTIN
from .dbload_sysbench import WORKLOADS

ENGINES = ("postgresql", "mysql", "redis")
TOOLS = ("auto", "pgbench", "sysbench", "redis-benchmark", "memtier", "builtin")
ENGINE_TOOLS = {"postgresql": ("pgbench",), "mysql": ("sysbench",), "redis": ("redis-benchmark", "memtier",
                                                                              "builtin")}
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "redis": 6379}
DEFAULT_USERS = {"postgresql": "postgres", "mysql": "root", "redis": ""}
DEFAULT_WORKLOADS = {"postgresql": "tpcb-like", "mysql": "oltp_read_write", "redis": "getset"}
MAX_CLIENTS = 1024
DEFAULT_CLIENTS = (1, 2, 4, 8, 16)
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
    # pgbench 15+: tries of a transaction that failed on a serialization or deadlock error (1: no retry, 0: until
    # the step ends); each retry is counted in the step's retries
    {"name": "max_tries", "kind": "int", "default": 1, "low": 0, "high": 1000},
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
    {"name": "processes", "kind": "int", "default": 0, "low": 0, "high": MAX_CLIENTS},   # 0 = resp_load.process_count
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
    out["max_tries"] = _int(params, "max_tries", 1, 0, 1000)
    if out["max_tries"] != 1 and engine != "postgresql":
        _fail("max_tries is pgbench's (engine=postgresql): sysbench and the Redis tools do not retry a failed "
              "transaction; leave it out")
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
