"""The mail storm's SMTP client: plain sockets, one session per worker thread, counted by stage.

Stages: connect (TCP), banner, helo, mail, rcpt, data (the DATA command), eod (the reply to the end of
the message). A TCP refusal counts under connect as "refused"; a 4xx or 5xx reply under its stage;
a timeout or a dropped connection as "error". Each message is tried once: a failure is counted, not
retried. Latencies: connect (TCP handshake), banner (connected until the greeting), eod (end of the
message sent until the reply), in seconds.
"""
import contextlib
import socket
import threading
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

STAGES = ("connect", "banner", "helo", "mail", "rcpt", "data", "eod")
KINDS = ("refused", "4xx", "5xx", "error")
LINE_MAX = 8192


class SmtpFailure(Exception):
    """A stage failed: kind is refused, 4xx, 5xx or error; fatal when the session cannot go on."""

    def __init__(self, stage: str, kind: str, detail: str, fatal: bool) -> None:
        Exception.__init__(self, "{} {}: {}".format(stage, kind, detail))
        self.stage, self.kind, self.detail, self.fatal = stage, kind, detail, fatal


class Stats:
    """One worker's counts; merged by the test once every worker is done (or read live for progress)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.accepted = 0
        self.attempted = 0
        self.failures = {}  # type: Dict[str, Dict[str, int]]
        self.latency = {"connect": [], "banner": [], "eod": []}  # type: Dict[str, List[float]]
        self.accept_times = []  # type: List[float]
        self.first_attempt = None  # type: Optional[float]
        self.last_error = ""

    def attempt(self) -> None:
        with self.lock:
            self.attempted += 1
            if self.first_attempt is None:
                self.first_attempt = time.monotonic()

    def accept(self) -> None:
        with self.lock:
            self.accepted += 1
            self.accept_times.append(time.monotonic())

    def fail(self, failure: SmtpFailure) -> None:
        with self.lock:
            stage = self.failures.setdefault(failure.stage, {})
            stage[failure.kind] = stage.get(failure.kind, 0) + 1
            self.last_error = str(failure)

    def latency_add(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.latency[kind].append(seconds)


def merge(parts: List[Stats]) -> Stats:
    out = Stats()
    for part in parts:
        with part.lock:
            out.accepted += part.accepted
            out.attempted += part.attempted
            out.accept_times.extend(part.accept_times)
            for kind, values in part.latency.items():
                out.latency[kind].extend(values)
            for stage, kinds in part.failures.items():
                target = out.failures.setdefault(stage, {})
                for kind, count in kinds.items():
                    target[kind] = target.get(kind, 0) + count
            if part.first_attempt is not None and (out.first_attempt is None or part.first_attempt < out.first_attempt):
                out.first_attempt = part.first_attempt
            out.last_error = part.last_error or out.last_error
    out.accept_times.sort()
    return out


def parse_server(server: str) -> Tuple[str, int]:
    """host:port, [v6]:port or a bare host (port 25)."""
    text = str(server).strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ("" if not rest else None)
        if not sep or port is None:
            raise ValueError("mailstorm: server must be host:port or [ipv6]:port, not {!r}".format(server))
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise ValueError("mailstorm: server needs a host, not {!r}".format(server))
    try:
        number = int(port) if port else 25
    except ValueError:
        raise ValueError("mailstorm: server port must be a number, not {!r}".format(port)) from None
    if not 0 < number < 65536:
        raise ValueError("mailstorm: server port must be 1-65535, not {}".format(number))
    return host, number


def probe(host: str, port: int, timeout: float = 3.0) -> str:
    """"" when something accepts TCP connections on host:port, else why not."""
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    sock.close()
    return ""


class Session:
    """One SMTP session; every method raises SmtpFailure."""

    def __init__(self, host: str, port: int, helo: str, timeout: float, stats: Stats) -> None:
        self.host, self.port, self.helo, self.timeout, self.stats = host, port, helo, timeout, stats
        self.sock = None  # type: Optional[socket.socket]
        self._buf = b""

    def open(self) -> None:
        self._buf = b""
        t0 = time.monotonic()
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except ConnectionRefusedError as exc:
            raise SmtpFailure("connect", "refused", exc.strerror or "refused", True) from None
        except OSError as exc:
            raise SmtpFailure("connect", "error", exc.strerror or str(exc) or type(exc).__name__, True) from None
        t1 = time.monotonic()
        self.stats.latency_add("connect", t1 - t0)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._expect("banner", (220,))
        self.stats.latency_add("banner", time.monotonic() - t1)
        code, _ = self.command("helo", "EHLO " + self.helo, None)
        if code != 250:   # an old server without ESMTP
            self.command("helo", "HELO " + self.helo, (250,))

    def close(self, polite: bool = True) -> None:
        sock, self.sock = self.sock, None
        if sock is None:
            return
        if polite:
            try:
                sock.sendall(b"QUIT\r\n")
                self._read_reply(sock, "quit")
            except (OSError, SmtpFailure):
                pass
        with contextlib.suppress(OSError):
            sock.close()

    def abort(self) -> None:
        """From another thread: unblocks a worker waiting on this session."""
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def send_message(self, sender: str, recipient: str, message: bytes) -> None:
        self.command("mail", "MAIL FROM:<{}>".format(sender), (250,))
        self.command("rcpt", "RCPT TO:<{}>".format(recipient), (250, 251))
        self.command("data", "DATA", (354,))
        t0 = time.monotonic()
        self._send("eod", message + b".\r\n")
        self._expect("eod", (250,))
        self.stats.latency_add("eod", time.monotonic() - t0)

    def reset(self) -> None:
        self.command("mail", "RSET", (250,))

    def command(self, stage: str, line: str, ok: Optional[Tuple[int, ...]]) -> Tuple[int, str]:
        self._send(stage, line.encode("ascii") + b"\r\n")
        return self._expect(stage, ok)

    def _send(self, stage: str, data: bytes) -> None:
        if self.sock is None:
            raise SmtpFailure(stage, "error", "not connected", True)
        try:
            self.sock.sendall(data)
        except OSError as exc:
            raise SmtpFailure(stage, "error", exc.strerror or str(exc) or type(exc).__name__, True) from None

    def _expect(self, stage: str, ok: Optional[Tuple[int, ...]]) -> Tuple[int, str]:
        if self.sock is None:
            raise SmtpFailure(stage, "error", "not connected", True)
        try:
            code, text = self._read_reply(self.sock, stage)
        except OSError as exc:
            raise SmtpFailure(stage, "error", exc.strerror or str(exc) or type(exc).__name__, True) from None
        if ok is None or code in ok:
            return code, text
        if 400 <= code < 600:
            # 421 closes the session; a failed greeting or EHLO leaves nothing to go on with
            fatal = code == 421 or stage in ("banner", "helo")
            raise SmtpFailure(stage, "4xx" if code < 500 else "5xx", "{} {}".format(code, text), fatal)
        raise SmtpFailure(stage, "error", "unexpected reply {} {}".format(code, text), True)

    def _read_reply(self, sock: socket.socket, stage: str) -> Tuple[int, str]:
        lines = []
        while True:
            line = self._read_line(sock, stage)
            if len(line) < 3 or not line[:3].isdigit():
                raise SmtpFailure(stage, "error", "not an SMTP reply: {!r}".format(line[:80]), True)
            lines.append(line[4:].decode("utf-8", "replace"))
            if len(line) == 3 or line[3:4] == b" ":
                return int(line[:3]), " ".join(lines).strip()

    def _read_line(self, sock: socket.socket, stage: str) -> bytes:
        while b"\n" not in self._buf:
            if len(self._buf) > LINE_MAX:
                raise SmtpFailure(stage, "error", "reply line too long", True)
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionResetError(0, "connection closed by the server")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.rstrip(b"\r")


def worker(host: str, port: int, helo: str, timeout: float, sender: str, recipient: str,
           messages: List[bytes], per_message: bool, stats: Stats, stop: threading.Event,
           sessions: List[Session]) -> None:
    """Sends `messages` one after another; counts every outcome in `stats`; returns when done or stopped."""
    session = Session(host, port, helo, timeout, stats)
    sessions.append(session)
    need_reset = False
    for message in messages:
        if stop.is_set():
            break
        stats.attempt()
        try:
            if session.sock is None:
                session.open()
                need_reset = False
            if need_reset:
                session.reset()
            need_reset = True
            session.send_message(sender, recipient, message)
            stats.accept()
        except SmtpFailure as failure:
            stats.fail(failure)
            if failure.fatal:
                session.close(polite=False)
        if per_message:
            session.close()
    session.close()
