"""The mail storm against a Postfix smtpd that refuses a client's sessions beyond a tiny connection limit.

The test itself holds the two sessions the limit allows (each past its 220 greeting, so Postfix counts them)
while the storm runs: every storm session is then a third one and refused at the greeting, however the
server schedules its smtpd processes. (With the storm's own sessions racing each other, a loaded machine
served them one after the other and refused none.)
"""
from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run

pytestmark = pytest.mark.integration


def _open(server: str, count: int) -> tuple[list[socket.socket], list[bytes]]:
    """`count` sessions at once: the sockets and their greetings."""
    host, port = server.rsplit(":", 1)
    socks = [socket.create_connection((host, int(port)), timeout=10) for _ in range(count)]
    return socks, [sock.recv(512) for sock in socks]


def _quit(socks: list[socket.socket]) -> None:
    for sock in socks:
        try:
            sock.sendall(b"QUIT\r\n")
            sock.recv(512)   # 221, or nothing from a session the server closed
        except OSError:
            pass
        sock.close()


@contextmanager
def sessions_held(server: str, count: int) -> Iterator[None]:
    """`count` sessions past their greeting (the server counts them) for the block; after it, ended with QUIT,
    and back only once the server lets `count` sessions in at once again (it forgets a session a moment after
    its end)."""
    socks, greetings = _open(server, count)
    try:
        assert all(g.startswith(b"220") for g in greetings), greetings
        yield
    finally:
        _quit(socks)
    deadline = time.monotonic() + 30
    while True:
        socks, greetings = _open(server, count)
        _quit(socks)
        if all(g.startswith(b"220") for g in greetings):
            return
        assert time.monotonic() < deadline, f"the server still refuses {count} sessions: {greetings}"
        time.sleep(0.2)


def _storm(workbench, server: str, messages: int, concurrency: int) -> tuple[object, dict]:
    request = RunRequest("local", "mailstorm", {"server": server, "messages": messages, "concurrency": concurrency,
                                                "timeout": 10.0}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    return outcome, {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}


def test_refused_sessions_are_counted_at_the_banner_and_the_storm_finishes(workbench, postfix_limited: str) -> None:
    with sessions_held(postfix_limited, 2):
        outcome, res = _storm(workbench, postfix_limited, 120, 8)
    accepted, refused = res["accepted"].value, res["smtp_4xx"].value
    # every session is the client's third: 421 at the greeting, each of its messages counted once
    assert (accepted, refused) == (0, 120)
    assert accepted + refused + res["smtp_5xx"].value + res["errors"].value + res["refused_tcp"].value == 120
    by_stage = res["smtp_4xx"].metadata["by_stage"]
    assert by_stage["banner"]["4xx"] == refused
    assert "421" in res["smtp_4xx"].metadata["last_error"] and "too many connections" in \
        res["smtp_4xx"].metadata["last_error"]
    assert res["accepted_per_s"].value == 0 and res["accepted"].metadata["attempted"] == 120
    warnings = [e["message"] for e in workbench.store.runs.events(outcome.run_id) if e["type"] == "warning"]
    assert any("0 of 120 messages accepted" in w for w in warnings), warnings

    # the held sessions gone, as many sessions as the limit allows all get through
    outcome, res = _storm(workbench, postfix_limited, 40, 2)
    assert (res["accepted"].value, res["smtp_4xx"].value) == (40, 0)
    assert res["accepted_per_s"].value > 0
    assert subprocess.run(["/usr/sbin/postqueue", "-j"], capture_output=True, text=True).stdout.strip() == ""
