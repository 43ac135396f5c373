"""Each query's latency is its own: from its own send to its own read (or, with kernel stamps, its answer's
arrival), never the time of the burst it was sent in or of the batch its answer was read in; with kernel
stamps, not the client's own delays before the read either
(tests/fixtures/dns_responder.py delays answers as told).

The client's socket is wrapped so that the client is kept busy for a known time after a send or before a read,
as on a busy machine; the responder's delays are the truth the latencies are held to."""
import time

from remote.agent import dns_replay
from tests.fixtures.dns_responder import responder

# a loaded machine's late wake-ups (responder timer, client poll) and a stamp taken late (the client paused right
# after a send); the errors sought are 300 ms and more
TOLERANCE_MS = 200.0


class _TimedSocket:
    """A lane's UDP socket whose send keeps the client busy `send_pause` s after sending, and whose reads wait
    `read_pause` s before the read that follows the first answer (the client busy while the next one arrives)."""

    def __init__(self, sock, send_pause=0.0, read_pause=0.0):
        self._sock, self._send_pause, self._read_pause = sock, send_pause, read_pause
        self._answers = 0

    def send(self, data):
        sent = self._sock.send(data)
        time.sleep(self._send_pause)
        return sent

    def _pause_before_read(self):
        if self._answers == 1 and self._read_pause:
            time.sleep(self._read_pause)
            self._read_pause = 0.0

    def recv(self, size):
        self._pause_before_read()
        data = self._sock.recv(size)
        self._answers += 1
        return data

    def recvmsg(self, size, ancillary_size=0):
        self._pause_before_read()
        got = self._sock.recvmsg(size, ancillary_size)
        self._answers += 1
        return got

    def __getattr__(self, name):
        return getattr(self._sock, name)


def _timed_lanes(monkeypatch, **pauses):
    class TimedLane(dns_replay.Lane):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.sock = _TimedSocket(self.sock, **pauses)

    monkeypatch.setattr(dns_replay, "Lane", TimedLane)


def _latencies(lane):
    return {r["name"]: r["latency_ms"] for r in lane.records(time.time(), time.monotonic())}


def test_a_query_sent_late_in_a_burst_is_timed_from_its_own_send(monkeypatch):
    # three queries in one burst, 300 ms of work after each send: sent at 0, 0.3, 0.6 s; answered 700,
    # 500, 300 ms after each arrives, so all three answers come after the burst (at 0.7, 0.8, 0.9 s).
    # Stamped at the burst's start, they would read 700, 800, 900 ms; at its end, 100, 200, 300 ms. The
    # answers' kernel stamps keep the answers' side exact: read after the burst, they would read 900, 600, 300.
    _timed_lanes(monkeypatch, send_pause=0.3)
    delays = {"slow700-a.test": 700.0, "slow500-b.test": 500.0, "slow300-c.test": 300.0}
    with responder() as server:
        lane = dns_replay.replay([("127.0.0.1", server.port)], dns_replay.Prepared([(n, "A") for n in delays]),
                                 window=len(delays), timeouts=(5.0,), kernel_stamps=True)[0]
    got = _latencies(lane)
    for name, delay in delays.items():
        assert abs(got[name] - delay) < TOLERANCE_MS, (name, got)


def _read_late(monkeypatch, **options):
    # both sent at once; the first answer comes at once, the second 150 ms later while the client is busy for
    # 400 ms after reading the first
    _timed_lanes(monkeypatch, read_pause=0.4)
    with responder() as server:
        lane = dns_replay.replay([("127.0.0.1", server.port)],
                                 dns_replay.Prepared([("ok-a.test", "A"), ("slow150-b.test", "A")]),
                                 window=2, timeouts=(5.0,), **options)[0]
    assert lane.stray == 0 and lane.done == 2
    return lane, _latencies(lane)


def test_with_kernel_stamps_an_answer_read_late_is_timed_at_its_arrival(monkeypatch):
    # the kernel's receive stamp gives the responder's 150 ms; a time taken at the read would give 400 ms and
    # more (the client's delay, not the resolver's); one time for the batch (the first's) less than 150 ms
    lane, got = _read_late(monkeypatch, kernel_stamps=True)
    assert lane.kernel_stamps     # Linux: the kernel stamps each datagram
    assert got["ok-a.test"] < TOLERANCE_MS, got
    assert 150.0 <= got["slow150-b.test"] < 150.0 + TOLERANCE_MS, got   # read after 400 ms, arrived at 150


def test_by_default_an_answer_is_timed_at_its_own_read_as_dnsperf_times_it(monkeypatch):
    # dnsperf stamps an answer right after its recv, so the client's own delay before the read is in it: the
    # second answer read after the 400 ms pause counts 400 ms and more; the first, read at once, does not
    lane, got = _read_late(monkeypatch)
    assert not lane.kernel_stamps
    assert got["ok-a.test"] < TOLERANCE_MS, got
    assert got["slow150-b.test"] >= 400.0, got
