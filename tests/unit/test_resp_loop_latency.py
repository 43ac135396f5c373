"""The built-in Redis generator times a pipelined batch as redis-benchmark does: every reply of the batch from
the batch's write to the first read of its replies, however many reads the replies take."""
from __future__ import annotations

import socket

import pytest

from remote.agent import resp_loop


def test_a_batch_read_in_two_pieces_counts_every_reply_until_the_first_read() -> None:
    ours, server = socket.socketpair()
    ours.setblocking(False)
    cfg = {"keyspace": 10, "get_ratio": 1.0, "pipeline": 4, "rate": 0, "seconds": 1, "prefix": b"k:",
           "value_size": 3}
    conn = resp_loop.Conn(ours, 0.0, 0.0)
    loop = resp_loop.Loop(cfg, {conn.fd: conn}, 99.0, -1, 1)
    loop.t_end = 0.0   # nothing more is sent after the batch: the test looks at its replies only
    try:
        conn.kinds, conn.kpos, conn.gets, conn.expected = (True,) * 4, 0, 4, loop.batch_expected
        conn.sent_at = 99.0   # as send() leaves it
        reply = b"$3\r\nxxx\r\n"
        loop.received(conn, reply * 2 + b"$3\r\nx", 99.002)   # two replies and a piece, 2 ms after the write
        loop.received(conn, b"xx\r\n" + reply, 99.010)         # the rest, 8 ms later
        sec = loop.seconds_data[0]
        assert sec["ops"][0] == 4 and sec["err"] == [0, 0]
        first_read = resp_loop.bucket_of(99.002 - 99.0)
        assert sec["h"][0] == {first_read: 4}                 # all four at 2 ms (not two at 2 and two at 10)
    finally:
        server.close()
        ours.close()
        loop.epoll.close()


def test_over_several_connections_the_next_batches_wait_for_the_wake_ups_reads() -> None:
    # redis-benchmark's event loop: the replies read in one pass, the next requests written on the next, so a
    # reply read late in a wake-up waits on the reads before it only, not on other connections' writes
    pairs = [socket.socketpair() for _ in range(2)]
    cfg = {"keyspace": 10, "get_ratio": 1.0, "pipeline": 1, "rate": 0, "seconds": 5, "prefix": b"k:",
           "value_size": 3}
    conns = [resp_loop.Conn(ours, 0.0, 0.0) for ours, _ in pairs]
    loop = resp_loop.Loop(cfg, {c.fd: c for c in conns}, 0.0, -1, 1)
    loop.defer = []
    try:
        for conn in conns:
            conn.sock.setblocking(False)
            conn.kinds, conn.kpos, conn.gets, conn.expected = (True,), 0, 1, loop.batch_expected
            conn.sent_at = 1.0
        loop.received(conns[0], b"$3\r\nxxx\r\n", 1.001)
        loop.received(conns[1], b"$3\r\nxxx\r\n", 1.003)
        for _, server in pairs:
            server.setblocking(False)
            with pytest.raises(BlockingIOError):   # nothing written yet
                server.recv(100)
        assert loop.defer == conns
        assert loop.seconds_data[1]["h"][0] == {resp_loop.bucket_of(0.001): 1, resp_loop.bucket_of(0.003): 1}
    finally:
        for ours, server in pairs:
            ours.close()
            server.close()
        loop.epoll.close()
