"""The built-in Redis load generator on one connection in closed loop (resp_loop.Loop.run's case): blocking send
and recv, no epoll call between them (a third of the system calls per batch), and for batches of one command
a hot path in local names. SO_RCVTIMEO wakes the loop for the per-second lines when the server stalls."""
import os
import socket
import struct
import time
from typing import Any, Dict, List, Optional  # noqa: F401 - some only in type comments

from .resp_conn import RECV_BYTES, SINGLE_WAKE, Conn, _perf, bucket_of, write_all


def run_single(loop: Any) -> None:
    """Closed loop on one connection: blocking send and recv, no epoll call between them (a third of the
    system calls per batch); SO_RCVTIMEO wakes the loop for the per-second lines when the server stalls."""
    perf = time.perf_counter
    t0, t_end = loop.t0, loop.t_end
    parent = os.getppid()
    conn = next(iter(loop.by_fd.values()))
    blocking(conn)
    now = perf()
    if now < t0:
        time.sleep(t0 - now)
    view = memoryview(bytearray(RECV_BYTES))
    flushed = 0
    if loop.pure:
        handed = single_pure(loop, conn, view, parent)
        if handed is None:   # the parent is gone
            return
        flushed = handed
    else:
        loop.try_send(conn, perf())
    while True:
        now = perf()
        if now >= t_end:
            break
        if now >= t0 + flushed + 1:
            if os.getppid() != parent:
                return
            write_all(loop.out_fd, loop.pop_line(flushed))
            flushed += 1
            if loop.lost:
                loop.reconnect(now, flushed)
                if not loop.lost:
                    conn = next(iter(loop.by_fd.values()))
                    blocking(conn)
            continue
        if loop.lost:
            time.sleep(min(t0 + flushed + 1, t_end) - now)
            continue
        try:
            if conn.out:
                conn.sock.sendall(conn.out)
                conn.out = b""
            data = view[:conn.sock.recv_into(view)].tobytes()
        except (BlockingIOError, InterruptedError):
            continue   # SO_RCVTIMEO: nothing came in SINGLE_WAKE seconds
        except OSError:
            data = b""
        t_read = perf()
        if data:
            loop.received(conn, data, t_read)
        else:
            loop.drop(conn, t_read)
    loop.finish(flushed, 0)

def single_pure(loop: Any, conn: Conn, view: memoryview, parent: int) -> Optional[int]:
    """The hot path of run_single for batches of one command (GETs only or SETs only): send a batch, read its
    replies, count them, all in local names. Anything but the whole batch's replies in one read (a partial
    read, an error, a lost connection) is handed to the general code (received / drop) and so is the rest
    of the step. The seconds already written to the parent, or None when the parent is gone."""
    perf, rnd = _perf, loop.rnd
    keyspace, depth, template, expected = loop.keyspace, loop.depth, loop.batch_t, loop.batch_expected
    op = 0 if loop.batch_gets else 1
    sock = conn.sock
    recv_into, sendall = sock.recv_into, sock.sendall
    t0, t_end, seconds = loop.t0, loop.t_end, loop.seconds
    flushed = 0
    boundary = t0 + 1
    index = -1
    hist, ops = {}, [0, 0]   # type: Dict[int, int], List[int]
    take = loop.draws.take
    data = template % (int(rnd() * keyspace) if depth == 1 else take(depth))
    while True:
        sent_at = perf()   # from the write, as redis-benchmark counts: not the batch's making
        try:
            sendall(data)
        except OSError:
            got = b""
            t_read = perf()
        else:
            # the next batch is made while the server answers this one: off the round trip (3 µs of a batch of
            # 16 GETs' ~50, which a lone connection waits for)
            data = template % (int(rnd() * keyspace) if depth == 1 else take(depth))
            while True:   # the replies, or a wake-up (SO_RCVTIMEO) for the per-second lines
                try:
                    got = view[:recv_into(view)].tobytes()
                except (BlockingIOError, InterruptedError):
                    got = None
                except OSError:
                    got = b""
                t_read = perf()
                if t_read >= boundary:
                    if os.getppid() != parent:
                        return None
                    while t_read >= boundary and flushed < seconds:
                        write_all(loop.out_fd, loop.pop_line(flushed))
                        flushed += 1
                        boundary += 1
                    index = -1   # the counted second may be written: look it up again
                if got is not None:
                    break
                if t_read >= t_end:
                    return flushed
        if got == expected:
            if int(t_read - t0) != index:
                index = int(t_read - t0)
                sec = loop.second(index)
                hist, ops = sec["h"][op], sec["ops"]
            bucket = bucket_of(t_read - sent_at)
            hist[bucket] = hist.get(bucket, 0) + depth
            ops[op] += depth
            if t_read >= t_end:
                return flushed
            continue
        # the general code goes on from this batch, as if its send() had sent it
        conn.kinds, conn.kpos, conn.gets, conn.expected = loop.batch_kinds, 0, loop.batch_gets, None
        conn.sent_at, conn.first_read, conn.out, conn.buf = sent_at, 0.0, b"", b""
        if got:
            loop.received(conn, got, t_read)
        else:
            loop.drop(conn, t_read)
        return flushed

def blocking(conn: Conn) -> None:
    conn.sock.settimeout(None)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO,
                         struct.pack("ll", 0, int(SINGLE_WAKE * 1e6)))
