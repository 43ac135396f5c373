"""RESP (the Redis protocol) over TCP: encoding commands, parsing replies, a small blocking client.

Only what the load test needs: RESP2 arrays of bulk strings out; simple strings, errors, integers,
bulk strings and arrays in. The password for AUTH is held in memory and sent over the socket only.
"""
import contextlib
import re
import socket
import time
from typing import Any, List, Optional, Sequence, Tuple, Union  # noqa: F401 - some only in type comments

Arg = Union[bytes, str, int]
CRLF = b"\r\n"
CONNECT_TIMEOUT = 10.0
SCAN_COUNT = 10000         # keys SCAN looks at per call (a few ms of the server's time)
DELETE_BATCH = 1000        # keys per UNLINK/DEL
_GLOB_SPECIAL = re.compile(rb"([*?\[\]\\])")


class Incomplete(Exception):
    """The buffer ends before the reply does: read more."""


class RedisError(Exception):
    """An error reply (-ERR ...) or a connection that does not speak RESP."""


class ReplyError(RedisError):
    """The server answered with an error reply."""


def _bytes(arg: Arg) -> bytes:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, int) and not isinstance(arg, bool):
        return str(arg).encode()
    if isinstance(arg, str):
        return arg.encode("utf-8")
    raise TypeError("a RESP argument is bytes, str or int, not {}".format(type(arg).__name__))


def encode(*args: Arg) -> bytes:
    """One command as a RESP array of bulk strings."""
    parts = [b"*", str(len(args)).encode(), CRLF]
    for arg in args:
        data = _bytes(arg)
        parts += [b"$", str(len(data)).encode(), CRLF, data, CRLF]
    return b"".join(parts)


def parse(buf: bytes, pos: int = 0) -> Tuple[Any, int]:
    """(reply, position after it) for the reply starting at pos; raises Incomplete when it is cut.

    An error reply comes back as a ReplyError instance (not raised): in a pipeline the other replies still
    count."""
    end = buf.find(CRLF, pos)
    if end < 0:
        raise Incomplete()
    kind = buf[pos:pos + 1]
    line = buf[pos + 1:end]
    if kind == b"+":
        return line.decode("utf-8", "replace"), end + 2
    if kind == b"-":
        return ReplyError(line.decode("utf-8", "replace")), end + 2
    if kind == b":":
        return int(line), end + 2
    if kind == b"$":
        size = int(line)
        if size < 0:
            return None, end + 2
        stop = end + 2 + size
        if len(buf) < stop + 2:
            raise Incomplete()
        return buf[end + 2:stop], stop + 2
    if kind == b"*":
        count = int(line)
        if count < 0:
            return None, end + 2
        items = []  # type: List[Any]
        pos = end + 2
        for _ in range(count):
            item, pos = parse(buf, pos)
            items.append(item)
        return items, pos
    raise RedisError("not a RESP reply (the server at this address does not speak the Redis protocol): {!r}".format(
        buf[pos:pos + 40]))


def skip(buf: bytes, pos: int) -> Tuple[int, bool]:
    """(position after the reply at pos, whether it is an error): the load loop's parser, no objects built.

    Returns (-1, False) when the reply is not complete in buf."""
    end = buf.find(CRLF, pos)
    if end < 0:
        return -1, False
    kind = buf[pos]
    if kind == 36:   # $ bulk string
        size = int(buf[pos + 1:end])
        if size < 0:
            return end + 2, False
        stop = end + 4 + size
        return (stop, False) if stop <= len(buf) else (-1, False)
    if kind == 43 or kind == 58:   # + simple string, : integer
        return end + 2, False
    if kind == 45:   # - error
        return end + 2, True
    if kind == 42:   # * array (not sent by GET/SET; parsed the slow way)
        try:
            _, stop = parse(buf, pos)
        except Incomplete:
            return -1, False
        return stop, False
    raise RedisError("not a RESP reply: {!r}".format(buf[pos:pos + 40]))


def replies(buf: bytes, limit: int) -> Tuple[List[bool], int]:
    """Up to `limit` complete replies at the start of buf: (error flag of each, bytes they take)."""
    flags = []  # type: List[bool]
    pos, size = 0, len(buf)
    while len(flags) < limit:
        end = buf.find(b"\r\n", pos)
        if end < 0:
            break
        kind = buf[pos]
        if kind == 36:   # $ bulk string (GET)
            n = int(buf[pos + 1:end])
            stop = end + 4 + n if n >= 0 else end + 2
            if stop > size:
                break
            flags.append(False)
        elif kind == 43 or kind == 58:   # +OK (SET), :integer
            stop = end + 2
            flags.append(False)
        elif kind == 45:   # -error
            stop = end + 2
            flags.append(True)
        else:
            stop, error = skip(buf, pos)
            if stop < 0:
                break
            flags.append(error)
        pos = stop
    return flags, pos


def reply_end(buf: bytes, pos: int = 0) -> int:
    """Where the reply at pos ends, or -1 when buf does not hold all of it: a scan without building anything,
    so that a large reply (a SCAN of 10,000 keys) arriving in many reads is parsed once, not once per read."""
    pending, size = 1, len(buf)
    while pending:
        end = buf.find(CRLF, pos)
        if end < 0:
            return -1
        kind = buf[pos]
        if kind == 36:     # $ bulk string
            n = int(buf[pos + 1:end])
            pos = end + 4 + n if n >= 0 else end + 2
            if pos > size:
                return -1
        elif kind == 42:   # * array: its elements follow
            n = int(buf[pos + 1:end])
            pos = end + 2
            if n > 0:
                pending += n
        else:
            pos = end + 2
        pending -= 1
    return pos


def glob_escape(prefix: bytes) -> bytes:
    """The prefix as a SCAN MATCH pattern matching itself literally."""
    return _GLOB_SPECIAL.sub(rb"\\\1", prefix)


def parse_target(target: str, default_port: int = 6379) -> Tuple[str, int]:
    """"host", "host:port", "[v6]:port" or "v6" -> (host, port)."""
    target = (target or "").strip()
    if not target:
        return "127.0.0.1", default_port
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif target.count(":") == 1:
        host, port = target.split(":")
    else:
        host, port = target, ""
    if port and not port.isdigit():
        raise ValueError("target port must be a number: {!r}".format(target))
    number = int(port) if port else default_port
    if not host or not 0 < number < 65536:
        raise ValueError("target must be ADDR:PORT, not {!r}".format(target))
    return host, number


def connect_socket(host: str, port: int, timeout: float = CONNECT_TIMEOUT) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def handshake_commands(password: str = "", user: str = "", db: int = 0) -> List[bytes]:
    """AUTH (when there is a password) and SELECT (when db is not 0), encoded."""
    out = []
    if password:
        out.append(encode("AUTH", user, password) if user else encode("AUTH", password))
    if db:
        out.append(encode("SELECT", db))
    return out


class Client:
    """A blocking connection for set-up, fill and cleanup (not the load loop)."""

    def __init__(self, host: str, port: int, password: str = "", user: str = "", db: int = 0,
                 timeout: float = CONNECT_TIMEOUT) -> None:
        self.sock = connect_socket(host, port, timeout)
        self.sock.settimeout(timeout)
        self._buf = b""
        self._pos = 0
        try:
            for reply in self.pipeline(handshake_commands(password, user, db)):
                if isinstance(reply, ReplyError):
                    raise _auth_error(reply, bool(password))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _read_reply(self) -> Any:
        while reply_end(self._buf, self._pos) < 0:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RedisError("the server closed the connection")
            self._buf = self._buf[self._pos:] + chunk
            self._pos = 0
        reply, self._pos = parse(self._buf, self._pos)
        return reply

    def pipeline(self, commands: Sequence[bytes]) -> List[Any]:
        """Sends encoded commands at once; their replies, error replies as ReplyError instances."""
        if not commands:
            return []
        self.sock.sendall(b"".join(commands))
        return [self._read_reply() for _ in commands]

    def call(self, *args: Arg) -> Any:
        reply = self.pipeline([encode(*args)])[0]
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def info(self, section: str = "") -> dict:
        text = self.call("INFO", section) if section else self.call("INFO")
        out = {}
        for line in text.decode("utf-8", "replace").splitlines():
            if ":" in line and not line.startswith("#"):
                key, _, value = line.partition(":")
                out[key] = value
        return out

    def scan_prefix(self, prefix: bytes) -> "List[bytes]":
        """Every key with the prefix (SCAN: the server stays responsive, unlike KEYS)."""
        found = []  # type: List[bytes]
        for batch in self.iter_prefix(prefix):
            found += batch
        return found

    def iter_prefix(self, prefix: bytes) -> Any:
        cursor = b"0"
        pattern = glob_escape(prefix) + b"*"
        while True:
            cursor, keys = self.call("SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT)
            if keys:
                yield keys
            if cursor == b"0":
                return

    def delete_prefix(self, prefix: bytes, should_stop: Any = None) -> int:
        """Deletes every key with the prefix (SCAN + UNLINK in batches, DEL on servers before 4.0)."""
        if not prefix:
            raise ValueError("refusing to delete with an empty key prefix")
        deleted = 0
        command = b"UNLINK"
        pending = []  # type: List[bytes]
        for keys in self.iter_prefix(prefix):
            pending += keys
            while len(pending) >= DELETE_BATCH:
                batch, pending = pending[:DELETE_BATCH], pending[DELETE_BATCH:]
                deleted, command = self._delete(command, batch, deleted)
        if pending:
            deleted, command = self._delete(command, pending, deleted)
        # SCAN may miss keys written while it ran (a load still finishing): one more pass until none is left
        for _ in range(3):
            rest = self.scan_prefix(prefix)
            if not rest:
                break
            for i in range(0, len(rest), DELETE_BATCH):
                deleted, command = self._delete(command, rest[i:i + DELETE_BATCH], deleted)
        return deleted

    def _delete(self, command: bytes, keys: List[bytes], deleted: int) -> Tuple[int, bytes]:
        try:
            return deleted + int(self.call(command, *keys)), command
        except ReplyError as exc:
            if command == b"UNLINK" and "unknown command" in str(exc).lower():
                return deleted + int(self.call(b"DEL", *keys)), b"DEL"
            raise


def _auth_error(reply: ReplyError, had_password: bool) -> RedisError:
    text = str(reply)
    if text.startswith(("WRONGPASS", "NOAUTH")) or "invalid password" in text or "invalid username" in text:
        hint = "check the password (and user)" if had_password else "the server needs a password: give it"
        return RedisError("Redis refused the login ({}): {}".format(text.split("\n")[0][:120], hint))
    return RedisError("Redis: {}".format(text[:200]))


def wait_answers(host: str, port: int, seconds: float = 5.0) -> bool:
    """Whether something accepts TCP connections there within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            connect_socket(host, port, 1.0).close()
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
