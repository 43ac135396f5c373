"""The mail storm's sender against small in-process SMTP servers: every message arrives once and whole,
in both session modes, with QUIT sent with the last message where PIPELINING allows it, never pipelined
to a server that does not offer it, and nothing lost when replies or messages exceed one read or write."""
from __future__ import annotations

import contextlib
import re
import socketserver
import threading
from collections.abc import Iterator

import pytest

from remote.agent import mail_poll, mail_sender, mail_session, mail_smtp

SINK = "sink@benchbay.invalid"


class _Handler(socketserver.BaseRequestHandler):
    """Reads with its own buffer, so it knows what the client had sent before each reply."""

    def handle(self) -> None:
        srv, sock = self.server, self.request
        sock.sendall(b"220 tiny ESMTP\r\n")
        buf = b""
        in_data = False
        body: list[bytes] = []
        while True:
            while b"\n" not in buf:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            line += b"\n"
            if in_data:
                if line == b".\r\n":
                    in_data = False
                    with srv.lock:
                        srv.bodies.append(b"".join(body))
                        srv.quit_with_data += buf.startswith(b"QUIT")
                    body = []
                    sock.sendall(b"250 2.0.0 queued\r\n")
                else:
                    body.append(line)
                continue
            verb = line[:4].upper()
            with srv.lock:   # a command with more behind it, unanswered: pipelined
                srv.commands.append((verb, bool(buf)))
            if verb == b"EHLO":
                lines = [b"250-tiny"] + [b"250-X-FILLER-" + b"x" * 5000 for _ in range(srv.filler)]
                lines.append(b"250 PIPELINING" if srv.pipelining else b"250 8BITMIME")
                sock.sendall(b"\r\n".join(lines) + b"\r\n")
            elif verb == b"DATA":
                in_data = True
                sock.sendall(b"354 go ahead\r\n")
            elif verb == b"QUIT":
                sock.sendall(b"221 bye\r\n")
                return
            else:
                sock.sendall(b"250 ok\r\n")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, pipelining: bool, filler: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.pipelining, self.filler = pipelining, filler
        self.lock = threading.Lock()
        self.bodies: list[bytes] = []
        self.commands: list[tuple[bytes, bool]] = []
        self.quit_with_data = 0


@contextlib.contextmanager
def server(pipelining: bool = True, filler: int = 0) -> Iterator[_Server]:
    srv = _Server(pipelining, filler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


def messages(first: int, count: int, size: int) -> Iterator[bytes]:
    for serial in range(first, first + count):
        head = f"Subject: message {serial}\r\n\r\n".encode()
        yield head + b"y" * (size - len(head) - 2) + b"\r\n"


def storm(srv: _Server, per_message: bool, count: int = 24, sessions: int = 3,
          size: int = 600) -> mail_smtp.Stats:
    stats = mail_smtp.Stats()
    batches = [messages(1 + i * count, count // sessions, size) for i in range(sessions)]
    mail_sender.storm("127.0.0.1", srv.server_address[1], "benchbay.invalid", 10.0, "", SINK, batches,
                      per_message, stats, threading.Event())
    return stats


def serials(srv: _Server) -> list[int]:
    return sorted(int(re.match(rb"Subject: message (\d+)", b).group(1)) for b in srv.bodies)


@pytest.mark.parametrize("per_message", [True, False])
@pytest.mark.parametrize("pipelining", [True, False])
def test_every_message_arrives_once_and_whole(per_message: bool, pipelining: bool) -> None:
    with server(pipelining) as srv:
        stats = storm(srv, per_message)
    assert (stats.accepted, stats.failures) == (24, {})
    assert serials(srv) == [s for i in range(3) for s in range(1 + i * 24, 1 + i * 24 + 8)]
    assert all(len(b) == 600 for b in srv.bodies)
    sessions = 24 if per_message else 3
    assert [verb for verb, _ in srv.commands].count(b"QUIT") == sessions   # every session said goodbye
    if pipelining:   # QUIT went out with the end of the session's last message: one round trip less
        assert srv.quit_with_data == sessions
    else:            # a server without PIPELINING never had a command waiting behind another
        assert srv.quit_with_data == 0 and not any(waited for _, waited in srv.commands)


def test_replies_and_messages_longer_than_one_read_or_write() -> None:
    # an EHLO reply of about 100 kB (more than one read of the sender) and 1 MiB messages (more than the
    # socket takes in one write): with edge-triggered readiness nothing may be left waiting
    with server(filler=20) as srv:
        stats = storm(srv, per_message=True, count=6, sessions=2, size=1 << 20)
    assert (stats.accepted, stats.failures) == (6, {})
    assert all(len(b) == 1 << 20 for b in srv.bodies)


def test_the_poller_is_epoll_here_and_the_fallback_works_too(monkeypatch) -> None:
    assert isinstance(mail_poll.make_poller(), mail_poll.EpollPoller)   # Linux
    monkeypatch.setattr(mail_session, "make_poller", mail_poll.SelectorPoller)
    with server() as srv:
        stats = storm(srv, per_message=True)
    assert (stats.accepted, stats.failures) == (24, {})


def test_multi_line_replies_incomplete_and_malformed() -> None:
    from remote.agent.mail_replies import joined, multiline, offers_pipelining

    ehlo = b"250-mx.example\r\n250-SIZE 10240000\r\n250-pipelining\r\n250 8BITMIME\r\n"
    (code, text), rest = multiline(ehlo + b"220 next")
    assert (code, rest) == (250, b"220 next") and offers_pipelining(text)
    assert joined(text) == "mx.example SIZE 10240000 pipelining 8BITMIME"
    assert not offers_pipelining(multiline(b"250-mx\r\n250-X-PIPELINING-NOT\r\n250 OK\r\n")[0][1])
    assert multiline(ehlo[:40]) == (None, ehlo[:40])                     # wait for the rest
    with pytest.raises(ValueError, match="not an SMTP reply"):
        multiline(b"250-mx\r\nHTTP/1.1 400 Bad Request\r\n")
    with pytest.raises(ValueError, match="too long"):
        multiline(b"250-mx\r\n250-" + b"x" * 9000)
