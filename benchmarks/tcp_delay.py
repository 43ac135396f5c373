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
        self.peer: dict[int, socket.socket] = {}         # fd -> the socket its bytes go to
        self.socks: dict[int, socket.socket] = {}
        # (when, socket to write to, bytes or None for a close): the socket, not its number, which a closed
        # connection's successor may get
        self.due: collections.deque = collections.deque()
        self.backlog: dict[int, bytearray] = {}           # fd -> bytes its socket would not take yet

    def accept(self) -> None:
        client, _ = self.listen.accept()
        server = socket.create_connection(self.upstream)
        for sock in (client, server):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
            self.socks[sock.fileno()] = sock
            self.readers.add(sock)
        self.peer[client.fileno()], self.peer[server.fileno()] = server, client

    def read(self, fd: int) -> None:
        sock, when = self.socks.get(fd), time.monotonic() + self.delay
        if sock is None:
            return
        try:
            data = sock.recv(READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        to = self.peer[fd]
        if data:
            self.due.append((when, to, data))
        else:     # its side closed: the other side is closed once what was read before has left
            self.readers.discard(sock)
            self.due.append((when, to, None))

    def write(self, sock: socket.socket, data: bytes | None) -> None:
        fd = sock.fileno()
        if fd < 0:      # closed meanwhile
            return
        if data is None:
            self.close(fd)
            return
        pending = self.backlog.get(fd)
        if pending is not None:        # bytes already wait: these go behind them
            pending += data
            return
        try:
            sent = sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self.close(fd)
            return
        if sent < len(data):
            self.backlog[fd] = bytearray(data[sent:])

    def drain(self, fd: int) -> None:
        sock, pending = self.socks.get(fd), self.backlog.get(fd)
        if sock is None or pending is None:
            return
        try:
            sent = sock.send(pending)
        except BlockingIOError:
            return
        except OSError:
            self.close(fd)
            return
        del pending[:sent]
        if not pending:
            del self.backlog[fd]

    def close(self, fd: int) -> None:
        other = self.peer.pop(fd, None)
        both = [fd] + ([other.fileno()] if other is not None and other.fileno() >= 0 else [])
        for one in both:
            self.peer.pop(one, None)
            self.backlog.pop(one, None)
            sock = self.socks.pop(one, None)
            if sock is not None:
                self.readers.discard(sock)
                sock.close()

    def run(self) -> None:
        while True:
            timeout = max(0.0, self.due[0][0] - time.monotonic()) if self.due else None
            writers = [self.socks[fd] for fd in self.backlog]
            readable, writable, _ = select.select(list(self.readers), writers, [], timeout)
            for sock in writable:
                self.drain(sock.fileno())
            for sock in readable:
                if sock is self.listen:
                    self.accept()
                else:
                    self.read(sock.fileno())
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
