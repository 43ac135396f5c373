"""The built-in Redis load generator: fill, cleanup and the parent of the worker processes (resp_loop.py).

The clients are spread over forked worker processes, each running an epoll loop over its share of the
connections (what redis-benchmark does in C): one process is bound by its interpreter lock, and threads
blocking on one socket each would spend the lock's hand-overs on every reply. Keys are prefix + 12 digits
(redis-benchmark's __rand_int__), values value_size bytes of "x". The parent merges the workers' per-second
lines into one figure per second: counts, errors, reconnects and p50/p99/p99.9 per op.
"""
import contextlib
import json
import os
import random
import select
import signal
import socket
import time
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from . import resp_loop, resp_wire
from .resp_hist import LatencyHistogram
from .resp_loop import value_of
from .tool_cpu import whole_cpus

OPS = ("get", "set")
READY_TIMEOUT = 60.0      # seconds for every worker to connect its clients
START_DELAY = 0.1         # seconds between "all connected" and t0
FILL_BATCH = 200          # keys per MSET
FILL_DEPTH = 8            # MSETs in flight
FEW_IN_FLIGHT = 8         # requests in flight at once that one worker serves, whatever the CPUs
STALE_GRACE = 2.0         # seconds the parent waits for a late worker's second before reporting without it


def key_of(prefix: bytes, index: int) -> bytes:
    return prefix + b"%012d" % index


def process_count(clients: int, wanted: int = 0, pipeline: int = 1, local: bool = False) -> int:
    """Worker processes for `clients` connections: `wanted` if given, else one per CPU the load may run on (its
    affinity or CPU quota, not the machine's count), as long as there is work for them: never more than there are
    connections, and one while few requests are in flight at once (clients x pipeline up to FEW_IN_FLIGHT: each
    waits on round trips, not on the worker's CPU).
    A server on this host (`local`) keeps a CPU of its own: a single-threaded redis-server time-shared with two
    busy workers on two cores served 0.79 of the rate redis-benchmark's one thread got from it."""
    if wanted:
        return max(1, min(clients, wanted))
    cpus = whole_cpus()
    if local:
        cpus -= 1
    if clients * max(1, pipeline) <= FEW_IN_FLIGHT:
        cpus = 1
    return max(1, min(clients, cpus))


def is_local(host: str) -> bool:
    """Whether the target address is one of this host's (loopback or an address of its interfaces): the
    server then competes with the load for the same CPUs."""
    try:
        infos = socket.getaddrinfo(host, None, 0, socket.SOCK_STREAM)
    except OSError:
        return False
    for family, _, _, _, addr in infos:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.bind((addr[0], 0) if family == socket.AF_INET else (addr[0], 0) + tuple(addr[2:]))
            return True   # only an address of this host can be bound
        except OSError:
            continue
    return False


# -- fill and cleanup -------------------------------------------------------------------------------------

def fill(cfg: Dict[str, Any], progress: Optional[Callable[[float], None]] = None,
         should_stop: Optional[Callable[[], bool]] = None) -> int:
    """Writes every key of the keyspace (MSET in pipelined batches); returns how many."""
    prefix, keyspace, value = cfg["prefix"], int(cfg["keyspace"]), value_of(int(cfg["value_size"]))
    with _client(cfg, timeout=60.0) as client:
        done = 0
        next_report = time.monotonic() + 0.5
        while done < keyspace:
            commands = []
            for _ in range(FILL_DEPTH):
                if done >= keyspace:
                    break
                stop = min(done + FILL_BATCH, keyspace)
                args = [b"MSET"]
                for index in range(done, stop):
                    args += [key_of(prefix, index), value]
                commands.append(resp_wire.encode(*args))
                done = stop
            for reply in client.pipeline(commands):
                if isinstance(reply, resp_wire.ReplyError):
                    raise resp_wire.RedisError("filling the keyspace: {}".format(reply))
            if should_stop is not None and should_stop():
                break
            if progress is not None and time.monotonic() >= next_report:
                progress(done / keyspace)
                next_report = time.monotonic() + 0.5
    return done


def cleanup(cfg: Dict[str, Any]) -> int:
    """Deletes every key with the prefix; returns how many."""
    with _client(cfg, timeout=60.0) as client:
        return client.delete_prefix(cfg["prefix"])


def count_keys(cfg: Dict[str, Any]) -> int:
    with _client(cfg) as client:
        return len(client.scan_prefix(cfg["prefix"]))


def _client(cfg: Dict[str, Any], timeout: float = resp_wire.CONNECT_TIMEOUT) -> resp_wire.Client:
    return resp_wire.Client(cfg["host"], int(cfg["port"]), cfg.get("password") or "", cfg.get("user") or "",
                            int(cfg.get("db") or 0), timeout=timeout)


# -- a worker process ------------------------------------------------------------------------------------

def worker(cfg: Dict[str, Any], slots: List[int], go_fd: int, out_fd: int, seed: int) -> None:
    """Connects its clients, says ready, waits for t0 from the parent, runs until t0 + seconds."""
    clients = int(cfg["clients"])
    rate = float(cfg.get("rate") or 0.0)
    interval = clients / rate if rate > 0 else 0.0   # seconds between one connection's intended starts
    try:
        socks = [resp_loop.connect(cfg) for _ in slots]
    except resp_wire.RedisError as exc:
        resp_loop.write_all(out_fd, (json.dumps({"error": str(exc)}) + "\n").encode())
        return
    except OSError as exc:
        resp_loop.write_all(out_fd, (json.dumps({"error": "cannot connect to {}:{}: {}".format(
            cfg["host"], cfg["port"], exc)}) + "\n").encode())
        return
    resp_loop.write_all(out_fd, b'{"ready":1}\n')
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(go_fd, 64)
        if not chunk:
            return   # the parent gave up
        line += chunk
    t0 = float(line.decode())
    conns = {}  # type: Dict[int, resp_loop.Conn]
    for slot, sock in zip(slots, socks):
        # constant rate: the connections' intended starts interleave evenly
        conns[sock.fileno()] = resp_loop.Conn(sock, interval, t0 + (slot / float(clients)) * interval)
    resp_loop.Loop(cfg, conns, t0, out_fd, seed).run()


# -- the parent ------------------------------------------------------------------------------------------

def _fork(cfg: Dict[str, Any], slots: List[int], seed: int) -> Tuple[int, int, int]:
    """(pid, go pipe's write end, report pipe's read end) of a new worker process."""
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(go_w)
            os.close(out_r)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)   # forked from the agent, whose handlers only set a flag
            # a group of its own, as ctx.popen gives every tool: a cancel's SIGTERM to the agent's group must not
            # end the workers before the agent has seen the stop (the step would fail instead of being cancelled);
            # the stop kills them with the rest of the run
            os.setpgid(0, 0)
            worker(cfg, slots, go_r, out_w, seed)
        except BaseException as exc:
            code = 1
            with contextlib.suppress(BaseException):
                resp_loop.write_all(out_w, (json.dumps({"error": "load worker: {}: {}".format(type(exc).__name__, exc)})
                                   + "\n").encode())
        finally:
            os._exit(code)
    os.close(go_r)
    os.close(out_w)
    return pid, go_w, out_r


class LoadError(Exception):
    """The load could not run (connection refused, AUTH failed, a worker died)."""


def summarize(hist: LatencyHistogram) -> Dict[str, Optional[float]]:
    """p50/p99/p99.9 in ms as redis-benchmark reports them (resp_hist)."""
    return {"p50": hist.percentile_ms(50.0), "p99": hist.percentile_ms(99.0), "p999": hist.percentile_ms(99.9)}


def run_load(cfg: Dict[str, Any], on_second: Callable[..., None],
             should_stop: Callable[[], bool] = lambda: False) -> Dict[str, Any]:
    """Runs cfg["seconds"] of load from cfg["clients"] connections; calls on_second(second, t, ops, lat_ms,
    errors, retries) once per second (second 1-based, t = wall clock at its end). cfg["start_at"] (optional,
    time.time() scale): when the first second begins, if later than the workers' connecting. Returns the step's
    figures: per_second, per_second_by_op, p50_ms/p99_ms/p999_ms per op, errors, retries, processes, unfinished."""
    clients = int(cfg["clients"])
    seconds = int(cfg["seconds"])
    nproc = process_count(clients, int(cfg.get("processes") or 0), int(cfg.get("pipeline") or 1),
                          is_local(str(cfg["host"])))
    base_seed = random.SystemRandom().randrange(1 << 30)
    workers = []  # type: List[Tuple[int, int, int]]
    buffers = {}  # type: Dict[int, bytes]
    per_worker = {}  # type: Dict[int, Dict[int, Dict[str, Any]]]
    done = set()  # type: set
    finished = False
    try:
        for w in range(nproc):
            workers.append(_fork(cfg, list(range(w, clients, nproc)), base_seed + w))
        fds = [out for _, _, out in workers]
        ready = set()  # type: set
        deadline = time.monotonic() + READY_TIMEOUT
        while len(ready) < nproc:
            if should_stop():
                raise LoadError("stopped")
            left = deadline - time.monotonic()
            if left <= 0:
                raise LoadError("the load workers did not connect within {:.0f} s".format(READY_TIMEOUT))
            for msg, fd in _read_lines(fds, buffers, min(left, 0.5)):
                if "error" in msg:
                    raise LoadError(msg["error"])
                if msg.get("eof"):
                    raise LoadError("a load worker ended before it had connected")
                if msg.get("ready"):
                    ready.add(fd)
        # a common start for several client hosts (start_at, host wall clock), else as soon as all are connected
        delay = START_DELAY
        if cfg.get("start_at"):
            delay = max(delay, float(cfg["start_at"]) - time.time())
        t0 = time.perf_counter() + delay
        wall0 = time.time() + delay
        for _, go, _ in workers:
            resp_loop.write_all(go, "{!r}\n".format(t0).encode())
        emitted = 0
        merged = [LatencyHistogram(), LatencyHistogram()]
        per_second = []  # type: List[float]
        by_op = {op: [] for op in OPS}  # type: Dict[str, List[float]]
        errors = retries = unfinished = 0
        errors_by_op = {op: [] for op in OPS}  # type: Dict[str, List[int]]
        while emitted < seconds:
            if should_stop():
                raise LoadError("stopped")
            for msg, fd in _read_lines([f for f in fds if f not in done], buffers, 0.25):
                if "error" in msg:
                    raise LoadError(msg["error"])
                if msg.get("done") or msg.get("eof"):
                    done.add(fd)
                    unfinished += int(msg.get("unfinished") or 0)
                elif "s" in msg:
                    per_worker.setdefault(msg["s"], {})[fd] = msg
            while emitted < seconds and (len(per_worker.get(emitted, {})) == nproc
                                         or time.perf_counter() > t0 + emitted + 1 + STALE_GRACE):
                parts = list(per_worker.pop(emitted, {}).values())
                ops = {op: sum(p["ops"][i] for p in parts) for i, op in enumerate(OPS)}
                errs = sum(sum(p["err"]) for p in parts)
                for i, op in enumerate(OPS):
                    errors_by_op[op].append(sum(p["err"][i] for p in parts))
                tries = sum(p["retries"] for p in parts)
                lat = {}  # type: Dict[str, Dict[str, Optional[float]]]
                for i, op in enumerate(OPS):
                    hist = LatencyHistogram()
                    for p in parts:
                        hist.add(p["h"][i])
                    merged[i].merge(hist)
                    lat[op] = summarize(hist)
                emitted += 1
                per_second.append(sum(ops.values()))
                for op in OPS:
                    by_op[op].append(ops[op])
                errors += errs
                retries += tries
                on_second(emitted, wall0 + emitted, ops, lat, errs, tries)
            if len(done) == nproc and emitted < seconds and not per_worker:
                raise LoadError("the load workers ended before the step did")
        # the workers' last lines (what was left unanswered) follow their last second at once
        deadline = time.monotonic() + STALE_GRACE
        while len(done) < nproc and time.monotonic() < deadline:
            for msg, fd in _read_lines([f for f in fds if f not in done], buffers, 0.25):
                if msg.get("done") or msg.get("eof"):
                    done.add(fd)
                    unfinished += int(msg.get("unfinished") or 0)
        finished = True
    finally:
        for pid, go, out in workers:
            if not finished:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for fd in (go, out):
                with contextlib.suppress(OSError):
                    os.close(fd)
        for pid, _, _ in workers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    out = {"per_second": per_second, "per_second_by_op": by_op, "errors": errors, "retries": retries,
           "processes": nproc, "unfinished": unfinished, "errors_per_second_by_op": errors_by_op}
    for i, op in enumerate(OPS):
        summary = summarize(merged[i])
        out.setdefault("p50_ms", {})[op] = summary["p50"]
        out.setdefault("p99_ms", {})[op] = summary["p99"]
        out.setdefault("p999_ms", {})[op] = summary["p999"]
    return out


def _read_lines(fds: List[int], buffers: Dict[int, bytes], timeout: float) -> List[Tuple[Dict[str, Any], int]]:
    """Complete JSON lines from the workers' pipes, waiting up to `timeout` for the first."""
    if not fds:
        time.sleep(timeout)
        return []
    readable, _, _ = select.select(fds, [], [], timeout)
    out = []
    for fd in readable:
        chunk = os.read(fd, 1 << 16)
        if not chunk:   # the worker is gone (its last line, if any, came before)
            out.append(({"eof": 1}, fd))
            continue
        data = buffers.get(fd, b"") + chunk
        *lines, rest = data.split(b"\n")
        buffers[fd] = rest
        for line in lines:
            if line:
                out.append((json.loads(line.decode()), fd))
    return out
