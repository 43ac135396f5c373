"""A truncated UDP answer (TC bit) asked again over TCP, as a stub resolver does: connect, send the framed query,
read one framed answer; in the replay's own poll loop, many at once, each with its deadline."""
import errno
import os
import select
import socket
from typing import Any, Callable, Dict, List, Optional  # noqa: F401 - some only in type comments

from . import dns_wire

RECV_SIZE = 65535
# finish(lane, seq, when, rcode or None for a timeout, via)
Finish = Callable[[Any, int, float, Optional[int], str], None]


class TcpAsk:
    """One query asked over TCP."""

    def __init__(self, lane: Any, seq: int, message: bytes, deadline: float) -> None:
        self.lane, self.seq, self.deadline = lane, seq, deadline
        self.sock = socket.socket(lane.family, socket.SOCK_STREAM)
        self.sock.setblocking(False)
        self.out = dns_wire.frame(message)
        self.inbuf = b""
        self.qid = dns_wire.HEADER.unpack_from(message, 0)[0]
        code = self.sock.connect_ex(lane.resolver)
        if code not in (0, errno.EINPROGRESS):
            raise OSError(code, os.strerror(code))


class TcpAsks:
    """The queries over TCP of one replay, registered with its poller."""

    def __init__(self, poller: Any, finish: Finish, clock: Callable[[], float]) -> None:
        self.poller, self.finish, self.clock = poller, finish, clock
        self.asks = {}  # type: Dict[int, TcpAsk]

    def __bool__(self) -> bool:
        return bool(self.asks)

    def start(self, lane: Any, seq: int, message: bytes, now: float, wait: float) -> None:
        try:
            ask = TcpAsk(lane, seq, message, now + wait)
        except OSError:
            self.finish(lane, seq, now, None, "tcp")
            return
        self.asks[ask.sock.fileno()] = ask
        self.poller.register(ask.sock.fileno(), select.POLLOUT)

    def earliest(self, wake: float) -> float:
        for ask in self.asks.values():
            if ask.deadline < wake:
                wake = ask.deadline
        return wake

    def event(self, fd: int, event: int, now: float) -> None:
        ask = self.asks.get(fd)
        if ask is None:
            return
        done = False
        try:
            if ask.out and event & (select.POLLOUT | select.POLLERR | select.POLLHUP):
                sent = ask.sock.send(ask.out)
                ask.out = ask.out[sent:]
                if not ask.out:
                    self.poller.modify(fd, select.POLLIN)
            elif event & (select.POLLIN | select.POLLERR | select.POLLHUP):
                chunk = ask.sock.recv(RECV_SIZE)
                now = self.clock()
                if not chunk:
                    raise OSError(errno.ECONNRESET, "closed")
                ask.inbuf += chunk
                messages, ask.inbuf = dns_wire.unframe(ask.inbuf)
                for data in messages:
                    if len(data) >= 12 and dns_wire.HEADER.unpack_from(data, 0)[0] == ask.qid and data[2] & 0x80:
                        self.finish(ask.lane, ask.seq, now, data[3] & 0x0F, "tcp")
                        done = True
                        break
        except (OSError, ValueError):
            self.finish(ask.lane, ask.seq, now, None, "tcp")
            done = True
        if done:
            self._drop(ask)

    def expire(self, now: float) -> None:
        for ask in [a for a in self.asks.values() if a.deadline <= now]:
            self._drop(ask)
            self.finish(ask.lane, ask.seq, now, None, "tcp")

    def _drop(self, ask: TcpAsk) -> None:
        fd = ask.sock.fileno()
        self.poller.unregister(fd)
        del self.asks[fd]
        ask.sock.close()
