"""The mailstorm SMTP client against a tiny in-process SMTP server that fails at chosen stages."""
from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from remote.agent import bench_mailstorm, mail_queue, mail_sender, mail_smtp

STALL = 10.0   # seconds: a storm's reply timeout in tests that must not wait for it


class _Handler(socketserver.StreamRequestHandler):
    n = 0

    def handle(self) -> None:
        srv = self.server
        with srv.lock:
            srv.sessions += 1
            session = srv.sessions
        if srv.silent:
            self.rfile.readline()   # says nothing until the client gives up
            return
        banner = srv.fail.get("banner")
        if banner and session % srv.every == 0:
            self.reply(banner, "go away")
            return
        self.reply(220, "tiny ESMTP")
        mail_ok = rcpt_ok = False
        while True:
            line = self.rfile.readline()
            if not line:
                return
            with srv.lock:
                srv.lines.append(line)
            verb = line.split(b" ", 1)[0].split(b":", 1)[0].strip().upper()
            stage = {b"EHLO": "helo", b"HELO": "helo", b"MAIL": "mail", b"RCPT": "rcpt", b"DATA": "data"}.get(verb)
            if verb == b"QUIT":
                self.reply(221, "bye")
                return
            if verb == b"RSET":
                with srv.lock:
                    srv.rsets += 1
                self.reply(250, "ok")
                continue
            if verb == b"EHLO" and srv.pipelining:
                self.wfile.write(b"250-tiny\r\n250-PIPELINING\r\n250 8BITMIME\r\n")
                continue
            if stage == "mail":
                mail_ok = rcpt_ok = False
                with srv.lock:
                    srv.mails += 1
                    self.n = srv.mails
            if stage in srv.fail and self.n % srv.every == 0 and stage != "helo":
                self.reply(srv.fail[stage], "no")
                if srv.fail[stage] == 421:   # closing the session
                    return
                continue
            if stage == "rcpt" and not mail_ok:
                self.reply(503, "need MAIL command")
                continue
            mail_ok = mail_ok or stage == "mail"
            rcpt_ok = rcpt_ok or stage == "rcpt"
            if stage == "data" and not rcpt_ok:   # RFC 2920: a pipelined DATA after a refused RCPT is refused
                self.reply(503, "no valid recipients")
                continue
            if stage == "data":
                self.reply(354, "go on")
                body = []
                while True:
                    data = self.rfile.readline()
                    if data in (b".\r\n", b""):
                        break
                    body.append(data)
                with srv.lock:
                    srv.bodies.append(b"".join(body))
                code = srv.fail.get("eod") if self.n % srv.every == 0 else None
                self.reply(code or 250, "queued")
                if code == 421:
                    return
                continue
            self.reply(250, "ok")

    def reply(self, code: int, text: str) -> None:
        self.wfile.write(f"{code} {text}\r\n".encode())


@contextlib.contextmanager
def smtp_server(fail: dict[str, int] | None = None, every: int = 1, pipelining: bool = False,
                silent: bool = False) -> Iterator[socketserver.ThreadingTCPServer]:
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.lock, server.sessions, server.mails, server.bodies = threading.Lock(), 0, 0, []
    server.fail, server.every = fail or {}, every
    server.pipelining, server.silent, server.rsets, server.lines = pipelining, silent, 0, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


class FakeCtx:
    def __init__(self, run_dir: str) -> None:
        self.run_dir, self.events = run_dir, []

    def phase(self, phase_id: str, label: str):
        return contextlib.nullcontext()

    def progress(self, *a, **k) -> None:
        pass

    def marker(self, marker_id: str, label: str, at: float | None = None) -> None:
        self.events.append(("marker", marker_id, label, at))

    def result(self, test, metric, value, unit, metadata=None) -> None:
        self.events.append(("result", metric, value, unit, metadata or {}))

    def emit(self, event_type: str, **data) -> dict:
        # results that carry per-interval rates, and the phase plan, come through here as in the agent
        if event_type == "result":
            self.result(data["test"], data["metric"], data["value"], data["unit"], data.get("metadata"))
        else:
            self.events.append((event_type, data))
        return data

    def warning(self, message: str) -> None:
        self.events.append(("warning", message))

    def check(self) -> None:
        pass

    def sleep(self, seconds: float) -> None:
        import time
        time.sleep(seconds)

    def add_cleanup_path(self, path: str) -> None:
        pass

    def results(self) -> dict:
        return {e[1]: e for e in self.events if e[0] == "result"}


def _storm(tmp_path, monkeypatch, server: str, **params) -> FakeCtx:
    monkeypatch.setattr(mail_queue, "detect", lambda: {"mta": "", "version": "", "queue_dir": "", "queue_tool": ""})
    ctx = FakeCtx(str(tmp_path))
    bench_mailstorm.run(ctx, bench_mailstorm.validate(dict(params, server=server)))
    return ctx


@pytest.mark.parametrize("pipelining", [False, True])
def test_all_accepted_over_reused_sessions(tmp_path, monkeypatch, pipelining: bool) -> None:
    with smtp_server(pipelining=pipelining) as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=30, concurrency=3, size=512)
        assert srv.sessions == 1 + 3 and len(srv.bodies) == 30   # the probe, then one per worker
        assert all(f"X-Benchbay-Run: {tmp_path.name}".encode() in b for b in srv.bodies)
        assert srv.rsets == 0   # a message that went through needs no RSET before the next
    res = ctx.results()
    assert res["accepted"][2] == 30 and res["accepted_per_s"][2] > 0
    assert sum(res["accepted_per_s"][4]["per_second"]) == 30
    assert res["smtp_4xx"][2] == res["smtp_5xx"][2] == res["refused_tcp"][2] == 0
    for prefix in ("connect", "banner", "data"):
        assert {f"{prefix}_{p}" for p in ("p50", "p95", "p99", "max")} <= set(res)
    assert res["data_p50"][2] <= res["data_p95"][2] <= res["data_p99"][2] <= res["data_max"][2]
    assert res["connect_max"][4]["samples"] == 3 and res["data_max"][4]["samples"] == 30
    assert all(e[4]["synthetic"] is False for e in res.values())
    assert "drain_s" not in res   # no queue tool: no drain phase


def test_session_per_message(tmp_path, monkeypatch) -> None:
    with smtp_server() as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=12, concurrency=2,
                     size=512, session_per_message=True)
        assert srv.sessions == 1 + 12
    assert ctx.results()["connect_max"][4]["samples"] == 12


@pytest.mark.parametrize(("stage", "code", "metric"), [("rcpt", 550, "smtp_5xx"), ("mail", 451, "smtp_4xx"),
                                                         ("eod", 451, "smtp_4xx"), ("data", 554, "smtp_5xx"),
                                                         ("banner", 554, "smtp_5xx")])
@pytest.mark.parametrize("pipelining", [False, True])
def test_failures_counted_by_stage(tmp_path, monkeypatch, stage: str, code: int, metric: str,
                                   pipelining: bool) -> None:
    began = time.monotonic()
    with smtp_server({stage: code}, every=2, pipelining=pipelining) as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=20, concurrency=2,
                     size=512, session_per_message=stage == "banner", timeout=STALL)
    # no session sat out its timeout: a refused last message's pipelined QUIT reply was read at once
    assert time.monotonic() - began < STALL
    res = ctx.results()
    assert res[metric][2] == 10 and res["accepted"][2] == 10
    assert res[metric][4]["by_stage"] == {stage: {metric[-3:]: 10}}   # once, at the first failing reply
    assert any(e[0] == "warning" and "10 of 20" in e[1] for e in ctx.events)
    assert len(srv.bodies) == (20 if stage == "eod" else 10)   # refused before DATA: no message sent


@pytest.mark.parametrize("stage", ["eod", "mail"])
def test_a_session_closed_with_421_counts_every_message_once(tmp_path, monkeypatch, stage: str) -> None:
    # pipelined: the next message's MAIL, RCPT and DATA already went out with the end of this one
    with smtp_server({stage: 421}, every=3, pipelining=True) as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=30, concurrency=2,
                     size=512)
    res = ctx.results()
    failed = res["smtp_4xx"][2] + res["errors"][2]
    assert res["smtp_4xx"][4]["by_stage"][stage] == {"4xx": res["smtp_4xx"][2]} and res["smtp_4xx"][2] > 0
    assert res["accepted"][2] + failed == 30 and res["accepted"][2] == len(srv.bodies) - (stage == "eod") * \
        res["smtp_4xx"][2]
    assert res["accepted"][4]["attempted"] == 30


def test_a_server_that_never_answers_times_out_and_the_storm_ends(tmp_path, monkeypatch) -> None:
    with smtp_server(silent=True) as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=6, concurrency=3,
                     size=512, timeout=0.5)
    res = ctx.results()
    assert res["accepted"][2] == 0 and res["errors"][2] == 6
    assert res["errors"][4]["by_stage"] == {"banner": {"error": 6}}
    assert "timed out" in res["errors"][4]["last_error"]


def test_markers_for_the_live_graphs(tmp_path, monkeypatch) -> None:
    import time
    before = time.time()
    with smtp_server(pipelining=True) as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=20, concurrency=4,
                     size=512)
    after = time.time()
    marks = {e[1]: e for e in ctx.events if e[0] == "marker"}
    assert [e[1] for e in ctx.events if e[0] == "marker"] == ["storm_start", "last_accept"]   # no queue tool
    assert marks["storm_start"][2] == "Storm start" and marks["last_accept"][2] == "Last accept"
    assert before <= marks["last_accept"][3] <= after


def test_tcp_refusals_counted_at_connect() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stats = mail_smtp.Stats()
    mail_sender.storm("127.0.0.1", port, "h", 2.0, "", "sink@benchbay.invalid", [[b"x\r\n"] * 3], False, stats,
                      threading.Event())
    assert stats.accepted == 0 and stats.failures == {"connect": {"refused": 3}}


def test_closed_port_gives_a_synthetic_storm(tmp_path, monkeypatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{port}", messages=40, concurrency=4, size=1024)
    assert ("warning", f"synthetic: no MTA listening on 127.0.0.1:{port}") in ctx.events
    res = ctx.results()
    assert res["accepted"][2] == 40 and res["accepted_per_s"][2] > 0
    assert "synthetic_fsync_p99" in res
    assert all(e[4]["synthetic"] is True for e in res.values())
    assert list(tmp_path.iterdir()) == []   # the queue files and their directory are gone


def test_server_parsing() -> None:
    assert mail_smtp.parse_server("127.0.0.1:2525") == ("127.0.0.1", 2525)
    assert mail_smtp.parse_server("[::1]:25") == ("::1", 25)
    assert mail_smtp.parse_server("mx.example") == ("mx.example", 25)
    with pytest.raises(ValueError):
        mail_smtp.parse_server("h:0")
