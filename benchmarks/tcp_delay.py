"""A TCP relay that holds every byte a fixed time each way: a server made that much farther away, on a machine
whose kernel has no `tc netem` (the Redis benchmark's --link-delay-ms; the dns benchmarks' UDP relay is
benchmarks/dns_delay.py).

    python benchmarks/tcp_delay.py LISTEN_ADDRESS UPSTREAM_ADDRESS UPSTREAM_PORT DELAY_MS_EACH_WAY

Prints the port it listens on (chosen by the kernel), then relays until killed: each accepted connection gets
a connection of its own to the upstream (Nagle off on both, as Redis and its clients have it). What one side
sends is read as it comes and written to the other `DELAY_MS_EACH_WAY` after it was read, in the order it came
(one delay for all: first in, first out); the relay's own wake-ups add to that, alike for every client that goes
through it. A connection closed on one side is closed on the other once what was in flight has left.
"""
from __future__ import annotations

import collections
import select
import socket
import sys
import time

READ_BYTES = 1 << 18


class Relay:
    def __init__(self, listen: socket.socket, upstream: tuple[str, int], delay: float) -> None:
        self.listen, self.upstream, self.delay = listen, upstream, delay
        # select, not epoll: epoll waits whole milliseconds, which would add up to one to every delay
        self.readers: set[socket.socket] = {listen}
        self.peer: dict[socket.socket, socket.socket] = {}     # each open socket -> the one its bytes go to
        # (when, socket to write to, bytes or None for a close)
        self.due: collections.deque = collections.deque()
        self.backlog: dict[socket.socket, bytearray] = {}     # bytes a socket would not take yet

    def accept(self) -> None:
        client, _ = self.listen.accept()
        server = socket.create_connection(self.upstream)
        for sock in (client, server):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
            self.readers.add(sock)
        self.peer[client], self.peer[server] = server, client

    def read(self, sock: socket.socket) -> None:
        to, when = self.peer.get(sock), time.monotonic() + self.delay
        if to is None:      # closed meanwhile
            return
        try:
            data = sock.recv(READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.due.append((when, to, data))
        else:     # its side closed: the other side is closed once what was read before has left
            self.readers.discard(sock)
            self.due.append((when, to, None))

    def write(self, sock: socket.socket, data: bytes | None) -> None:
        if sock not in self.peer:      # closed meanwhile
            return
        if data is None:
            self.close(sock)
            return
        pending = self.backlog.get(sock)
        if pending is not None:        # bytes already wait: these go behind them
            pending += data
            return
        try:
            sent = sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self.close(sock)
            return
        if sent < len(data):
            self.backlog[sock] = bytearray(data[sent:])

    def drain(self, sock: socket.socket) -> None:
        pending = self.backlog.get(sock)
        if pending is None:
            return
        try:
            sent = sock.send(pending)
        except BlockingIOError:
            return
        except OSError:
            self.close(sock)
            return
        del pending[:sent]
        if not pending:
            del self.backlog[sock]

    def close(self, sock: socket.socket) -> None:
        """Both ends of a relayed connection."""
        other = self.peer.get(sock)
        for one in (sock, other) if other is not None else (sock,):
            self.peer.pop(one, None)
            self.backlog.pop(one, None)
            self.readers.discard(one)
            one.close()

    def run(self) -> None:
        while True:
            timeout = max(0.0, self.due[0][0] - time.monotonic()) if self.due else None
            readable, writable, _ = select.select(list(self.readers), list(self.backlog), [], timeout)
            for sock in writable:
                self.drain(sock)
            for sock in readable:
                if sock is self.listen:
                    self.accept()
                else:
                    self.read(sock)
            now = time.monotonic()
            while self.due and self.due[0][0] <= now:
                _when, sock, data = self.due.popleft()
                self.write(sock, data)


def main() -> int:
    listen_address, upstream_address, upstream_port, delay_ms = sys.argv[1:5]
    listen = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listen.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listen.bind((listen_address, 0))
    listen.listen(512)
    print(listen.getsockname()[1], flush=True)
    Relay(listen, (upstream_address, int(upstream_port)), float(delay_ms) / 1000.0).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
