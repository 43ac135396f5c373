"""A UDP relay that holds every datagram a fixed time each way: a resolver made that much farther away, where the
kernel has no `tc netem` (benchmarks/dns_link.py starts it in the resolver's namespace when netem is missing).

    python benchmarks/dns_delay.py LISTEN_ADDRESS UPSTREAM_ADDRESS UPSTREAM_PORT DELAY_MS_EACH_WAY

Prints the port it listens on (chosen by the kernel), then relays until killed: each client (address and
port) gets a socket of its own towards the upstream, so that the answers find their way back. Every datagram
leaves `DELAY_MS_EACH_WAY` after it was read, in the order it came (one delay for all: first in, first out);
the relay's own wake-ups add to that, alike for every client that goes through it at the same time.
"""
from __future__ import annotations

import collections
import select
import socket
import sys
import time


def relay(listen: socket.socket, upstream: tuple[str, int], delay: float) -> None:
    local_address = listen.getsockname()[0]
    towards: dict[tuple[str, int], socket.socket] = {}       # client -> its socket to the upstream
    back: dict[socket.socket, tuple[str, int]] = {}           # that socket -> its client
    due: collections.deque = collections.deque()              # (when, socket to send from, datagram, to)
    watched = [listen]
    while True:
        timeout = max(0.0, due[0][0] - time.monotonic()) if due else None
        readable, _, _ = select.select(watched, [], [], timeout)
        for sock in readable:
            for _ in range(256):       # drained in batches: one wake-up for many datagrams under load
                try:
                    data, peer = sock.recvfrom(65535)
                except BlockingIOError:
                    break
                when = time.monotonic() + delay
                if sock is listen:
                    out = towards.get(peer)
                    if out is None:
                        out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                        out.bind((local_address, 0))
                        out.connect(upstream)
                        out.setblocking(False)
                        towards[peer], back[out] = out, peer
                        watched.append(out)
                    due.append((when, out, data, None))
                else:
                    due.append((when, listen, data, back[sock]))
        now = time.monotonic()
        while due and due[0][0] <= now:
            _when, sock, data, to = due.popleft()
            try:
                if to is None:
                    sock.send(data)
                else:
                    sock.sendto(data, to)
            except (BlockingIOError, ConnectionRefusedError):
                pass     # a full buffer or a gone peer: the datagram is lost, as on a network


def main() -> int:
    listen_address, upstream_address, upstream_port, delay_ms = sys.argv[1:5]
    listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listen.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    listen.bind((listen_address, 0))
    listen.setblocking(False)
    print(listen.getsockname()[1], flush=True)
    relay(listen, (upstream_address, int(upstream_port)), float(delay_ms) / 1000.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
