"""The "dns" test: the same query list sent to each resolver, as a stub resolver would, then the tail named.

From the host, over UDP (TCP when an answer is truncated), with a window of queries in flight and an
optional rate. The stub's schedule is explicit (timeouts "1,2": wait 1 s, send again, wait 2 s, then a
timeout). Passes: cold (the first: the resolver fills its cache) then warm (the same list again).
Order: sequential (each resolver's passes in turn) or interleaved (all resolvers at once, each with its
own window). mode=max: maximum throughput for `duration` seconds, the list looped, no resend: dnsperf
where it is installed (it says "dnsperf 2.x" beside the figures), else the built-in engine with a wider
window (and says so). stamps: an answer is timed when it is read (as dnsperf does), or with stamps=kernel at
the kernel's receive time (replays only); each result's metadata says which.

Live: a "dns_tick" event per resolver per second. Results per resolver and pass (metadata: resolver,
pass, engine, queries, source): answered, noerror, nxdomain, servfail, refused, other_rcode, timeouts,
retried, via_tcp, p50_ms/p90_ms/p99_ms/max_ms (answered only; p50_ms carries the CDF), total_s, qps,
slowest (the names in its metadata).
"""
import os
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple  # noqa: F401 - some only in type comments

from . import dns_dnsperf, dns_fanout, dns_queries, dns_replay, dns_stats

TEST = "dns"
PASSES = ("cold,warm", "cold", "warm")
ORDERS = ("sequential", "interleaved")
MODES = ("replay", "max")
# when an answer counts as arrived: when the agent reads it (as dnsperf and a stub library time it: the host's
# own delay in waking up to read it is in the latency), or the kernel's receive time (Linux; the resolver's and
# the network's time alone). Max mode always reads: the kernel's stamp costs CPU that sets the rate there.
STAMPS = ("read", "kernel")
SYSTEM = "system"           # the nameservers of the host's /etc/resolv.conf, read when the run starts
RESOLV_CONF = "/etc/resolv.conf"
UPLOAD_PREFIX = "upload:"   # a query list the workbench put into the run directory
MAX_WINDOW = 10000
MAX_QUERIES = 10000000
MAX_RESOLVERS = 32
MAX_WINDOW_MAX_MODE = 100   # the least window in max mode, for both engines (dnsperf's default -q)
PARAMS = (
    {"name": "resolvers", "kind": "text", "default": SYSTEM},
    {"name": "queries", "kind": "text", "default": "builtin"},
    {"name": "query_format", "kind": "choice", "default": "auto", "choices": dns_queries.FORMATS},
    {"name": "passes", "kind": "choice", "default": "cold,warm", "choices": PASSES},
    {"name": "order", "kind": "choice", "default": "sequential", "choices": ORDERS},
    {"name": "in_flight", "kind": "int", "default": 10, "low": 1, "high": MAX_WINDOW},
    {"name": "rate", "kind": "float", "default": 0.0, "low": 0.0, "high": 1e7, "unit": "queries/s"},
    {"name": "timeouts", "kind": "text", "default": "1,2"},
    {"name": "tcp_fallback", "kind": "bool", "default": True},
    {"name": "stamps", "kind": "choice", "default": "read", "choices": STAMPS},
    {"name": "mode", "kind": "choice", "default": "replay", "choices": MODES},
    {"name": "duration", "kind": "float", "default": 10.0, "low": 1.0, "high": 3600.0, "unit": "s"},
    {"name": "limit", "kind": "int", "default": 0, "low": 0, "high": MAX_QUERIES},
    {"name": "edns", "kind": "int", "default": 0, "low": 0, "high": 65535, "unit": "B"},
)
DEFAULTS = {param["name"]: param["default"] for param in PARAMS}
METRICS = (("answered", "queries"), ("noerror", "queries"), ("nxdomain", "queries"), ("servfail", "queries"),
           ("refused", "queries"), ("other_rcode", "queries"), ("timeouts", "queries"), ("retried", "queries"),
           ("via_tcp", "queries"), ("p50_ms", "ms"), ("p90_ms", "ms"), ("p99_ms", "ms"), ("max_ms", "ms"),
           ("total_s", "s"), ("qps", "queries/s"), ("slowest", "names"))
GUESS_QPS = 200.0   # queries a second for the first time-left guess of a replay (the workbench refines it)


def describe() -> Dict[str, Any]:
    return {"params": PARAMS, "presets": {}, "jobs": (), "metrics": METRICS}


def _yes(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "true", "on", "1", "no", "false", "off", "0"):
        return value.strip().lower() in ("yes", "true", "on", "1")
    raise ValueError("dns: {} must be yes or no, not {!r}".format(name, value))


def _number(value: Any, name: str, low: float, high: float, whole: bool = False) -> Any:
    ok = isinstance(value, int) if whole else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not low <= value <= high:
        raise ValueError("dns: {} must be a {} {:g}-{:g}, not {!r}".format(
            name, "whole number" if whole else "number", low, high, value))
    return value


def parse_timeouts(value: Any) -> Tuple[float, ...]:
    """ "1,2" / 1 / [1, 2] -> (1.0, 2.0): the waits of the stub, each try after the one before timed out."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        parts = [value]   # type: List[Any]
    elif isinstance(value, (list, tuple)):
        parts = list(value)
    elif isinstance(value, str):
        parts = [part for part in value.replace(" ", "").split(",") if part]
    else:
        parts = []
    try:
        waits = tuple(float(part) for part in parts)
    except (TypeError, ValueError):
        waits = ()
    if not waits or len(waits) > 10 or any(not 0.01 <= w <= 120 for w in waits):
        raise ValueError("dns: timeouts must be the stub's waits in seconds, e.g. \"1,2\" (wait 1 s, send again, "
                         "wait 2 s, then a timeout), each 0.01-120, at most 10; not {!r}".format(value))
    return waits


def system_resolvers(path: str = RESOLV_CONF) -> List[Tuple[str, int]]:
    """The host's nameservers ("nameserver ADDR" lines of resolv.conf), in its order."""
    out = []  # type: List[Tuple[str, int]]
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()
    except OSError:
        return out
    for line in lines:
        words = line.split()
        if len(words) >= 2 and words[0] == "nameserver":
            try:
                resolver = dns_replay.parse_resolver(words[1].split("%")[0])
            except ValueError:
                continue
            if resolver not in out:
                out.append(resolver)
    return out


def parse_resolvers(value: Any, system: Optional[List[Tuple[str, int]]] = None) -> List[Tuple[str, int]]:
    """ "10.0.0.2,127.0.0.53:53" -> [(address, port)]; "system" stands for the host's resolvers (`system`: those,
    read on the host; left out when not given, as on the workbench)."""
    texts = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    out = []  # type: List[Tuple[str, int]]
    for text in (str(t).strip() for t in texts):
        if text == SYSTEM:
            out.extend(r for r in (system if system is not None else [(SYSTEM, 0)]) if r not in out)
        elif text:
            out.append(dns_replay.parse_resolver(text))
    if not out:
        raise ValueError("dns: give the resolvers to compare, e.g. resolvers=10.0.0.2,127.0.0.53:53")
    if len(out) > MAX_RESOLVERS or len(set(out)) != len(out):
        raise ValueError("dns: resolvers must be different addresses, at most {}".format(MAX_RESOLVERS))
    return out


def validate(params: Dict[str, Any]) -> Dict[str, Any]:
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise ValueError("dns: unknown parameter(s) {} (known: {})".format(", ".join(unknown),
                                                                           ", ".join(sorted(DEFAULTS))))
    merged = dict(DEFAULTS)
    merged.update({k: v for k, v in params.items() if v is not None})
    try:
        resolvers = parse_resolvers(merged["resolvers"])
    except ValueError as exc:
        raise ValueError(str(exc) if str(exc).startswith("dns:") else "dns: " + str(exc)) from None
    queries = merged["queries"]
    if not isinstance(queries, str) or not queries.strip():
        raise ValueError("dns: queries must be builtin or the path of a query list on the host")
    queries = queries.strip()
    if queries.startswith(UPLOAD_PREFIX):
        name = queries[len(UPLOAD_PREFIX):]
        if not name or "/" in name or name.startswith("."):
            raise ValueError("dns: queries {!r}: an uploaded list is a plain file name".format(queries))
    elif queries != "builtin" and not os.path.isabs(queries):
        raise ValueError("dns: queries must be builtin or an absolute path, not {!r}".format(queries))
    out = {"resolvers": ",".join(SYSTEM if r == (SYSTEM, 0) else dns_replay.resolver_text(*r) for r in resolvers),
           "queries": queries}  # type: Dict[str, Any]
    for name, choices in (("query_format", dns_queries.FORMATS), ("passes", PASSES), ("order", ORDERS),
                          ("mode", MODES), ("stamps", STAMPS)):
        value = str(merged[name]).strip().replace(" ", "") if merged[name] is not None else ""
        if name == "passes" and value == "warm,cold":
            value = "cold,warm"
        if value not in choices:
            raise ValueError("dns: {} must be one of {}, not {!r}".format(name, " | ".join(choices), merged[name]))
        out[name] = value
    out["in_flight"] = _number(merged["in_flight"], "in_flight", 1, MAX_WINDOW, True)
    out["rate"] = float(_number(merged["rate"], "rate", 0, 1e7))
    out["timeouts"] = ",".join("{:g}".format(w) for w in parse_timeouts(merged["timeouts"]))
    out["tcp_fallback"] = _yes(merged["tcp_fallback"], "tcp_fallback")
    if out["mode"] == "max" and out["stamps"] == "kernel":
        raise ValueError("dns: mode=max times answers when they are read, as dnsperf does; stamps=kernel is for "
                         "replays (leave stamps out, or set stamps=read)")
    out["duration"] = float(_number(merged["duration"], "duration", 1, 3600))
    out["limit"] = _number(merged["limit"], "limit", 0, MAX_QUERIES, True)
    edns = _number(merged["edns"], "edns", 0, 65535, True)
    if edns and edns < 512:
        raise ValueError("dns: edns is the UDP size to announce, 512-65535 (0: no EDNS0), not {}".format(edns))
    out["edns"] = edns
    return out


def expected_seconds(params: Dict[str, Any]) -> float:
    resolvers = len(parse_resolvers(params["resolvers"]))
    if params["mode"] == "max":
        return 60.0 + resolvers * (params["duration"] + sum(parse_timeouts(params["timeouts"])) + 10)
    count = params["limit"] or (len(dns_queries.builtin()) if params["queries"] == "builtin" else 20000)
    passes = len(params["passes"].split(","))
    per_query = 1.0 / max(1.0, min(params["rate"] or GUESS_QPS, GUESS_QPS))
    worst_wait = sum(parse_timeouts(params["timeouts"]))
    lanes = 1 if params["order"] == "interleaved" else resolvers
    return 60.0 + passes * lanes * (count * per_query + 2 * worst_wait)


def _query_path(ctx: Any, queries: str) -> Tuple[str, str]:
    """The list's path on the host, and how the record names it."""
    if queries.startswith(UPLOAD_PREFIX):
        name = queries[len(UPLOAD_PREFIX):]
        return os.path.join(ctx.run_dir, name), "uploaded " + name
    return queries, queries


def load_queries(ctx: Any, params: Dict[str, Any]) -> dns_queries.QueryList:
    if params["queries"] == "builtin":
        return dns_queries.load("builtin", limit=params["limit"] or None)
    path, label = _query_path(ctx, params["queries"])
    return dns_queries.load(path, params["query_format"], params["limit"] or None, label)


def run(ctx: Any, params: Dict[str, Any]) -> None:
    system = system_resolvers()
    if SYSTEM in params["resolvers"].split(",") and not system:
        raise ValueError("dns: resolvers=system, but {} names no nameserver on this host: give the resolvers, "
                         "e.g. resolvers=10.0.0.2,127.0.0.53".format(RESOLV_CONF))
    resolvers = parse_resolvers(params["resolvers"], system)
    # every tick names all the run's resolvers: the live view colours each by its name among all of them
    params = dict(params, resolver_names=[dns_replay.resolver_text(*r) for r in resolvers])
    listed = load_queries(ctx, params)
    prepared = dns_replay.Prepared(listed.queries, params["edns"] or None)
    if prepared.skipped:
        ctx.warning("dns: {} queries skipped: {}".format(len(prepared.skipped), prepared.skipped[0]))
    if not len(prepared):
        raise ValueError("dns: no query left to send from {}".format(listed.source))
    base = {"queries": len(prepared), "source": listed.source, "order": params["order"],
            "in_flight": params["in_flight"], "rate": params["rate"] or None, "timeouts": params["timeouts"],
            "tcp_fallback": params["tcp_fallback"], "edns": params["edns"] or None,
            "mode": params["mode"], "stamps": "read"}   # type: Dict[str, Any]
    if params["mode"] == "max":
        return _max(ctx, params, resolvers, listed, prepared, base)
    passes = params["passes"].split(",")
    steps = ([(p, [r]) for r in resolvers for p in passes] if params["order"] == "sequential"
             else [(p, resolvers) for p in passes])
    guess = len(prepared) / (min(params["rate"] or GUESS_QPS, GUESS_QPS) or GUESS_QPS) + 1.0
    ctx.emit("plan", phases=[{"phase": _phase_id(p, group), "label": _phase_label(p, group), "seconds": guess}
                             for p, group in steps])
    for pass_name, group in steps:
        with ctx.phase(_phase_id(pass_name, group), _phase_label(pass_name, group)):
            _replay_pass(ctx, params, group, prepared, pass_name, dict(base, engine="builtin"),
                         parse_timeouts(params["timeouts"]), params["in_flight"])


def _phase_id(pass_name: str, group: Sequence[Tuple[str, int]]) -> str:
    if len(group) > 1:
        return pass_name
    return "{}_{}".format(pass_name, dns_replay.resolver_text(*group[0]))


def _phase_label(pass_name: str, group: Sequence[Tuple[str, int]]) -> str:
    who = "all resolvers" if len(group) > 1 else dns_replay.resolver_text(*group[0])
    return "{} pass, {}".format(pass_name.capitalize(), who)


def _replay_pass(ctx: Any, params: Dict[str, Any], group: Sequence[Tuple[str, int]], prepared: Any,
                 pass_name: str, meta: Dict[str, Any], timeouts: Tuple[float, ...], window: int,
                 total: Optional[int] = None, seconds: Optional[float] = None) -> None:
    wall0, mono0 = time.time(), time.monotonic()
    phase = _phase_id(pass_name, group)
    expected = (total or len(prepared)) * len(group)

    lanes_seen = {}  # type: Dict[str, Any]

    def tick(lane: Any, second: int, latencies: List[float], timeouts_now: int) -> None:
        lanes_seen[lane.label] = lane
        ctx.emit("dns_tick", resolver=lane.label, second=second, t=round(wall0 + lane.start - mono0 + second + 1, 3),
                 answered=len(latencies), timeouts=timeouts_now, qps=round(len(latencies) / dns_replay.TICK_S, 1),
                 lat_ms=dns_stats.tick_percentiles(latencies), resolvers=params["resolver_names"],
                 **{"pass": pass_name})
        if seconds:
            ctx.progress(phase, min(1.0, (second + 1) / seconds))
        else:
            done = sum(seen.done for seen in lanes_seen.values())
            ctx.progress(phase, done / expected if expected else 1.0)

    kernel = params.get("stamps") == "kernel"     # never in max mode (validate)
    lanes = dns_replay.replay(group, prepared, window=window, rate=params["rate"] or None, timeouts=timeouts,
                              tcp_fallback=params["tcp_fallback"], total=total, seconds=seconds,
                              on_tick=tick, should_stop=ctx.check, kernel_stamps=kernel)
    for lane in lanes:
        if kernel and not lane.kernel_stamps:
            ctx.warning("dns: this host's kernel gives no receive times (stamps=kernel needs Linux): {}'s answers "
                        "were timed when read".format(lane.label))
        if lane.icmp_errors:
            ctx.warning("dns: {} said its port is closed ({} ICMP errors): is a resolver listening there?".format(
                lane.label, lane.icmp_errors))
        figures = dns_stats.summarise(lane.columns(), max(lane.end - lane.start, 1e-6))
        dns_stats.emit(ctx, figures, dict(meta, resolver=lane.label, queries=lane.sent, stray=lane.stray,
                                          stamps="kernel" if lane.kernel_stamps else "read", **{"pass": pass_name}))


def _max(ctx: Any, params: Dict[str, Any], resolvers: Sequence[Tuple[str, int]], listed: Any, prepared: Any,
         base: Dict[str, Any]) -> None:
    """Maximum throughput for `duration` s per resolver: dnsperf where installed, else the built-in engine."""
    seconds = params["duration"]
    wait = sum(parse_timeouts(params["timeouts"]))
    path = dns_dnsperf.find()
    engine = "builtin"
    if path:
        engine = "dnsperf " + (dns_dnsperf.version(path) or "2.x")
    else:
        ctx.warning("dns: dnsperf not found: mode max uses the built-in engine ({} queries in flight{}, no "
                    "resend); {}".format(max(params["in_flight"], MAX_WINDOW_MAX_MODE),
                                         "" if params["rate"] else " over {} sending processes".format(
                                             dns_fanout.default_processes()), dns_dnsperf.INSTALL_HINT))
    ctx.emit("plan", phases=[{"phase": _phase_id("max", [r]), "label": _phase_label("max", [r]),
                              "seconds": seconds + 1.0} for r in resolvers])
    # at least dnsperf's own default window, for both engines: the replay's 10 would measure the round trip
    meta = dict(base, engine=engine, duration=seconds, in_flight=max(params["in_flight"], MAX_WINDOW_MAX_MODE))
    for resolver in resolvers:
        with ctx.phase(_phase_id("max", [resolver]), _phase_label("max", [resolver])):
            if path:
                _dnsperf_pass(ctx, path, params, resolver, listed, meta, wait)
            elif params["rate"]:    # a rate one core keeps: one sender
                window = max(params["in_flight"], MAX_WINDOW_MAX_MODE)
                _replay_pass(ctx, params, [resolver], prepared, "max", dict(meta, in_flight=window), (wait,),
                             window, total=int(seconds * 1000000), seconds=seconds)
            else:
                _builtin_max(ctx, params, resolver, prepared, meta, wait)


def _builtin_max(ctx: Any, params: Dict[str, Any], resolver: Tuple[str, int], prepared: Any,
                 meta: Dict[str, Any], wait: float) -> None:
    """The built-in engine flat out: the window shared by a sender process per core (dns_fanout)."""
    window = max(params["in_flight"], MAX_WINDOW_MAX_MODE)
    processes = dns_fanout.default_processes()
    label = dns_replay.resolver_text(*resolver)
    phase = _phase_id("max", [resolver])
    wall0 = time.time()

    def tick(second: int, latencies: List[float], timeouts: int) -> None:
        ctx.emit("dns_tick", resolver=label, second=second, t=round(wall0 + second + 1, 3),
                 answered=len(latencies), timeouts=timeouts, qps=round(len(latencies) / dns_replay.TICK_S, 1),
                 lat_ms=dns_stats.tick_percentiles(latencies), resolvers=params["resolver_names"],
                 **{"pass": "max"})
        ctx.progress(phase, min(1.0, (second + 1) / params["duration"]))

    columns, elapsed, stray = dns_fanout.replay_max(resolver, prepared, window, wait, params["duration"], processes,
                                                    on_tick=tick, should_stop=ctx.check)
    figures = dns_stats.summarise(columns, max(elapsed, 1e-6))
    dns_stats.emit(ctx, figures, dict(meta, resolver=label, queries=len(columns.latency), stray=stray,
                                      in_flight=window, processes=processes, **{"pass": "max"}))


def _dnsperf_pass(ctx: Any, path: str, params: Dict[str, Any], resolver: Tuple[str, int], listed: Any,
                  meta: Dict[str, Any], wait: float) -> None:
    data = os.path.join(ctx.run_dir, "dnsperf-queries.txt")
    out_path = os.path.join(ctx.run_dir, "dnsperf-out.txt")
    ctx.add_cleanup_path(data)
    ctx.add_cleanup_path(out_path)
    dns_dnsperf.write_queries(data, listed.queries)
    argv = dns_dnsperf.argv(path, resolver[0], resolver[1], data, params["duration"], meta["in_flight"],
                            params["rate"] or None, wait, bool(params["edns"]))
    label = dns_replay.resolver_text(*resolver)
    phase = _phase_id("max", [resolver])
    start = time.monotonic()
    ticks = []  # type: List[Tuple[float, float]]

    def live(text: str) -> None:   # dnsperf's -S 1 lines as they come: the live view's queries per second
        for at, qps in dns_dnsperf.ticks(text):
            ctx.emit("dns_tick", resolver=label, second=len(ticks), t=round(at, 3), answered=int(qps),
                     timeouts=None, qps=round(qps, 1), lat_ms={"p50": None, "p90": None, "p99": None},
                     resolvers=params["resolver_names"], **{"pass": "max"})
            ticks.append((at, qps))

    with open(out_path, "wb") as out, open(out_path, "rb") as follow:
        proc = ctx.popen(argv, stdout=out, stderr=out)
        partial = b""
        while proc.poll() is None:
            ctx.sleep(0.5)
            ctx.progress(phase, min(1.0, (time.monotonic() - start) / (params["duration"] + wait)))
            chunk = partial + follow.read()
            cut = chunk.rfind(b"\n") + 1
            partial = chunk[cut:]
            live(chunk[:cut].decode("utf-8", "replace"))
        live((partial + follow.read()).decode("utf-8", "replace"))
    with open(out_path, "rb") as handle:
        text = handle.read().decode("utf-8", "replace")
    found = dns_dnsperf.parse(text, label)
    if proc.returncode != 0 or not found["has_stats"]:
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith(">")]
        raise RuntimeError("dns: dnsperf failed against {} (exit {}): {}".format(
            label, proc.returncode, (lines[-1] if lines else "no output")[:300]))
    figures = dns_stats.summarise(found["columns"], found["run_s"] or params["duration"])
    # dnsperf's own counts and rate are the figures; the per-query lines give the percentiles
    figures.update(answered=found["completed"], timeouts=found["lost"], rcodes=found["rcodes"], qps=found["qps"])
    dns_stats.emit(ctx, figures, dict(meta, resolver=label, queries=found["sent"],
                                      dnsperf={k: found[k] for k in ("sent", "completed", "lost", "qps", "run_s",
                                                                     "mean_ms", "min_ms", "max_ms")},
                                      **{"pass": "max"}))
