"""One mail storm session: an SMTP dialogue as a state machine over a non-blocking socket.

Per session: connect, banner, EHLO (HELO when EHLO is refused), then per message MAIL, RCPT, DATA,
the message, and the reply to its end. When the server offers PIPELINING (RFC 2920), MAIL, RCPT and
DATA go out in one write, and on a reused session the next message's MAIL, RCPT and DATA follow the
end of the message in the same write: one round trip per message. RSET only after a failed
transaction; QUIT when the session's messages are done, or after every message with
session_per_message; with PIPELINING the QUIT rides along with the end of the session's last message
(RFC 2920 allows QUIT as the last command of a group), which saves a round trip per session.
Outcomes are counted in a mail_smtp.Stats by stage, as mail_smtp describes; a message whose session
dies before its replies counts as an error at "mail". The event loop that drives sessions is mail_sender's.
"""
import collections
import contextlib
import errno
import socket
import time
from typing import Any, Callable, Deque, Iterator, Optional, Tuple  # noqa: F401 - some only in type comments

from .mail_poll import make_poller
from .mail_replies import joined, multiline, offers_pipelining
from .mail_smtp import LINE_MAX, SmtpFailure, Stats, envelope, reply_failure

READ_SIZE = 65536
_NONBLOCK = getattr(socket, "SOCK_NONBLOCK", 0)
# (stage, codes that mean success or None for any, what to do next, part of a pipelined MAIL/RCPT/DATA group)
Expectation = Tuple[str, Optional[Tuple[int, ...]], Callable[[int, str], None], bool]


class StormShared:
    """What every session shares: the selector, the counts, the settings."""

    def __init__(self, address: Tuple[Any, ...], family: int, helo: str, timeout: float, sender: str,
                 recipient: str, per_message: bool, stats: Stats) -> None:
        self.address, self.family, self.helo, self.timeout = address, family, helo, timeout
        self.sender, self.recipient, self.per_message, self.stats = sender, recipient, per_message, stats
        self.envelope = envelope(sender, recipient)
        self.poller = make_poller()
        self.runnable = collections.deque()  # type: Deque[Session]
        self.unfinished = 0


class Session:
    """One SMTP session as a state machine: each reply pops the expectation at the head of the queue."""

    def __init__(self, storm: StormShared, messages: Iterator[bytes]) -> None:
        self.storm, self.messages = storm, messages
        self.sock = None  # type: Optional[socket.socket]
        self.fd = -1
        self.inbuf = b""
        self.outbuf = b""
        self.send_stage = "connect"
        self.expect = collections.deque()  # type: Deque[Expectation]
        self.pipelining = False
        self.need_reset = False
        self.message = b""
        self.group_failure = None  # type: Optional[SmtpFailure]
        self.unresolved = 0      # messages sent on this session whose outcome is not counted yet
        self.deadline = 0.0
        self.mark = 0.0          # when the timed step began (connect, banner, end of DATA)
        self.connecting = False

    # -- flow --------------------------------------------------------------------------------------

    def next_message(self) -> None:
        message = next(self.messages, None)
        if message is None:
            if self.sock is None:
                self.storm.unfinished -= 1
            else:
                self.quit()
            return
        self.message = message
        self.storm.stats.attempt()
        self.unresolved += 1
        if self.sock is None:
            self.connect()
        else:
            self.transaction()

    def connect(self) -> None:
        self.send_stage = "connect"
        # non-blocking from its creation where the kernel can (Linux): one system call less per session
        sock = socket.socket(self.storm.family, socket.SOCK_STREAM | _NONBLOCK)
        if not _NONBLOCK:
            sock.setblocking(False)
        self.mark = time.monotonic()
        code = sock.connect_ex(self.storm.address)
        if code not in (0, errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK):
            sock.close()
            raise _connect_failure(code)
        self.sock, self.inbuf, self.outbuf, self.pipelining = sock, b"", b"", False
        self.fd = sock.fileno()
        self.expect.clear()
        self.group_failure, self.need_reset = None, False
        self.connecting = True
        self.deadline = self.mark + self.storm.timeout
        self.storm.poller.add(self.fd, self)

    def connected(self, clean: bool) -> None:
        """The connection is made, or failed; clean: the poller saw no error, none to ask for."""
        sock = self.sock
        assert sock is not None
        self.connecting = False
        code = 0 if clean else sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code:
            raise _connect_failure(code)
        now = time.monotonic()
        self.storm.stats.latency_add("connect", now - self.mark)
        self.mark = now
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.expect.append(("banner", (220,), self.greeted, False))
        self.storm.poller.want_write(self.fd, self, False)

    def greeted(self, code: int, text: str) -> None:
        self.storm.stats.latency_add("banner", time.monotonic() - self.mark)
        self.command("helo", "EHLO " + self.storm.helo, None, self.ehlo_done)

    def ehlo_done(self, code: int, text: str) -> None:
        if code == 250:
            self.pipelining = offers_pipelining(text)
            self.transaction()
        else:   # an old server without ESMTP
            self.command("helo", "HELO " + self.storm.helo, (250,), lambda c, t: self.transaction())

    def transaction(self) -> None:
        if self.need_reset:
            self.command("mail", "RSET", (250,), self.reset_done)
        elif self.pipelining:
            self.send("mail", self.storm.envelope)
            self.expect_envelope()
        else:
            storm = self.storm
            self.command("mail", "MAIL FROM:<{}>".format(storm.sender), (250,), lambda c, t: self.command(
                "rcpt", "RCPT TO:<{}>".format(storm.recipient), (250, 251), lambda c, t: self.command(
                    "data", "DATA", (354,), self.send_message)))

    def expect_envelope(self) -> None:
        self.expect.extend([("mail", (250,), _ignore, True), ("rcpt", (250, 251), _ignore, True),
                            ("data", (354,), self.send_message, True)])

    def reset_done(self, code: int, text: str) -> None:
        self.need_reset = False
        self.transaction()

    def send_message(self, code: int, text: str) -> None:
        chained = None   # type: Optional[bytes]
        if self.pipelining and not self.storm.per_message:
            chained = next(self.messages, None)
        self.mark = time.monotonic()
        if chained is None:
            if self.pipelining:   # the session's last message: QUIT goes with it
                self.send("eod", self.message + b".\r\nQUIT\r\n")
                self.expect.append(("eod", (250,), self.accepted_chained, False))
                self.expect.append(("quit", None, self.quit_done, False))
                return
            self.send("eod", self.message + b".\r\n")
            self.expect.append(("eod", (250,), self.accepted, False))
            return
        # RFC 2920: message content may open a group, so the next MAIL, RCPT and DATA ride along with
        # the end of this message: one round trip per message on a reused session
        data = b"".join((self.message, b".\r\n", self.storm.envelope))
        self.message = chained
        self.storm.stats.attempt()
        self.unresolved += 1
        self.send("eod", data)
        self.expect.append(("eod", (250,), self.accepted_chained, False))
        self.expect_envelope()

    def accepted(self, code: int, text: str) -> None:
        self.accepted_chained(code, text)
        self.message_done()

    def accepted_chained(self, code: int, text: str) -> None:
        stats = self.storm.stats
        stats.latency_add("eod", time.monotonic() - self.mark)
        stats.accept()
        self.unresolved -= 1

    def message_done(self) -> None:
        if self.storm.per_message and self.sock is not None:
            self.quit()
        else:
            self.storm.runnable.append(self)

    def quit(self) -> None:
        self.command("quit", "QUIT", None, self.quit_done)

    def quit_done(self, code: int, text: str) -> None:
        self.close()
        self.storm.runnable.append(self)

    def failed(self, failure: SmtpFailure) -> None:
        """Count the failure; the message is not retried, the session goes on with the next one."""
        if failure.stage == "quit":   # the messages are done: a failed QUIT is no failure
            self.close()
            self.storm.runnable.append(self)
            return
        stats = self.storm.stats
        stats.fail(failure)
        self.unresolved = max(self.unresolved - 1, 0)
        if not failure.fatal and self.expect:
            return   # a refused end of DATA: the next message's envelope is already on its way
        self.need_reset = True   # a refused MAIL or RCPT may leave half a transaction behind
        self.expect.clear()
        if failure.fatal:
            lost, self.unresolved = self.unresolved, 0
            for _ in range(lost):   # the pipelined next message dies with the session
                stats.fail(SmtpFailure("mail", "error", "session lost: " + failure.detail, True))
            self.close()
        self.message_done()

    # -- I/O ---------------------------------------------------------------------------------------

    def command(self, stage: str, line: str, ok: Optional[Tuple[int, ...]],
                then: Callable[[int, str], None]) -> None:
        self.send(stage, line.encode("ascii") + b"\r\n")
        self.expect.append((stage, ok, then, False))

    def send(self, stage: str, data: bytes) -> None:
        self.send_stage = stage
        self.outbuf += data
        self.deadline = time.monotonic() + self.storm.timeout
        self.flush()

    def flush(self) -> None:
        sock = self.sock
        if sock is None:
            raise SmtpFailure(self.send_stage, "error", "not connected", True)
        if not self.outbuf:
            return
        while self.outbuf:
            try:
                sent = sock.send(self.outbuf)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                raise SmtpFailure(self.send_stage, "error", exc.strerror or str(exc), True) from None
            self.outbuf = self.outbuf[sent:]
        self.storm.poller.want_write(self.fd, self, bool(self.outbuf))

    def readable(self) -> None:
        sock = self.sock
        assert sock is not None
        while True:
            try:
                chunk = sock.recv(READ_SIZE)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                raise SmtpFailure(self._stage(), "error", exc.strerror or str(exc), True) from None
            if not chunk:
                raise SmtpFailure(self._stage(), "error", "connection closed by the server", True)
            self.deadline = time.monotonic() + self.storm.timeout
            self.inbuf += chunk
            while self.sock is sock and self.inbuf:
                reply = self._take_reply()
                if reply is None:
                    break
                try:
                    self.reply(*reply)
                except SmtpFailure as failure:
                    if failure.fatal:
                        raise
                    # a refused message: the replies behind it in the buffer (a pipelined QUIT's) still count
                    self.failed(failure)
            # edge-triggered readiness is reported once: a full read may have left more behind
            if self.sock is not sock or len(chunk) < READ_SIZE:
                return

    def _stage(self) -> str:
        """The stage a failure now belongs to: the reply awaited, else the last thing sent."""
        return self.expect[0][0] if self.expect else self.send_stage

    def _take_reply(self) -> Optional[Tuple[int, str]]:
        """The first complete (maybe multi-line) reply in the buffer, or None."""
        buf = self.inbuf
        end = buf.find(b"\n")
        if end > 3 and buf[3:4] == b" " and buf[:3].isdigit():   # the usual one-line reply
            self.inbuf = buf[end + 1:]
            return int(buf[:3]), buf[4:end].decode("utf-8", "replace").strip()
        if end < 0 and len(buf) <= LINE_MAX:   # nothing complete yet (the usual case after the last reply)
            return None
        try:
            reply, self.inbuf = multiline(buf)
        except ValueError as exc:
            raise SmtpFailure(self._stage(), "error", str(exc), True) from None
        return reply

    def reply(self, code: int, text: str) -> None:
        if not self.expect:
            stage = self.send_stage
            raise SmtpFailure(stage, "error", "unexpected reply {} {}".format(code, joined(text)), True)
        stage, ok, then, grouped = self.expect.popleft()
        failure = None if ok is None or code in ok else reply_failure(stage, ok, code, joined(text))
        if grouped:
            # MAIL, RCPT and DATA went out together: the first failing reply is the one counted
            if failure is not None and failure.fatal:
                first, self.group_failure = self.group_failure or failure, None
                raise SmtpFailure(first.stage, first.kind, first.detail, True)
            self.group_failure = self.group_failure or failure
            if stage != "data":
                return
            first, self.group_failure = self.group_failure, None
            if first is not None:
                # a server that starts DATA after a refused MAIL or RCPT cannot be trusted any further
                raise SmtpFailure(first.stage, first.kind, first.detail, first.fatal or failure is None)
        elif failure is not None:
            raise failure
        then(code, text)

    def timed_out(self) -> None:
        stage = self.expect[0][0] if self.expect else self.send_stage
        raise SmtpFailure(stage, "error", "timed out after {:g} s".format(self.storm.timeout), True)

    def close(self) -> None:
        sock, self.sock = self.sock, None
        self.connecting = False
        self.group_failure = None
        self.expect.clear()
        self.inbuf = self.outbuf = b""
        if sock is None:
            return
        self.storm.poller.remove(self.fd)
        self.fd = -1
        with contextlib.suppress(OSError):
            sock.close()


def _ignore(code: int, text: str) -> None:
    pass


def _connect_failure(code: int) -> SmtpFailure:
    if code == errno.ECONNREFUSED:
        return SmtpFailure("connect", "refused", "Connection refused", True)
    return SmtpFailure("connect", "error", errno.errorcode.get(code, str(code)), True)
