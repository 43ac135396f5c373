"""What the mail storm's SMTP sessions share: stages, counts, reply checks, the server address.

Stages: connect (TCP), banner, helo, mail, rcpt, data (the DATA command), eod (the reply to the end of
the message). A TCP refusal counts under connect as "refused"; a 4xx or 5xx reply under its stage;
a timeout or a dropped connection as "error". Each message is tried once: a failure is counted, not
retried. Latencies: connect (TCP handshake), banner (connected until the greeting), eod (end of the
message sent until the reply), in seconds.

When the server offers PIPELINING, MAIL, RCPT and DATA go out in one write and their replies are read
in order (RFC 2920); the first failing reply of the group is the one counted. After a successful
message the next one starts without RSET (the end of DATA resets the transaction); RSET only follows
a failed transaction. The sessions: mail_sender.
"""
import socket
import threading
import time
from typing import Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

STAGES = ("connect", "banner", "helo", "mail", "rcpt", "data", "eod")
KINDS = ("refused", "4xx", "5xx", "error")
LINE_MAX = 8192


class SmtpFailure(Exception):
    """A stage failed: kind is refused, 4xx, 5xx or error; fatal when the session cannot go on."""

    def __init__(self, stage: str, kind: str, detail: str, fatal: bool) -> None:
        Exception.__init__(self, "{} {}: {}".format(stage, kind, detail))
        self.stage, self.kind, self.detail, self.fatal = stage, kind, detail, fatal


class Stats:
    """The storm's counts: written by the sender thread, read under `lock` for live progress."""

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


def envelope(sender: str, recipient: str) -> bytes:
    """MAIL, RCPT and DATA as one pipelined write."""
    return "MAIL FROM:<{}>\r\nRCPT TO:<{}>\r\nDATA\r\n".format(sender, recipient).encode("ascii")


def reply_failure(stage: str, ok: Optional[Tuple[int, ...]], code: int, text: str) -> Optional[SmtpFailure]:
    """None when `code` is what the stage wants (any code when ok is None), else the failure to count."""
    if ok is None or code in ok:
        return None
    if 400 <= code < 600:
        # 421 closes the session; a failed greeting or EHLO leaves nothing to go on with
        fatal = code == 421 or stage in ("banner", "helo")
        return SmtpFailure(stage, "4xx" if code < 500 else "5xx", "{} {}".format(code, text), fatal)
    return SmtpFailure(stage, "error", "unexpected reply {} {}".format(code, text), True)
