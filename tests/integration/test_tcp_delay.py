"""The Redis benchmark's delaying TCP relay (benchmarks/tcp_delay.py) against a real TCP server on loopback: what
comes back is what the server sent, in order and whole; nothing comes back sooner than the delay both ways; a
connection closed by the client is closed towards the server; nothing is left once the relay is stopped."""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.processes import stop_group

RELAY = Path(__file__).resolve().parents[2] / "benchmarks" / "tcp_delay.py"
EACH_WAY_MS = 20.0


class EchoServer:
    """A TCP server on loopback that sends back what it reads; counts the connections that reached their end."""

    def __init__(self) -> None:
        self.listen = socket.create_server(("127.0.0.1", 0))
        self.port = self.listen.getsockname()[1]
        self.ended = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listen.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    def _echo(self, conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)
        with self.lock:
            self.ended += 1

    def close(self) -> None:
        self.listen.close()


@pytest.fixture
def relayed():
    server = EchoServer()
    process = subprocess.Popen([sys.executable, str(RELAY), "127.0.0.1", "127.0.0.1", str(server.port),
                                f"{EACH_WAY_MS:g}"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               start_new_session=True)
    try:
        port = int(process.stdout.readline())
        yield server, port, process
    finally:
        stop_group(process)
        process.stdout.close()
        server.close()


def _receive(sock: socket.socket, size: int) -> bytes:
    got = bytearray()
    while len(got) < size:
        chunk = sock.recv(size - len(got))
        assert chunk, "the relay closed the connection early"
        got += chunk
    return bytes(got)


def test_the_relay_hands_back_the_servers_bytes_whole_in_order_and_never_sooner_than_the_delay(relayed) -> None:
    server, port, process = relayed
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        for size in (1, 100, 70_000, 1_000_000):     # one byte to more than one read's worth
            payload = bytes((i * 7 + size) % 251 for i in range(size))
            sent = time.monotonic()
            sock.sendall(payload)
            assert _receive(sock, size) == payload
            # a lower bound only: a loaded machine makes it later, never sooner
            assert time.monotonic() - sent >= 2 * EACH_WAY_MS / 1000
        # many small writes without waiting: each comes back once, in the order sent
        pieces = [b"%06d;" % i for i in range(2000)]
        for piece in pieces:
            sock.sendall(piece)
        assert _receive(sock, sum(map(len, pieces))) == b"".join(pieces)
    deadline = time.monotonic() + 30
    while server.ended < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.ended == 1, "the client's close did not reach the server"
    assert process.poll() is None, "the relay ended with its client"


def test_several_connections_keep_their_own_bytes(relayed) -> None:
    _server, port, _process = relayed
    socks = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(5)]
    try:
        for n, sock in enumerate(socks):
            sock.sendall(b"connection %d\n" % n)
        for n, sock in enumerate(socks):
            expected = b"connection %d\n" % n
            assert _receive(sock, len(expected)) == expected
    finally:
        for sock in socks:
            sock.close()


def test_nothing_is_left_once_the_relay_is_stopped(relayed) -> None:
    _server, port, process = relayed
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"x")
        assert _receive(sock, 1) == b"x"
        stop_group(process)
        assert process.poll() is not None
        sock.settimeout(10)
        assert sock.recv(1) == b""      # its end of the connection went with it
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
