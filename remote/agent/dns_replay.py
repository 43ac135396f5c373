"""Replaying a query list against resolvers over UDP, as a stub resolver would, many queries in flight.

One connected UDP socket per resolver (the kernel drops datagrams from anyone else), one poll loop for
all of them. A query is sent with a random id not in flight; an answer counts only when its id is in
flight and it echoes the question sent, so a stray or late answer (to a query given up, or a second
answer to a resent one) is ignored. The stub's schedule is explicit: timeouts (1.0, 2.0) = wait 1 s,
send again (same id), wait 2 s, then it is a timeout. Latency is from the first send, as a client
waits it. A truncated answer (TC bit) is asked again over TCP when tcp_fallback is on.

Each query is stamped right before its own send (as dnsperf does) and each answer with the kernel's time of
its arrival (dns_clock; where there is none, right after its own recv): one time for a whole burst or batch
would put the burst's (or batch's) duration into every latency of it, and a time taken after the read would
put the client's own delays (waking up, reading the answers before it) into the resolver's latency.

Interleaved: every resolver gets its own copy of the list and its own window, all in the same loop,
so they see the same moments of the network; sequential: one resolver after the other (call once
per resolver).
"""
import collections
import contextlib
import errno
import os
import random
import select
import socket
import time
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple  # noqa: F401 - some only in type comments

from . import dns_clock, dns_wire
from .dns_stats import Columns
from .dns_targets import Prepared, parse_resolver, resolver_text  # noqa: F401 - this module's API too

TICK_S = 1.0
STOP_CHECK_S = 0.2
QUARANTINE_S = 30.0     # an id given up (or resent) is not used again for this long: its late answer stays stray
RCVBUF = 4 << 20
RECV_SIZE = 65535


class Lane:
    """One resolver's share of a replay: its socket, its window and what came back."""

    def __init__(self, resolver: Tuple[str, int], prepared: Prepared, total: int) -> None:
        self.resolver = resolver
        self.label = resolver_text(*resolver)
        self.prepared = prepared
        self.total = total          # queries to send: len(prepared), or more when the list is looped
        family = socket.AF_INET6 if ":" in resolver[0] else socket.AF_INET
        self.family = family
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        with contextlib.suppress(OSError):   # the kernel's limit is as good
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        self.sock.connect(resolver)
        self.sock.setblocking(False)
        self.kernel_stamps = dns_clock.enable(self.sock)
        self.sent = 0
        self.done = 0
        self.inflight = {}  # type: Dict[int, int]   # id -> sequence number
        self.quarantine = {}  # type: Dict[int, float]
        # ids: k * odd + offset (mod 2^16) runs through all 65536 before one comes back, in a scrambled order
        self.id_step = random.getrandbits(15) * 2 + 1
        self.id_next = random.getrandbits(16)
        # per sequence number: first send (monotonic), latency ms or None, rcode, tries, via
        self.first = []  # type: List[float]
        self.latency = []  # type: List[Optional[float]]
        self.rcode = []  # type: List[Optional[int]]
        self.tries = []  # type: List[int]
        self.via = []  # type: List[str]
        self.ids = []  # type: List[int]
        self.icmp_errors = 0
        self.stray = 0
        self.next_send = 0.0
        self.start = 0.0
        self.end = 0.0
        # the current second's figures, for the live ticks
        self.tick_second = 0
        self.tick_lat = []  # type: List[float]
        self.tick_timeouts = 0

    def close(self) -> None:
        self.sock.close()

    def new_id(self, now: float) -> int:
        """The next id of a cycle through all 65536: an id comes back only after every other one (a late answer
        finds it unused or asked for something else), never while in flight or quarantined."""
        inflight, quarantine = self.inflight, self.quarantine
        while True:
            qid = self.id_next
            self.id_next = (qid + self.id_step) & 0xFFFF
            if qid in inflight:
                continue
            if quarantine:
                until = quarantine.get(qid)
                if until is not None:
                    if until >= now:
                        continue
                    del quarantine[qid]
            return qid

    def columns(self) -> Any:
        """The per-query figures as dns_stats.Columns (rcode names; None for a timeout)."""
        prep, n = self.prepared, len(self.prepared)
        names = {}  # type: Dict[Optional[int], Optional[str]]
        rcodes = [names[c] if c in names else names.setdefault(c, None if c is None else dns_wire.rcode_name(c))
                  for c in self.rcode]
        return Columns(lambda i: prep.names[i % n], lambda i: prep.types[i % n], self.latency, rcodes,
                       self.tries, self.via)

    def records(self, wall0: float, mono0: float) -> List[Dict[str, Any]]:
        prep, n = self.prepared, len(self.prepared)
        out = []
        for seq in range(self.sent):
            lat = self.latency[seq]
            code = self.rcode[seq]
            out.append({"name": prep.names[seq % n], "qtype": prep.types[seq % n], "resolver": self.label,
                        "sent_at": round(wall0 + self.first[seq] - mono0, 6),
                        "latency_ms": None if lat is None else round(lat, 3),
                        "rcode": None if code is None else dns_wire.rcode_name(code),
                        "tries": self.tries[seq], "via": self.via[seq]})
        return out


class TcpAsk:
    """A truncated answer asked again over TCP: connect, send the framed query, read one framed answer."""

    def __init__(self, lane: Lane, seq: int, message: bytes, deadline: float) -> None:
        self.lane, self.seq, self.deadline = lane, seq, deadline
        self.sock = socket.socket(lane.family, socket.SOCK_STREAM)
        self.sock.setblocking(False)
        self.out = dns_wire.frame(message)
        self.inbuf = b""
        self.qid = dns_wire.HEADER.unpack_from(message, 0)[0]
        code = self.sock.connect_ex(lane.resolver)
        if code not in (0, errno.EINPROGRESS):
            raise OSError(code, os.strerror(code))


TickCallback = Callable[[Lane, int, List[float], int], None]


def replay(resolvers: Sequence[Tuple[str, int]], prepared: Prepared, window: int = 10,
           rate: Optional[float] = None, timeouts: Sequence[float] = (1.0, 2.0), tcp_fallback: bool = True,
           total: Optional[int] = None, seconds: Optional[float] = None,
           on_tick: Optional[TickCallback] = None, should_stop: Optional[Callable[[], None]] = None) -> List[Lane]:
    """Send the prepared list to every resolver at once (one lane each); returns the lanes with their figures.

    total: queries per resolver (default the list once; more loops the list); seconds: stop sending after
    this long (max mode; what is in flight then is still waited for). should_stop raises to end the run."""
    if not timeouts:
        raise ValueError("timeouts: at least one wait")
    total = len(prepared) if total is None else total
    if not prepared and total:
        raise ValueError("no query to send")
    lanes = [Lane(r, prepared, total) for r in resolvers]
    try:
        _loop(lanes, prepared, max(1, int(window)), rate, tuple(float(t) for t in timeouts), tcp_fallback,
              seconds, on_tick, should_stop)
    finally:
        for lane in lanes:
            lane.close()
    return lanes


def _loop(lanes: List[Lane], prep: Prepared, window: int, rate: Optional[float], timeouts: Tuple[float, ...],
          tcp_fallback: bool, seconds: Optional[float], on_tick: Optional[TickCallback],
          should_stop: Optional[Callable[[], None]]) -> None:
    monotonic = time.monotonic
    pack = dns_wire.HEADER.pack
    flags, arcount = prep.flags, prep.arcount
    bodies, quest, n = prep.bodies, prep.quest, len(prep)
    last_try = len(timeouts)
    # (deadline, lane, seq) per try: each try's waits are equal, so each queue is in deadline order
    waits = [collections.deque() for _ in timeouts]  # type: List[Deque[Tuple[float, int, int]]]
    poller = select.poll()
    by_fd = {}  # type: Dict[int, Lane]
    for lane in lanes:
        poller.register(lane.sock.fileno(), select.POLLIN)
        by_fd[lane.sock.fileno()] = lane
    tcp = {}  # type: Dict[int, TcpAsk]
    start = monotonic()
    for lane in lanes:
        lane.start = lane.next_send = start
    send_until = start + seconds if seconds else None
    next_check = start + STOP_CHECK_S
    interval = 1.0 / rate if rate else 0.0
    active = list(range(len(lanes)))
    clock_offset = dns_clock.offset()
    arrival, space = dns_clock.arrival, dns_clock.ANCILLARY_SPACE
    # kernel stamps make the loop's wake-up time irrelevant to a latency: the next send can be waited for to
    # the microsecond (a sleep), not to poll's millisecond, which would send a rate's queries in pairs
    fine_pacing = bool(interval) and all(lane.kernel_stamps for lane in lanes)

    def finish(lane: Lane, seq: int, now: float, code: Optional[int], via: str) -> None:
        if code is None:
            lane.latency[seq] = None
            lane.tick_timeouts += 1
        else:
            ms = (now - lane.first[seq]) * 1000.0
            lane.latency[seq] = ms
            lane.rcode[seq] = code
            lane.tick_lat.append(ms)
        lane.via[seq] = via
        lane.done += 1
        lane.end = now

    def go_tcp(lane: Lane, seq: int, qid: int, now: float) -> None:
        message = pack(qid, flags, 1, 0, 0, arcount) + bodies[seq % n]
        try:
            ask = TcpAsk(lane, seq, message, now + max(timeouts))
        except OSError:
            finish(lane, seq, now, None, "tcp")
            return
        tcp[ask.sock.fileno()] = ask
        poller.register(ask.sock.fileno(), select.POLLOUT)

    def tcp_event(ask: TcpAsk, event: int, now: float) -> None:
        fd = ask.sock.fileno()
        done = False
        try:
            if ask.out and event & (select.POLLOUT | select.POLLERR | select.POLLHUP):
                sent = ask.sock.send(ask.out)
                ask.out = ask.out[sent:]
                if not ask.out:
                    poller.modify(fd, select.POLLIN)
            elif event & (select.POLLIN | select.POLLERR | select.POLLHUP):
                chunk = ask.sock.recv(RECV_SIZE)
                now = monotonic()
                if not chunk:
                    raise OSError(errno.ECONNRESET, "closed")
                ask.inbuf += chunk
                messages, ask.inbuf = dns_wire.unframe(ask.inbuf)
                for data in messages:
                    if len(data) >= 12 and dns_wire.HEADER.unpack_from(data, 0)[0] == ask.qid and data[2] & 0x80:
                        finish(ask.lane, ask.seq, now, data[3] & 0x0F, "tcp")
                        done = True
                        break
        except (OSError, ValueError):
            finish(ask.lane, ask.seq, now, None, "tcp")
            done = True
        if done:
            poller.unregister(fd)
            del tcp[fd]
            ask.sock.close()

    while True:
        now = monotonic()
        # -- send: round robin over the lanes, each up to its window and its rate ---------------------------
        for index in active:
            lane = lanes[index]
            inflight = lane.inflight
            room = min(window - len(inflight), lane.total - lane.sent)
            if room <= 0:
                continue
            if send_until is not None and now >= send_until:
                lane.total = lane.sent
                continue
            if interval:
                if lane.next_send > now:
                    continue
                room = min(room, int((now - lane.next_send) / interval) + 1)
            send, new_id, first, ids = lane.sock.send, lane.new_id, lane.first, lane.ids
            latency, rcode, tries, via = lane.latency, lane.rcode, lane.tries, lane.via
            first_wait = waits[0]
            wait0 = timeouts[0]
            before = lane.sent
            for _ in range(room):
                seq = lane.sent
                qid = new_id(now)
                message = pack(qid, flags, 1, 0, 0, arcount) + bodies[seq % n]
                sent_at = monotonic()
                try:
                    send(message)
                except OSError as exc:
                    if exc.errno in (errno.EAGAIN, errno.ENOBUFS):
                        break       # the socket's buffer is full: poll, then go on
                    if exc.errno != errno.ECONNREFUSED:
                        raise
                    # an earlier query's "port unreachable", said instead of sending this one: once more
                    lane.icmp_errors += 1
                    with contextlib.suppress(OSError):
                        send(message)
                lane.sent = seq + 1
                first.append(sent_at)
                latency.append(None)
                rcode.append(None)
                tries.append(1)
                via.append("udp")
                ids.append(qid)
                inflight[qid] = seq
                first_wait.append((sent_at + wait0, index, seq))
            if interval:
                lane.next_send = max(lane.next_send + interval * (lane.sent - before), now - 1.0)   # no burst
        if all(lane.done >= lane.total for lane in lanes) and not tcp:
            break
        # -- wait for an answer, the next timeout, the next send slot or the next tick ------------------------
        now = monotonic()   # a long burst moved the clock on: wait from here, not from before it
        wake = now + STOP_CHECK_S
        for wait in waits:
            if wait and wait[0][0] < wake:
                wake = wait[0][0]
        if interval:
            for index in active:
                lane = lanes[index]
                if lane.sent < lane.total and len(lane.inflight) < window and lane.next_send < wake:
                    wake = lane.next_send
        for ask in tcp.values():
            if ask.deadline < wake:
                wake = ask.deadline
        if fine_pacing:
            events = poller.poll(max(0, int((wake - now) * 1000.0)))
            if not events:
                now = monotonic()
                if wake > now:
                    time.sleep(wake - now)
        else:
            events = poller.poll(max(0, int((wake - now) * 1000.0 + 0.999)))
        now = monotonic()
        for fd, event in events:
            lane = by_fd.get(fd)
            if lane is None:
                ask = tcp.get(fd)
                if ask is not None:
                    tcp_event(ask, event, now)
                continue
            recv, recvmsg, stamps = lane.sock.recv, lane.sock.recvmsg, lane.kernel_stamps
            inflight, quarantine = lane.inflight, lane.quarantine
            first, latency, rcode, tries, tick_lat = lane.first, lane.latency, lane.rcode, lane.tries, lane.tick_lat
            ancillary = ()  # type: Any
            while True:
                try:
                    if stamps:
                        data, ancillary, _flags, _from = recvmsg(RECV_SIZE, space)
                    else:
                        data = recv(RECV_SIZE)
                except (BlockingIOError, InterruptedError):
                    break
                except ConnectionRefusedError:
                    lane.icmp_errors += 1
                    continue
                now = monotonic()
                if len(data) < 12 or not data[2] & 0x80:
                    lane.stray += 1
                    continue
                qid = (data[0] << 8) | data[1]
                seq = inflight.get(qid)
                if seq is None:
                    lane.stray += 1
                    continue
                q = quest[seq % n]
                echoed = data[12:12 + len(q)]
                if echoed != q and (echoed[:-4].lower() != q[:-4] or echoed[-4:] != q[-4:]):
                    lane.stray += 1     # another question (0x20 case changes aside): not this query's answer
                    continue
                del inflight[qid]
                if tries[seq] > 1:
                    quarantine[qid] = now + QUARANTINE_S   # the other try's answer may still come
                if data[2] & 0x02 and tcp_fallback:
                    quarantine[qid] = now + QUARANTINE_S
                    go_tcp(lane, seq, qid, now)
                    continue
                arrived = arrival(ancillary, clock_offset) if ancillary else None
                if arrived is None or not first[seq] <= arrived <= now:
                    arrived = now
                ms = (arrived - first[seq]) * 1000.0
                latency[seq] = ms
                rcode[seq] = data[3] & 0x0F
                tick_lat.append(ms)
                lane.done += 1
                lane.end = now
        # -- timeouts: resend with the same id, or give up ---------------------------------------------------
        for level, wait in enumerate(waits):
            while wait and wait[0][0] <= now:
                _deadline, index, seq = wait.popleft()
                lane = lanes[index]
                qid = lane.ids[seq]
                if lane.inflight.get(qid) != seq or lane.tries[seq] != level + 1:
                    continue    # answered (or already moved on)
                if level + 1 >= last_try:
                    del lane.inflight[qid]
                    lane.quarantine[qid] = now + QUARANTINE_S
                    finish(lane, seq, now, None, "udp")
                    continue
                message = pack(qid, flags, 1, 0, 0, arcount) + bodies[seq % n]
                try:
                    lane.sock.send(message)
                except OSError as exc:
                    if exc.errno == errno.ECONNREFUSED:
                        lane.icmp_errors += 1
                        with contextlib.suppress(OSError):
                            lane.sock.send(message)
                    elif exc.errno not in (errno.EAGAIN, errno.ENOBUFS):
                        raise
                lane.tries[seq] = level + 2
                waits[level + 1].append((now + timeouts[level + 1], index, seq))
        for ask in [a for a in tcp.values() if a.deadline <= now]:
            fd = ask.sock.fileno()
            poller.unregister(fd)
            del tcp[fd]
            ask.sock.close()
            finish(ask.lane, ask.seq, now, None, "tcp")
        # -- a second is over: tell the live view; a stop request ends the replay here -------------------------
        if on_tick is not None:
            for lane in lanes:
                second = int((now - lane.start) / TICK_S)
                while lane.tick_second < second:
                    on_tick(lane, lane.tick_second, lane.tick_lat, lane.tick_timeouts)
                    lane.tick_second += 1
                    lane.tick_lat, lane.tick_timeouts = [], 0
        if now >= next_check:
            next_check = now + STOP_CHECK_S
            clock_offset = dns_clock.offset()
            if should_stop is not None:
                should_stop()
    if on_tick is not None:   # the last, partial second
        for lane in lanes:
            if lane.tick_lat or lane.tick_timeouts:
                on_tick(lane, lane.tick_second, lane.tick_lat, lane.tick_timeouts)
