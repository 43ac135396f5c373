"""The mailstorm SMTP client against a tiny in-process SMTP server that fails at chosen stages."""
from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from remote.agent import bench_mailstorm, mail_queue, mail_smtp


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        srv = self.server
        with srv.lock:
            srv.sessions += 1
            session = srv.sessions
        banner = srv.fail.get("banner")
        if banner and session % srv.every == 0:
            self.reply(banner, "go away")
            return
        self.reply(220, "tiny ESMTP")
        while True:
            line = self.rfile.readline()
            if not line:
                return
            verb = line.split(b" ", 1)[0].split(b":", 1)[0].strip().upper()
            stage = {b"EHLO": "helo", b"HELO": "helo", b"MAIL": "mail", b"RCPT": "rcpt", b"DATA": "data"}.get(verb)
            if verb == b"QUIT":
                self.reply(221, "bye")
                return
            if verb == b"RSET":
                self.reply(250, "ok")
                continue
            if stage == "mail":
                with srv.lock:
                    srv.mails += 1
                    self.n = srv.mails
            if stage in srv.fail and self.n % srv.every == 0 and stage != "helo":
                self.reply(srv.fail[stage], "no")
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
                continue
            self.reply(250, "ok")

    n = 0

    def reply(self, code: int, text: str) -> None:
        self.wfile.write(f"{code} {text}\r\n".encode())


@contextlib.contextmanager
def smtp_server(fail: dict[str, int] | None = None, every: int = 1) -> Iterator[socketserver.ThreadingTCPServer]:
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.lock, server.sessions, server.mails, server.bodies = threading.Lock(), 0, 0, []
    server.fail, server.every = fail or {}, every
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

    def result(self, test, metric, value, unit, metadata=None) -> None:
        self.events.append(("result", metric, value, unit, metadata or {}))

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


def test_all_accepted_over_reused_sessions(tmp_path, monkeypatch) -> None:
    with smtp_server() as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=30, concurrency=3, size=512)
        assert srv.sessions == 1 + 3 and len(srv.bodies) == 30   # the probe, then one per worker
        assert all(f"X-Benchbay-Run: {tmp_path.name}".encode() in b for b in srv.bodies)
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
def test_failures_counted_by_stage(tmp_path, monkeypatch, stage: str, code: int, metric: str) -> None:
    with smtp_server({stage: code}, every=2) as srv:
        ctx = _storm(tmp_path, monkeypatch, f"127.0.0.1:{srv.server_address[1]}", messages=20, concurrency=2,
                     size=512, session_per_message=stage == "banner")
    res = ctx.results()
    assert res[metric][2] == 10 and res["accepted"][2] == 10
    assert res[metric][4]["by_stage"] == {stage: {metric[-3:]: 10}}
    assert any(e[0] == "warning" and "10 of 20" in e[1] for e in ctx.events)


def test_tcp_refusals_counted_at_connect() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stats = mail_smtp.Stats()
    mail_smtp.worker("127.0.0.1", port, "h", 2.0, "", "sink@benchbay.invalid", [b"x\r\n"] * 3, False, stats,
                     threading.Event(), [])
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
