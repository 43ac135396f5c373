"""Tailing a run's files by offset: partial lines and ticks, dropped connections, duplicates.

A fake transport serves growing files and can drop the connection on chosen reads; the real
parser and computer turn a recorded sampler output into samples.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from remote.errors import ConnectError, RemoteCommandError
from remote.run_link import Link, RunLost
from remote.run_tail import EventTail, SampleTail, Tail, backoff_delays, tick_key
from remote.telemetry import RawTickParser, TelemetryComputer
from remote.transport import CommandResult, Transport


class FakeHost:
    """Files on a pretend host, shared by every FakeTransport connected to it."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.drop_on_reads: set[int] = set()   # read numbers (1-based) that lose the connection
        self.reads = 0
        self.refuse_connections = 0


class FakeTransport(Transport):
    def __init__(self, host: FakeHost, name: str = "fake") -> None:
        self.name = name
        self.host = host
        self.closed = False

    def run(self, command, timeout=60.0, stdin=None) -> CommandResult:
        return CommandResult(0, b"", b"")

    def put_bytes(self, data: bytes, remote_path: str, mode: int = 0o600) -> None:
        self.host.files[remote_path] = data

    def get_bytes(self, remote_path: str, offset: int = 0, limit: int | None = None) -> bytes:
        if self.closed:
            raise ConnectError(f"{self.name}: the SSH connection is closed")
        self.host.reads += 1
        if self.host.reads in self.host.drop_on_reads:
            self.closed = True
            raise ConnectError(f"{self.name}: the SSH connection was lost (cannot read {remote_path})")
        if remote_path not in self.host.files:
            raise FileNotFoundError(remote_path)
        data = self.host.files[remote_path][offset:]
        return data if limit is None else data[:limit]

    def close(self) -> None:
        self.closed = True


def _events(count: int) -> bytes:
    return b"".join(json.dumps({"seq": i, "t": 1000.0 + i, "type": "progress", "fraction": i / count}).encode()
                    + b"\n" for i in range(1, count + 1))


def test_event_lines_cut_anywhere_come_out_whole_and_once() -> None:
    data = _events(5)
    for cut in range(len(data) + 1):
        tail = EventTail("events.jsonl")
        got = tail.feed(data[:cut]) + tail.feed(data[cut:])
        assert [e["seq"] for e in got] == [1, 2, 3, 4, 5]
        assert tail.problems == []
    tail = EventTail("events.jsonl")
    assert tail.feed(b'{"seq": 1, "t": 1.0, "type": "start"') == []   # no newline yet: waits


def test_repeated_and_missing_events_are_caught() -> None:
    tail = EventTail("events.jsonl")
    lines = _events(4).splitlines(keepends=True)
    assert [e["seq"] for e in tail.feed(lines[0] + lines[1])] == [1, 2]
    assert [e["seq"] for e in tail.feed(lines[1] + lines[3] + b"not json\n")] == [4]
    assert tail.duplicates == 1
    messages = [p["message"] for p in tail.problems]
    assert "events 3..3 are missing" in messages[0] and "unreadable event line" in messages[1]
    assert all(p["seq"] is None for p in tail.problems)


def test_offset_moves_only_by_what_arrived() -> None:
    host = FakeHost()
    transport = FakeTransport(host)
    tail = Tail("/run/events.jsonl")
    assert tail.read(transport) == b""               # not written yet
    host.files["/run/events.jsonl"] = b"abc"
    assert tail.read(transport) == b"abc" and tail.offset == 3
    host.files["/run/events.jsonl"] += b"defgh"
    assert tail.read(transport, limit=2) == b"de" and tail.offset == 5
    host.drop_on_reads = {host.reads + 1}
    with pytest.raises(ConnectError):
        tail.read(transport)
    assert tail.offset == 5
    assert tail.read(FakeTransport(host)) == b"fgh" and tail.offset == 8


def test_a_missing_file_on_the_local_transport_reads_as_nothing_yet(tmp_path: Path) -> None:
    from remote.local_transport import LocalTransport

    tail = Tail(str(tmp_path / "samples.raw"))
    assert tail.read(LocalTransport()) == b""
    with pytest.raises(RemoteCommandError):
        Tail(str(tmp_path)).read(LocalTransport())   # a directory is an error, not "not yet"


def _raw_ticks(count: int) -> bytes:
    """What sampler.sh writes: a header, then framed ticks (2 s apart, a disk doing 100 writes/s)."""
    out = ["@benchbay-telemetry 1", "@interval 2", "@shell sh", "@clock 1700000000.00 1000.00", "@disks vda",
           "@psi", "@header-end"]
    for n in range(1, count + 1):
        up = 1000 + 2 * n
        out += [f"@tick {n}", "@uptime", f"{up}.00 0.00", "@stat", f"cpu  {100 * n} 0 {50 * n} {800 * n} 0 0 0 0 0 0",
                "@diskstats", f" 252 0 vda 0 0 0 0 {200 * n} 0 {1600 * n} {400 * n} 0 {300 * n} {400 * n}",
                "@loadavg", "0.50 0.40 0.30 1/100 999", "@meminfo", "MemTotal: 1000 kB", "MemAvailable: 600 kB",
                f"@end {n}"]
    return ("\n".join(out) + "\n").encode()


def test_ticks_split_anywhere_give_the_same_samples_once() -> None:
    raw = _raw_ticks(6)
    whole = SampleTail("s", RawTickParser(), TelemetryComputer()).feed(raw)
    assert len(whole) == 5 and whole[0].disks["vda"]["w/s"] == pytest.approx(100.0)
    for cut in range(0, len(raw), 7):
        tail = SampleTail("s", RawTickParser(), TelemetryComputer())
        got = tail.feed(raw[:cut]) + tail.feed(raw[cut:])
        assert [s.t for s in got] == [s.t for s in whole]
        assert tail.ticks == 6 and tail.duplicates == 0


def test_a_tick_read_twice_counts_once() -> None:
    raw = _raw_ticks(4)
    second_tick = raw.index(b"@tick 2")
    tail = SampleTail("s", RawTickParser(), TelemetryComputer())
    first = tail.feed(raw)
    # a resumed read that started too early would repeat ticks 2..4: they are dropped by seq
    again = tail.feed(raw[second_tick:])
    assert len(first) == 3 and again == [] and tail.duplicates == 3 and tail.ticks == 4


def test_tick_key_prefers_the_tick_number() -> None:
    class Snap:
        seq = 7
        uptime = 12.5

    assert tick_key(Snap()) == 7.0
    assert tick_key(object()) is None


def test_backoff_doubles_up_to_ten_seconds() -> None:
    delay = backoff_delays()
    assert [delay() for _ in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_reconnect_resumes_and_gives_up_after_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    class Clock:   # sleeping moves the clock; nothing else takes time
        @staticmethod
        def monotonic() -> float:
            return 1000.0 + sum(slept)

        sleep = slept.append

    monkeypatch.setattr("remote.run_link.time", Clock)
    host = FakeHost()
    host.files["/run/events.jsonl"] = _events(3)
    attempts = {"n": 0}

    def connect() -> FakeTransport:
        attempts["n"] += 1
        if attempts["n"] <= 3:
            raise ConnectError("fake: connection refused")
        return FakeTransport(host)

    events: list[dict] = []
    link = Link(FakeTransport(host), connect, budget=120, on_event=events.append)
    tail = EventTail("/run/events.jsonl")
    host.drop_on_reads = {1}
    got = link.retrying(lambda transport: tail.feed(tail.read(transport)))
    assert [e["seq"] for e in got] == [1, 2, 3]
    assert slept == [0.5, 1.0, 2.0] and link.reconnects == 1
    assert [e["type"] for e in events] == ["disconnected", "reconnected"]

    hopeless = Link(FakeTransport(host), lambda: (_ for _ in ()).throw(ConnectError("refused")), budget=5)
    slept.clear()
    with pytest.raises(RunLost, match="within 5 s"):
        hopeless.reconnect(ConnectError("lost"))
    assert sum(slept) <= 5


def test_a_stop_while_unreachable_gives_up_at_once() -> None:
    slept: list[float] = []
    link = Link(FakeTransport(FakeHost()), lambda: (_ for _ in ()).throw(ConnectError("refused")), budget=120,
                give_up=lambda: True, sleep=slept.append)
    with pytest.raises(RunLost, match="stopped while the host was unreachable"):
        link.reconnect(ConnectError("lost"))
    assert slept == []
