"""The built-in Redis load generator's connections: a connection's state in the loop, connecting past AUTH and
SELECT, and the constants the loops share (resp_loop, resp_single)."""
import collections
import os
import socket
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from . import resp_wire
from .resp_hist import bucket_of  # noqa: F401 - the loops' door to it

RECV_BYTES = 1 << 18      # one read takes up to this; into a buffer kept for the loop's life (a fresh one per
                          # recv() is above malloc's mmap threshold: an mmap, mremap and munmap per reply)
RECONNECT_EVERY = 1.0     # seconds between attempts on a lost connection
SINGLE_WAKE = 0.05        # seconds a lone connection's recv waits before the loop looks at the clock
_perf = time.perf_counter


def value_of(size: int) -> bytes:
    return b"x" * size


class Conn:
    __slots__ = ("sock", "fd", "buf", "out", "kinds", "kpos", "sent_at", "first_read", "expected", "gets",
                 "inflight", "next_due", "interval", "lost_at")

    def __init__(self, sock: socket.socket, interval: float, first_due: float) -> None:
        self.sock = sock
        self.fd = sock.fileno()
        self.buf = b""
        self.out = b""            # what the socket did not take yet (large values, deep pipelines)
        # closed loop: the batch in flight: its ops (True = GET) in order, how many answered, when it was sent,
        # its replies if all go well and how many GETs it holds
        self.kinds = ()           # type: Any
        self.kpos = 0
        self.sent_at = 0.0
        self.first_read = 0.0     # the batch's first read: every reply of it counts until then (redis-benchmark)
        self.expected = None      # type: Optional[bytes]
        self.gets = 0
        # constant rate: (is_get, intended start) of each request in flight; the next intended start
        self.inflight = collections.deque()  # type: collections.deque
        self.interval = interval
        self.next_due = first_due
        self.lost_at = 0.0

    def outstanding(self) -> List[Tuple[bool, float]]:
        if self.inflight:
            return list(self.inflight)
        return [(kind, self.sent_at) for kind in self.kinds[self.kpos:]]


def _empty() -> Dict[str, Any]:
    return {"ops": [0, 0], "err": [0, 0], "h": [{}, {}], "retries": 0}


def connect(cfg: Dict[str, Any], timeout: float = resp_wire.CONNECT_TIMEOUT) -> socket.socket:
    """A connection past AUTH and SELECT, non-blocking for the loop."""
    client = resp_wire.Client(cfg["host"], int(cfg["port"]), cfg.get("password") or "", cfg.get("user") or "",
                              int(cfg.get("db") or 0), timeout=timeout)
    client.sock.setblocking(False)   # the handshake's replies are all read: nothing is left buffered
    return client.sock


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
