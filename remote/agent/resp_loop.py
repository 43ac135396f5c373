"""One worker process of the built-in Redis load generator: an epoll loop over its share of the connections.

Closed loop (rate 0): each connection sends `pipeline` requests at once, waits for all their replies,
sends the next batch; every reply of a batch counts from the batch's write to the socket to the first
read of its replies, however many reads the batch takes (redis-benchmark's measure: its writeHandler
stamps before the write, its readHandler on the first read event, before parsing). Over several connections
a wake-up's reads come first, each stamped as it starts, and the answered connections' next batches are
written after them: redis-benchmark's event loop, whose writeHandler runs on the pass after the readHandler.
Every key holds the same value, so the replies of a batch are known in advance: a read that brings
exactly them is counted with one comparison; anything else (a partial read, a missing key, an error) goes
through the parser.

Constant rate: each request has an intended start (the rate spread evenly over the connections); it is
sent once due while its connection has fewer than `pipeline` outstanding, and counts from its intended
start, so a stalled server shows as long latencies, not as fewer requests.

A reply counts in the second it was read (seconds from the common start t0); after each second the worker
writes one JSON line to the parent: counts, errors, reconnects and a sparse latency histogram per op.
"""
import contextlib
import json
import math
import os
import random
import select
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from . import resp_single, resp_wire
from .resp_conn import (  # noqa: F401 - Conn, connect, value_of, write_all, bucket_of: the generator's door
    RECONNECT_EVERY,
    RECV_BYTES,
    Conn,
    _empty,
    _perf,
    bucket_of,
    connect,
    value_of,
    write_all,
)
from .resp_keys import KeyDraws
from .resp_wire import replies


class Loop:
    """The event loop of one worker (a class for its state; the hot path keeps names in locals)."""

    def __init__(self, cfg: Dict[str, Any], conns: Dict[int, "Conn"], t0: float, out_fd: int, seed: int) -> None:
        self.cfg = cfg
        self.by_fd = dict(conns)
        self.t0 = t0
        self.out_fd = out_fd
        rng = random.Random(seed)
        self.rnd = rng.random
        self.draws = KeyDraws(rng, int(cfg["keyspace"]))   # a pipelined batch's keys
        self.keyspace = int(cfg["keyspace"])
        self.get_ratio = float(cfg["get_ratio"])
        self.depth = max(1, int(cfg["pipeline"]))
        self.constant = float(cfg.get("rate") or 0.0) > 0
        self.seconds = int(cfg["seconds"])
        self.t_end = t0 + self.seconds
        prefix = cfg["prefix"].replace(b"%", b"%%")
        value = value_of(int(cfg["value_size"]))
        klen = str(len(cfg["prefix"]) + 12).encode()
        self.get_t = b"*2\r\n$3\r\nGET\r\n$" + klen + b"\r\n" + prefix + b"%012d\r\n"
        set_tail = b"$" + str(len(value)).encode() + b"\r\n" + value + b"\r\n"
        self.set_t = b"*3\r\n$3\r\nSET\r\n$" + klen + b"\r\n" + prefix + b"%012d\r\n" + set_tail.replace(b"%", b"%%")
        self.get_reply = set_tail   # every key holds the same value
        # a batch of only GETs or only SETs: one format call for all of it, replies known in advance
        self.pure = self.get_ratio >= 1.0 or self.get_ratio <= 0.0
        pure_get = self.get_ratio >= 1.0
        self.batch_t = (self.get_t if pure_get else self.set_t) * self.depth
        self.batch_kinds = (pure_get,) * self.depth
        self.batch_expected = (self.get_reply if pure_get else b"+OK\r\n") * self.depth
        self.batch_gets = self.depth if pure_get else 0
        self.cur_index, self.cur_sec = -1, _empty()   # the second replies are counted in, while it lasts
        self.seconds_data = {}  # type: Dict[int, Dict[str, Any]]
        self.lost = []  # type: List[_Conn]
        # closed loop over several connections (run): the connections whose batch was answered in this wake-up,
        # sent their next batch once every read of the wake-up is done, as redis-benchmark's event loop does;
        # None: each sends at once (one connection, constant rate)
        self.defer = None  # type: Optional[List[Conn]]
        self.epoll = select.epoll()
        for fd in self.by_fd:
            self.epoll.register(fd, select.EPOLLIN)

    def second(self, index: int) -> Dict[str, Any]:
        sec = self.seconds_data.get(index)
        if sec is None:
            sec = self.seconds_data[index] = _empty()
        return sec

    def pop_line(self, index: int) -> bytes:
        sec = self.seconds_data.pop(index, None) or _empty()
        out = {"s": index, "ops": sec["ops"], "err": sec["err"], "retries": sec["retries"],
               "h": [{str(k): v for k, v in h.items()} for h in sec["h"]]}
        return (json.dumps(out, separators=(",", ":")) + "\n").encode()

    # -- sending ---------------------------------------------------------------------------------------

    def send(self, conn: "Conn", now: float) -> None:
        rnd, keyspace = self.rnd, self.keyspace
        if self.constant:
            parts = []
            inflight, depth, get_ratio = conn.inflight, self.depth, self.get_ratio
            due, t_end = conn.next_due, self.t_end
            while due <= now and len(inflight) < depth and due < t_end:
                is_get = rnd() < get_ratio
                parts.append((self.get_t if is_get else self.set_t) % int(rnd() * keyspace))
                inflight.append((is_get, due))
                due += conn.interval
            conn.next_due = due
            if not parts:
                return
            data = b"".join(parts)
        elif self.pure:
            depth = self.depth
            data = self.batch_t % (int(rnd() * keyspace) if depth == 1 else self.draws.take(depth))
            conn.kinds, conn.expected, conn.gets = self.batch_kinds, self.batch_expected, self.batch_gets
        else:
            get_ratio, get_t, set_t = self.get_ratio, self.get_t, self.set_t
            kinds = [rnd() < get_ratio for _ in range(self.depth)]
            data = b"".join([(get_t if g else set_t) % int(rnd() * keyspace) for g in kinds])
            conn.kinds, conn.gets = kinds, sum(kinds)
            conn.expected = b"".join([self.get_reply if g else b"+OK\r\n" for g in kinds])
        conn.kpos = 0
        conn.first_read = 0.0
        conn.sent_at = _perf()   # from the write, as redis-benchmark counts: not the batch's making
        if conn.out:
            conn.out += data
            return
        sent = conn.sock.send(data)
        if sent < len(data):
            conn.out = data[sent:]
            self.epoll.modify(conn.fd, select.EPOLLIN | select.EPOLLOUT)

    def try_send(self, conn: "Conn", now: float) -> None:
        if now >= self.t_end:   # nothing starts after the step: what is in flight at its end is all it leaves
            return
        try:
            self.send(conn, now)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.drop(conn, now)

    def flush(self, conn: "Conn") -> None:
        sent = conn.sock.send(conn.out)
        conn.out = conn.out[sent:]
        if not conn.out:
            self.epoll.modify(conn.fd, select.EPOLLIN)

    def drop(self, conn: "Conn", now: float) -> None:
        """A lost connection: its outstanding requests are errors; reconnected later (a retry)."""
        sec = self.second(max(int(now - self.t0), 0))
        for is_get, _ in conn.outstanding():
            sec["err"][0 if is_get else 1] += 1
        conn.inflight.clear()
        conn.kinds, conn.kpos, conn.expected = (), 0, None
        with contextlib.suppress(OSError, ValueError):
            self.epoll.unregister(conn.fd)
        with contextlib.suppress(OSError):
            conn.sock.close()
        self.by_fd.pop(conn.fd, None)
        conn.lost_at = now
        self.lost.append(conn)

    def reconnect(self, now: float, second: int) -> None:
        for conn in list(self.lost):
            if now - conn.lost_at < RECONNECT_EVERY:
                continue
            self.lost.remove(conn)
            self.second(second)["retries"] += 1
            try:
                sock = connect(self.cfg, RECONNECT_EVERY)
            except (OSError, resp_wire.RedisError):
                conn.lost_at = now
                self.lost.append(conn)
                continue
            conn.sock, conn.fd, conn.buf, conn.out = sock, sock.fileno(), b"", b""
            conn.next_due = max(conn.next_due, now)
            self.by_fd[conn.fd] = conn
            self.epoll.register(conn.fd, select.EPOLLIN)
            self.try_send(conn, now)

    # -- receiving -------------------------------------------------------------------------------------

    def record(self, sec: Dict[str, Any], op: int, took: float, n: int = 1) -> None:
        bucket = bucket_of(took)
        hist = sec["h"][op]
        hist[bucket] = hist.get(bucket, 0) + n
        sec["ops"][op] += n

    def received(self, conn: "Conn", data: bytes, t_read: float) -> None:
        index = int(t_read - self.t0)
        if index == self.cur_index:
            sec = self.cur_sec
        else:
            sec = self.cur_sec = self.second(index)
            self.cur_index = index
        if not self.constant:
            expected, conn.expected = conn.expected, None
            if expected is not None and not conn.buf and data == expected:   # the whole batch, all as expected
                took = t_read - conn.sent_at
                gets = conn.gets
                sets = len(conn.kinds) - gets
                if gets:
                    self.record(sec, 0, took, gets)
                if sets:
                    self.record(sec, 1, took, sets)
                conn.kinds, conn.kpos = (), 0
                if self.defer is not None:
                    self.defer.append(conn)
                elif t_read < self.t_end:   # try_send(), inlined
                    try:
                        self.send(conn, t_read)
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        self.drop(conn, t_read)
                return
            if not conn.first_read:
                conn.first_read = t_read
        buf = conn.buf + data if conn.buf else data
        if self.constant:
            flags, used = replies(buf, len(conn.inflight))
            for error in flags:
                is_get, started = conn.inflight.popleft()
                if error:
                    sec["err"][0 if is_get else 1] += 1
                else:
                    self.record(sec, 0 if is_get else 1, t_read - started)
        else:
            flags, used = replies(buf, len(conn.kinds) - conn.kpos)
            took = conn.first_read - conn.sent_at   # a batch's replies over several reads: from its first
            for error in flags:
                op = 0 if conn.kinds[conn.kpos] else 1
                conn.kpos += 1
                if error:
                    sec["err"][op] += 1
                else:
                    self.record(sec, op, took)
        conn.buf = buf[used:] if used < len(buf) else b""
        if self.constant:
            if len(conn.inflight) < self.depth:
                self.try_send(conn, t_read)
        elif conn.kpos >= len(conn.kinds):
            if self.defer is not None:
                self.defer.append(conn)
            else:
                self.try_send(conn, t_read)

    # -- the loop --------------------------------------------------------------------------------------

    def finish(self, flushed: int, unfinished: int) -> None:
        while flushed < self.seconds:
            write_all(self.out_fd, self.pop_line(flushed))
            flushed += 1
        write_all(self.out_fd, (json.dumps({"done": 1, "unfinished": unfinished}) + "\n").encode())
        for conn in self.by_fd.values():
            with contextlib.suppress(OSError):
                conn.sock.close()
        self.epoll.close()

    def run(self) -> None:
        if not self.constant and len(self.by_fd) == 1:
            resp_single.run_single(self)
            return
        perf = time.perf_counter
        t0, t_end, by_fd, epoll, constant, depth = self.t0, self.t_end, self.by_fd, self.epoll, self.constant, \
            self.depth
        parent = os.getppid()
        now = perf()
        if now < t0:
            time.sleep(t0 - now)
        now = perf()
        for conn in list(by_fd.values()):
            self.try_send(conn, now)
        view = memoryview(bytearray(RECV_BYTES))
        flushed = 0   # seconds already sent to the parent
        defer = self.defer = None if constant else []
        while True:
            now = perf()
            if now >= t_end:
                break
            boundary = t0 + flushed + 1
            if now >= boundary:
                if os.getppid() != parent:
                    return
                write_all(self.out_fd, self.pop_line(flushed))
                flushed += 1
                self.reconnect(now, flushed)
                continue
            timeout = boundary - now
            if constant:
                soonest = min((c.next_due for c in by_fd.values() if len(c.inflight) < depth), default=boundary)
                timeout = min(timeout, max(soonest - now, 0.0))
            events = epoll.poll(timeout)
            # closed loop: a batch counts until its own read, which starts after the reads before it in the
            # wake-up, and the answered connections' next batches go out after all of them (defer): so a read
            # waits on other reads only (a few µs each), as redis-benchmark's readHandler stamps it, not on other
            # connections' writes (a loopback send is ~15 µs). Constant rate: every reply epoll reports was there
            # when it returned and counts until then.
            t_poll = perf()
            for fd, mask in events:
                conn = by_fd.get(fd)
                if conn is None:
                    continue
                if mask & select.EPOLLOUT:
                    try:
                        self.flush(conn)
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        self.drop(conn, perf())
                        continue
                    if not mask & (select.EPOLLIN | select.EPOLLERR | select.EPOLLHUP):
                        continue
                t_read = t_poll if constant else perf()
                try:
                    data = view[:conn.sock.recv_into(view)].tobytes()
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    self.received(conn, data, t_read)
                else:
                    self.drop(conn, t_read)
            if defer:
                now = perf()
                for conn in defer:
                    if by_fd.get(conn.fd) is conn:
                        self.try_send(conn, now)
                del defer[:]
            if constant:
                now = perf()
                for conn in list(by_fd.values()):
                    if conn.next_due <= now and len(conn.inflight) < depth:
                        self.try_send(conn, now)
        self.finish(flushed, self.unfinished() if constant else 0)

    def unfinished(self) -> int:
        """Requests meant to start over a second before the end and still unanswered (never sent, as the server
        did not keep up, or sent and not answered): reported beside the counts, so that a stall at the end of a
        step is not hidden."""
        cut = self.t_end - 1.0
        count = 0
        for conn in list(self.by_fd.values()) + self.lost:
            count += sum(1 for _, started in conn.inflight if started < cut)
            if conn.next_due < cut:
                count += int(math.ceil((cut - conn.next_due) / conn.interval))
        return count
