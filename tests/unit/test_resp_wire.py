"""The RESP encoder and parsers the Redis load test speaks with (remote/agent/resp_wire.py)."""
from __future__ import annotations

import pytest

from remote.agent import resp_wire
from remote.agent.resp_wire import Incomplete, ReplyError, encode, parse, skip

# one of each reply a Redis server sends, as on the wire
REPLIES = [
    (b"+OK\r\n", "OK"),
    (b"-ERR unknown command 'FOO'\r\n", ReplyError("ERR unknown command 'FOO'")),
    (b":1024\r\n", 1024),
    (b":-3\r\n", -3),
    (b"$5\r\nhello\r\n", b"hello"),
    (b"$0\r\n\r\n", b""),
    (b"$-1\r\n", None),
    (b"$12\r\nline\r\nbreaks\r\n", b"line\r\nbreaks"),   # a value holding CRLF is read by its length
    (b"*2\r\n$1\r\n0\r\n*2\r\n$3\r\nk:1\r\n$3\r\nk:2\r\n", [b"0", [b"k:1", b"k:2"]]),   # a SCAN reply
    (b"*0\r\n", []),
    (b"*-1\r\n", None),
]


def _same(got: object, want: object) -> bool:
    if isinstance(want, ReplyError):
        return isinstance(got, ReplyError) and str(got) == str(want)
    return got == want


def test_commands_are_arrays_of_bulk_strings() -> None:
    assert encode("SET", "bb:000000000001", b"x\r\ny") == \
        b"*3\r\n$3\r\nSET\r\n$15\r\nbb:000000000001\r\n$4\r\nx\r\ny\r\n"
    assert encode("SELECT", 15) == b"*2\r\n$6\r\nSELECT\r\n$2\r\n15\r\n"
    assert encode("GET", "clé") == b"*2\r\n$3\r\nGET\r\n$4\r\ncl\xc3\xa9\r\n"   # length in bytes, not characters
    with pytest.raises(TypeError):
        encode("SET", "k", 1.5)


@pytest.mark.parametrize(("wire", "value"), REPLIES)
def test_each_reply_is_read_whole(wire: bytes, value: object) -> None:
    got, pos = parse(wire + b"+NEXT\r\n")
    assert _same(got, value)
    assert pos == len(wire)
    assert skip(wire + b"+NEXT\r\n", 0) == (len(wire), isinstance(value, ReplyError))
    assert resp_wire.reply_end(wire + b"+NEXT\r\n") == len(wire)


@pytest.mark.parametrize(("wire", "value"), REPLIES)
def test_a_cut_reply_asks_for_more(wire: bytes, value: object) -> None:
    for cut in range(len(wire)):
        with pytest.raises(Incomplete):
            parse(wire[:cut])
        assert skip(wire[:cut], 0) == (-1, False), cut
        assert resp_wire.reply_end(wire[:cut]) == -1, cut


def test_a_pipeline_of_replies_is_read_in_order() -> None:
    stream = b"".join(wire for wire, _ in REPLIES)
    pos, got, ends = 0, [], []
    while pos < len(stream):
        value, pos = parse(stream, pos)
        got.append(value)
        ends.append(pos)
    assert all(_same(g, w) for g, (_, w) in zip(got, REPLIES, strict=True))
    pos, skipped = 0, []
    while pos < len(stream):
        pos, _ = skip(stream, pos)
        skipped.append(pos)
    assert skipped == ends


def test_something_not_redis_is_named() -> None:
    with pytest.raises(resp_wire.RedisError, match="does not speak the Redis protocol"):
        parse(b"HTTP/1.1 400 Bad Request\r\n")


def test_the_prefix_matches_only_itself_in_scan() -> None:
    assert resp_wire.glob_escape(b"benchbay:run1:") == b"benchbay:run1:"
    assert resp_wire.glob_escape(b"a*b?[c]\\") == b"a\\*b\\?\\[c\\]\\\\"


@pytest.mark.parametrize(("target", "want"), [
    ("", ("127.0.0.1", 6379)), ("10.0.0.5", ("10.0.0.5", 6379)), ("db.example:6380", ("db.example", 6380)),
    ("[::1]:7000", ("::1", 7000)), ("::1", ("::1", 6379)),
])
def test_targets(target: str, want: tuple) -> None:
    assert resp_wire.parse_target(target) == want


@pytest.mark.parametrize("target", ["host:port", "host:0", "host:70000", ":6379"])
def test_bad_targets_are_refused(target: str) -> None:
    with pytest.raises(ValueError):
        resp_wire.parse_target(target)


def test_login_commands_carry_the_password_only_in_auth() -> None:
    assert resp_wire.handshake_commands() == []
    assert resp_wire.handshake_commands("s3cret", "", 15) == [encode("AUTH", "s3cret"), encode("SELECT", 15)]
    assert resp_wire.handshake_commands("s3cret", "bench", 0) == [encode("AUTH", "bench", "s3cret")]


def test_the_load_loop_takes_whole_replies_only() -> None:
    stream = b"".join(wire for wire, _ in REPLIES)
    errors = [isinstance(value, ReplyError) for _, value in REPLIES]
    ends = []
    pos = 0
    for wire, _ in REPLIES:
        pos += len(wire)
        ends.append(pos)
    for cut in range(len(stream) + 1):
        flags, used = resp_wire.replies(stream[:cut], len(REPLIES))
        whole = sum(1 for end in ends if end <= cut)
        assert flags == errors[:whole] and used == (ends[whole - 1] if whole else 0), cut
    assert resp_wire.replies(stream, 3) == (errors[:3], ends[2])   # no more than the requests in flight
