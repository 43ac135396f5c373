"""The built-in Redis load generator: GET/SET over RESP from forked worker processes, per-second figures.

Each worker process runs an epoll loop over its share of the client connections (what redis-benchmark
does in C): one process is bound by its interpreter lock, threads blocking on one socket each would
spend the lock's hand-overs on every reply. Keys are prefix + 12 digits (redis-benchmark's __rand_int__),
values value_size bytes of "x".

Closed loop (rate 0): each connection sends `pipeline` requests, waits for all their replies, sends the
next ones; a reply's latency runs from the send of its batch to the read that brought it (redis-benchmark's
measure). Constant rate: every request has an intended start (the rate spread evenly over the
connections); it is sent once due and the connection has fewer than `pipeline` outstanding, and its
latency runs from the intended start, so a stalled server shows as long latencies, not fewer requests.

A request counts in the second its reply arrived (seconds from the common start t0). Workers send one
JSON line per second to the parent: counts, errors and a sparse latency histogram per op.
"""
import collections
import contextlib
import json
import math
import os
import random
import select
import signal
import socket
import time
from typing import Any, Callable, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from . import resp_wire
from .disk_latency import MIN_S as HIST_MIN_S
from .disk_latency import Histogram
from .disk_latency import K as HIST_K

OPS = ("get", "set")
READY_TIMEOUT = 60.0      # seconds for every worker to connect its clients
START_DELAY = 0.1         # seconds between "all connected" and t0
FILL_BATCH = 200          # keys per MSET
FILL_DEPTH = 8            # MSETs in flight
RECV_BYTES = 1 << 18
RECONNECT_EVERY = 1.0     # seconds between attempts on a lost connection
STALE_GRACE = 2.0         # seconds the parent waits for a late worker's second before reporting without it
_INV_MIN = 1.0 / HIST_MIN_S
_LAST_BUCKET = len(Histogram().counts) - 1


def key_of(prefix: bytes, index: int) -> bytes:
    return prefix + b"%012d" % index


def value_of(size: int) -> bytes:
    return b"x" * size


def process_count(clients: int, wanted: int = 0) -> int:
    """Worker processes for `clients` connections: one per CPU (each loop keeps one core busy), never more
    than there are connections."""
    cpus = os.cpu_count() or 1
    return max(1, min(clients, wanted or cpus))


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


# -- the worker ------------------------------------------------------------------------------------------

class _Conn:
    __slots__ = ("sock", "fd", "buf", "out", "inflight", "next_due", "interval", "lost_at", "expected", "gets")

    def __init__(self, sock: socket.socket, interval: float, first_due: float) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.buf = b""
        self.out = b""   # what the socket did not take yet (large values, deep pipelines)
        self.inflight = collections.deque()  # type: collections.deque
        self.interval = interval
        self.next_due = first_due
        self.lost_at = 0.0
        self.expected = None  # type: Optional[bytes]  # closed loop: the replies of the batch, if all go well
        self.gets = 0


class _Seconds:
    """Per-second counts, errors and sparse histograms per op, in one worker."""

    def __init__(self) -> None:
        self.data = {}  # type: Dict[int, Dict[str, Any]]

    def second(self, index: int) -> Dict[str, Any]:
        sec = self.data.get(index)
        if sec is None:
            sec = self.data[index] = {"ops": [0, 0], "err": [0, 0], "h": [{}, {}], "retries": 0}
        return sec

    def pop_line(self, index: int) -> bytes:
        sec = self.data.pop(index, None) or {"ops": [0, 0], "err": [0, 0], "h": [{}, {}], "retries": 0}
        out = {"s": index, "ops": sec["ops"], "err": sec["err"], "retries": sec["retries"],
               "h": [{str(k): v for k, v in h.items()} for h in sec["h"]]}
        return (json.dumps(out, separators=(",", ":")) + "\n").encode()


def _connect(cfg: Dict[str, Any], timeout: float = resp_wire.CONNECT_TIMEOUT) -> socket.socket:
    """A connection past AUTH and SELECT, non-blocking for the loop."""
    sock = _client(cfg, timeout).sock   # the handshake's replies are all read: nothing is left buffered
    sock.setblocking(False)
    return sock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def worker(cfg: Dict[str, Any], slots: List[int], go_fd: int, out_fd: int, seed: int) -> None:
    """One worker process: connect its clients, wait for t0, run until t0 + seconds, report per second."""
    clients = int(cfg["clients"])
    rate = float(cfg.get("rate") or 0.0)
    interval = clients / rate if rate > 0 else 0.0   # seconds between one connection's intended starts
    conns = {}  # type: Dict[int, _Conn]
    try:
        socks = [_connect(cfg) for _ in slots]
    except (OSError, resp_wire.RedisError) as exc:
        _write_all(out_fd, (json.dumps({"error": "{}".format(exc) if isinstance(exc, resp_wire.RedisError)
                                        else "cannot connect to {}:{}: {}".format(cfg["host"], cfg["port"], exc)})
                            + "\n").encode())
        return
    _write_all(out_fd, b'{"ready":1}\n')
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(go_fd, 64)
        if not chunk:
            return   # the parent gave up
        line += chunk
    t0 = float(line.decode())
    for slot, sock in zip(slots, socks):
        # constant rate: the connections' intended starts interleave evenly
        conns[sock.fileno()] = _Conn(sock, interval, t0 + (slot / float(clients)) * interval)
    _loop(cfg, conns, t0, out_fd, seed)


def _loop(cfg: Dict[str, Any], conns: Dict[int, "_Conn"], t0: float, out_fd: int, seed: int) -> None:
    prefix, keyspace = cfg["prefix"], int(cfg["keyspace"])
    value = value_of(int(cfg["value_size"]))
    klen = str(len(prefix) + 12).encode()
    get_t = b"*2\r\n$3\r\nGET\r\n$" + klen + b"\r\n" + prefix.replace(b"%", b"%%") + b"%012d\r\n"
    set_head = b"*3\r\n$3\r\nSET\r\n$" + klen + b"\r\n" + prefix.replace(b"%", b"%%") + b"%012d\r\n"
    set_tail = b"$" + str(len(value)).encode() + b"\r\n" + value + b"\r\n"
    # every key holds the same value: a whole batch's replies are known before they come (checked with
    # one comparison; anything else, a partial read, a miss or an error, goes through the parser)
    get_reply = set_tail
    get_ratio = float(cfg["get_ratio"])
    depth = max(1, int(cfg["pipeline"]))
    constant = float(cfg.get("rate") or 0.0) > 0
    seconds = int(cfg["seconds"])
    t_end = t0 + seconds
    rnd = random.Random(seed).random
    perf = time.perf_counter
    log = math.log
    k = HIST_K
    last_bucket = _LAST_BUCKET
    stats = _Seconds()
    parent = os.getppid()
    epoll = select.epoll()
    by_fd = dict(conns)
    lost = []  # type: List[_Conn]
    for fd in by_fd:
        epoll.register(fd, select.EPOLLIN)

    def send(conn: "_Conn", now: float) -> None:
        """Closed loop: a batch of `depth`; constant rate: every due request the depth allows."""
        parts = []
        inflight = conn.inflight
        if constant:
            due = conn.next_due
            while due <= now and len(inflight) < depth and due < t_end:
                is_get = rnd() < get_ratio
                index = int(rnd() * keyspace)
                parts.append(get_t % index if is_get else set_head % index + set_tail)
                inflight.append((is_get, due))
                due += conn.interval
            conn.next_due = due
        else:
            replies = []
            gets = 0
            for _ in range(depth):
                is_get = rnd() < get_ratio
                index = int(rnd() * keyspace)
                if is_get:
                    parts.append(get_t % index)
                    replies.append(get_reply)
                    gets += 1
                else:
                    parts.append(set_head % index + set_tail)
                    replies.append(b"+OK\r\n")
                inflight.append((is_get, now))
            conn.expected = b"".join(replies)
            conn.gets = gets
        if parts:
            data = b"".join(parts)
            if conn.out:
                conn.out += data
                return
            sent = conn.sock.send(data)
            if sent < len(data):
                conn.out = data[sent:]
                epoll.modify(conn.fd, select.EPOLLIN | select.EPOLLOUT)

    def flush(conn: "_Conn") -> None:
        sent = conn.sock.send(conn.out)
        conn.out = conn.out[sent:]
        if not conn.out:
            epoll.modify(conn.fd, select.EPOLLIN)

    def drop(conn: "_Conn", now: float) -> None:
        """A lost connection: its outstanding requests are errors; reconnected later (a retry)."""
        sec = stats.second(max(int(now - t0), 0))
        for is_get, _ in conn.inflight:
            sec["err"][0 if is_get else 1] += 1
        conn.inflight.clear()
        with contextlib.suppress(OSError, ValueError):
            epoll.unregister(conn.fd)
        with contextlib.suppress(OSError):
            conn.sock.close()
        by_fd.pop(conn.fd, None)
        conn.lost_at = now
        lost.append(conn)

    now = perf()
    if now < t0:
        time.sleep(t0 - now)
    now = perf()
    for conn in list(by_fd.values()):
        try:
            send(conn, now)
        except OSError:
            drop(conn, now)
    flushed = 0   # seconds already sent to the parent
    while True:
        now = perf()
        if now >= t_end:
            break
        boundary = t0 + flushed + 1
        if now >= boundary:
            if os.getppid() != parent:
                return
            _write_all(out_fd, stats.pop_line(flushed))
            flushed += 1
            for conn in list(lost):
                if now - conn.lost_at >= RECONNECT_EVERY:
                    lost.remove(conn)
                    stats.second(flushed)["retries"] += 1
                    try:
                        sock = _connect(cfg, RECONNECT_EVERY)
                    except (OSError, resp_wire.RedisError):
                        conn.lost_at = now
                        lost.append(conn)
                        continue
                    conn.sock, conn.fd, conn.buf, conn.out = sock, sock.fileno(), b"", b""
                    conn.next_due = max(conn.next_due, now)
                    by_fd[conn.fd] = conn
                    epoll.register(conn.fd, select.EPOLLIN)
                    send(conn, now)
            continue
        timeout = boundary - now
        if constant:
            soonest = min((c.next_due for c in by_fd.values() if len(c.inflight) < depth), default=boundary)
            timeout = min(timeout, max(soonest - now, 0.0))
        events = epoll.poll(timeout)
        for fd, mask in events:
            conn = by_fd.get(fd)
            if conn is None:
                continue
            if mask & select.EPOLLOUT:
                try:
                    flush(conn)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    drop(conn, perf())
                    continue
                if not mask & (select.EPOLLIN | select.EPOLLERR | select.EPOLLHUP):
                    continue
            try:
                data = conn.sock.recv(RECV_BYTES)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            t_read = perf()
            if not data:
                drop(conn, t_read)
                continue
            inflight = conn.inflight
            sec = stats.second(int(t_read - t0))
            ops, errs, hists = sec["ops"], sec["err"], sec["h"]
            expected, conn.expected = conn.expected, None
            if expected is not None and data == expected and not conn.buf:
                took = t_read - inflight[0][1]
                if took > HIST_MIN_S:
                    bucket = int(log(took * _INV_MIN) * k)
                    if bucket > last_bucket:
                        bucket = last_bucket
                else:
                    bucket = 0
                gets = conn.gets
                sets = len(inflight) - gets
                inflight.clear()
                if gets:
                    ops[0] += gets
                    hists[0][bucket] = hists[0].get(bucket, 0) + gets
                if sets:
                    ops[1] += sets
                    hists[1][bucket] = hists[1].get(bucket, 0) + sets
                try:
                    send(conn, t_read)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    drop(conn, t_read)
                continue
            buf = conn.buf + data if conn.buf else data
            pos, size = 0, len(buf)
            last_start, bucket = -1.0, 0
            while inflight:
                # one reply: bulk string (GET), simple string (SET), error; skip() inlined for speed
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    break
                kind = buf[pos]
                error = False
                if kind == 36:
                    n = int(buf[pos + 1:end])
                    stop = end + 4 + n if n >= 0 else end + 2
                    if stop > size:
                        break
                elif kind == 45:
                    stop, error = end + 2, True
                elif kind == 43 or kind == 58:
                    stop = end + 2
                else:
                    stop, error = resp_wire.skip(buf, pos)
                    if stop < 0:
                        break
                pos = stop
                is_get, started = inflight.popleft()
                op = 0 if is_get else 1
                if error:
                    errs[op] += 1
                    continue
                ops[op] += 1
                if started != last_start:
                    took = t_read - started
                    last_start = started
                    if took > HIST_MIN_S:
                        bucket = int(log(took * _INV_MIN) * k)
                        if bucket > last_bucket:
                            bucket = last_bucket
                    else:
                        bucket = 0
                hist = hists[op]
                hist[bucket] = hist.get(bucket, 0) + 1
            conn.buf = buf[pos:] if pos < size else b""
            if not inflight or (constant and len(inflight) < depth):
                try:
                    send(conn, t_read)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    drop(conn, t_read)
        if constant:
            now = perf()
            for conn in list(by_fd.values()):
                if conn.next_due <= now and len(conn.inflight) < depth:
                    try:
                        send(conn, now)
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        drop(conn, now)
    # at a constant rate: requests meant to start over a second before the end and still unanswered (never
    # sent, as the server did not keep up, or sent and not answered): reported beside the counts, so that a
    # stall at the end of a step is not hidden
    unfinished = 0
    if constant:
        cut = t_end - 1.0
        for conn in list(by_fd.values()) + lost:
            unfinished += sum(1 for _, started in conn.inflight if started < cut)
            if conn.next_due < cut:
                unfinished += int(math.ceil((cut - conn.next_due) / conn.interval))
    while flushed < seconds:
        _write_all(out_fd, stats.pop_line(flushed))
        flushed += 1
    _write_all(out_fd, (json.dumps({"done": 1, "unfinished": unfinished}) + "\n").encode())
    for conn in by_fd.values():
        with contextlib.suppress(OSError):
            conn.sock.close()
    epoll.close()


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
            worker(cfg, slots, go_r, out_w, seed)
        except BaseException as exc:
            code = 1
            with contextlib.suppress(BaseException):
                _write_all(out_w, (json.dumps({"error": "load worker: {}: {}".format(type(exc).__name__, exc)})
                                   + "\n").encode())
        finally:
            os._exit(code)
    os.close(go_r)
    os.close(out_w)
    return pid, go_w, out_r


class LoadError(Exception):
    """The load could not run (connection refused, AUTH failed, a worker died)."""


def summarize(hist: Histogram) -> Dict[str, Optional[float]]:
    if not hist.count:
        return {"p50": None, "p99": None, "p999": None}
    return {"p50": round(hist.percentile(50.0) * 1e3, 4), "p99": round(hist.percentile(99.0) * 1e3, 4),
            "p999": round(hist.percentile(99.9) * 1e3, 4)}


def _histogram(sparse: Dict[str, int]) -> Histogram:
    """A Histogram from a worker's sparse buckets; min/max are the buckets' edges (the loop keeps no others)."""
    hist = Histogram()
    low, high = math.inf, 0.0
    for key, n in sparse.items():
        index = int(key)
        hist.counts[index] += n
        hist.count += n
        low = min(low, HIST_MIN_S * math.exp(index / HIST_K))
        high = max(high, HIST_MIN_S * math.exp((index + 1) / HIST_K))
    hist.min, hist.max = low, high
    return hist


def run_load(cfg: Dict[str, Any], on_second: Callable[..., None],
             should_stop: Callable[[], bool] = lambda: False) -> Dict[str, Any]:
    """Runs cfg["seconds"] of load from cfg["clients"] connections; calls on_second(second, t, ops, lat_ms,
    errors, retries) once per second (second 1-based, t = wall clock at its end). Returns the step's figures:
    per_second, per_second_by_op, p50_ms/p99_ms/p999_ms per op, errors, retries, processes."""
    clients = int(cfg["clients"])
    seconds = int(cfg["seconds"])
    nproc = process_count(clients, int(cfg.get("processes") or 0))
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
        t0 = time.perf_counter() + START_DELAY
        wall0 = time.time() + START_DELAY
        for _, go, _ in workers:
            _write_all(go, "{!r}\n".format(t0).encode())
        emitted = 0
        merged = [Histogram(), Histogram()]
        per_second = []  # type: List[float]
        by_op = {op: [] for op in OPS}  # type: Dict[str, List[float]]
        errors = retries = unfinished = 0
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
                tries = sum(p["retries"] for p in parts)
                lat = {}  # type: Dict[str, Dict[str, Optional[float]]]
                for i, op in enumerate(OPS):
                    hist = Histogram()
                    for p in parts:
                        hist.merge(_histogram(p["h"][i]))
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
           "processes": nproc, "unfinished": unfinished}
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
