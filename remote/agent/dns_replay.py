"""Replaying a query list against resolvers over UDP, as a stub resolver would, many queries in flight.

One connected UDP socket per resolver (the kernel drops datagrams from anyone else), one poll loop for
all of them. A query is sent with a random id not in flight; an answer counts only when its id is in
flight and it echoes the question sent, so a stray or late answer (to a query given up, or a second
answer to a resent one) is ignored. The stub's schedule is explicit: timeouts (1.0, 2.0) = wait 1 s,
send again (same id), wait 2 s, then it is a timeout. Latency is from the first send, as a client
waits it. A truncated answer (TC bit) is asked again over TCP when tcp_fallback is on.

Each query is stamped right before its own send and each answer right after its own recv, as dnsperf does:
one time for a whole burst or batch would put the burst's (or batch's) duration into every latency of it.
kernel_stamps=True takes the kernel's time of the answer's arrival instead (dns_clock), which leaves the
client's own delays (waking up, reading the answers before it) out of the latency: the resolver's and the
network's time alone, lower than dnsperf's by those delays.

Interleaved: every resolver gets its own copy of the list and its own window, all in the same loop,
so they see the same moments of the network; sequential: one resolver after the other (call once
per resolver).
"""
import collections
import contextlib
import errno
import gc
import select
import time
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple  # noqa: F401 - some only in type comments

from . import dns_clock, dns_wire
from .dns_lane import RCVBUF, Lane  # noqa: F401 - this module's API too
from .dns_targets import Prepared, parse_resolver, resolver_text  # noqa: F401 - this module's API too
from .dns_tcp import RECV_SIZE, TcpAsk, TcpAsks  # noqa: F401 - this module's API too

TICK_S = 1.0
STOP_CHECK_S = 0.2
QUARANTINE_S = 30.0     # an id given up (or resent) is not used again for this long: its late answer stays stray
# a UDP answer is read as far as the header and the question it echoes (12 + at most 255 + 4 bytes), all a stub
# looks at: a buffer this small comes from Python's own allocator, a 64 KiB one from malloc, on every answer
UDP_READ = 320

TickCallback = Callable[[Lane, int, List[float], int], None]


def replay(resolvers: Sequence[Tuple[str, int]], prepared: Prepared, window: int = 10,
           rate: Optional[float] = None, timeouts: Sequence[float] = (1.0, 2.0), tcp_fallback: bool = True,
           total: Optional[int] = None, seconds: Optional[float] = None,
           on_tick: Optional[TickCallback] = None, should_stop: Optional[Callable[[], None]] = None,
           kernel_stamps: bool = False) -> List[Lane]:
    """Send the prepared list to every resolver at once (one lane each); returns the lanes with their figures.

    total: queries per resolver (default the list once; more loops the list); seconds: stop sending after
    this long (max mode; what is in flight then is still waited for). should_stop raises to end the run.
    kernel_stamps=True times each answer with the kernel's receive time (Linux; where there is none, the lane
    says so and reads as by default): recvmsg() with the stamp costs about a quarter of the client's CPU per
    answer more than the plain recv() of an answer timed at the read."""
    if not timeouts:
        raise ValueError("timeouts: at least one wait")
    total = len(prepared) if total is None else total
    if not prepared and total:
        raise ValueError("no query to send")
    lanes = [Lane(r, prepared, total, kernel_stamps) for r in resolvers]
    collecting = gc.isenabled()
    # the loop makes no reference cycles; a collection would walk the per-query columns (millions of items in a
    # long max-mode run) in the middle of sends and reads, a pause of milliseconds in the latencies
    gc.disable()
    try:
        _loop(lanes, prepared, max(1, int(window)), rate, tuple(float(t) for t in timeouts), tcp_fallback,
              seconds, on_tick, should_stop)
    finally:
        if collecting:
            gc.enable()
        for lane in lanes:
            lane.trim()
            lane.close()
    return lanes


def _other_question(data: bytes, q: bytes) -> bool:
    """Whether an answer echoes another question than q, a query's question as sent (lower case): a resolver
    may echo the name in other case (0x20 randomisation), never another name, type or class."""
    echoed = data[12:12 + len(q)]
    return echoed[:-4].lower() != q[:-4] or echoed[-4:] != q[-4:]


def _answers_within(socks: List[Any], seconds: float) -> bool:
    """Wait up to `seconds` (to the microsecond, unlike poll) for an answer on any of socks; True if one came."""
    try:
        return bool(select.select(socks, (), (), seconds)[0])
    except ValueError:      # a descriptor past select's FD_SETSIZE (a process with 1,024 files open): just wait
        time.sleep(seconds)
        return False


def _send_again(lane: Lane, message: bytes) -> None:
    try:
        lane.sock.send(message)
    except OSError as exc:
        if exc.errno == errno.ECONNREFUSED:
            # an earlier query's "port unreachable", said instead of sending this one: once more
            lane.icmp_errors += 1
            with contextlib.suppress(OSError):
                lane.sock.send(message)
        elif exc.errno not in (errno.EAGAIN, errno.ENOBUFS):
            raise


def _loop(lanes: List[Lane], prep: Prepared, window: int, rate: Optional[float], timeouts: Tuple[float, ...],
          tcp_fallback: bool, seconds: Optional[float], on_tick: Optional[TickCallback],
          should_stop: Optional[Callable[[], None]]) -> None:
    monotonic = time.monotonic
    pack = dns_wire.HEADER.pack
    flags, arcount = prep.flags, prep.arcount
    bodies, quest, n = prep.bodies, prep.quest, len(prep)
    # each query's message built once; a send only writes its id into the first two bytes
    wires = [bytearray(pack(0, flags, 1, 0, 0, arcount) + body) for body in bodies]
    last_try = len(timeouts)
    wait0 = timeouts[0]
    # the first wait of each query ends in send order (lane.expire_from walks it); the later waits, rarer, are
    # queues of (deadline, lane, seq), each in deadline order as each try's waits are equal
    waits = [collections.deque() for _ in timeouts]  # type: List[Deque[Tuple[float, int, int]]]
    poller = select.poll()
    by_fd = {}  # type: Dict[int, Lane]
    for lane in lanes:
        poller.register(lane.sock.fileno(), select.POLLIN)
        by_fd[lane.sock.fileno()] = lane
    start = monotonic()
    for lane in lanes:
        lane.start = lane.next_send = start
    send_until = start + seconds if seconds else None
    next_check = start + STOP_CHECK_S
    interval = 1.0 / rate if rate else 0.0
    active = list(range(len(lanes)))
    clock_offset = dns_clock.offset()
    space, unpack_stamp = dns_clock.ANCILLARY_SPACE, dns_clock.TIMESPEC.unpack_from
    stamped_kind, stamp_size = dns_clock.SO_TIMESTAMPNS, dns_clock.TIMESPEC.size
    ticking = on_tick is not None
    # at a rate the next send is waited for to the microsecond, not to poll's millisecond (which would send a
    # rate's queries in pairs): the last part of the wait is a select on the answers' sockets, so an answer
    # that arrives meanwhile is still read (and timed) at once
    fine_pacing = bool(interval)
    answer_socks = [lane.sock for lane in lanes]

    def finish(lane: Lane, seq: int, now: float, code: Optional[int], via: str) -> None:
        if code is None:
            lane.latency[seq] = None
            lane.tick_timeouts += 1
        else:
            ms = (now - lane.first[seq]) * 1000.0
            lane.latency[seq] = ms
            lane.rcode[seq] = code
            if ticking:
                lane.tick_lat.append(ms)
        lane.via[seq] = via
        lane.done += 1
        lane.end = now

    tcp = TcpAsks(poller, finish, monotonic)

    def expired(lane: Lane, index: int, seq: int, level: int, now: float) -> None:
        """A try's wait is over: send again with the same id, or after the last one, a timeout."""
        qid = lane.ids[seq]
        if level + 1 >= last_try:
            lane.slot[qid] = -1
            lane.in_flight -= 1
            lane.quarantine[qid] = now + QUARANTINE_S
            finish(lane, seq, now, None, "udp")
            return
        _send_again(lane, pack(qid, flags, 1, 0, 0, arcount) + bodies[seq % n])
        lane.tries[seq] = level + 2
        waits[level + 1].append((now + timeouts[level + 1], index, seq))

    try:
        while True:
            now = monotonic()
            # -- send: round robin over the lanes, each up to its window and its rate -----------------------
            for index in active:
                lane = lanes[index]
                room = min(window - lane.in_flight, lane.total - lane.sent)
                if room <= 0:
                    continue
                if send_until is not None and now >= send_until:
                    lane.total = lane.sent
                    continue
                if interval:
                    if lane.next_send > now:
                        continue
                    room = min(room, int((now - lane.next_send) / interval) + 1)
                sent = before = lane.sent
                if sent + room > lane.capacity:
                    lane.grow(sent + room)
                send, first, ids, slot, quarantine = lane.sock.send, lane.first, lane.ids, lane.slot, lane.quarantine
                id_next, id_step = lane.id_next, lane.id_step
                for _ in range(room):
                    qid = id_next
                    id_next = (qid + id_step) & 0xFFFF
                    if slot[qid] >= 0 or quarantine:    # rare: a slow query still holds it, or ids set aside
                        lane.id_next = id_next
                        qid = lane.free_id(qid, now)
                        id_next = lane.id_next
                    message = wires[sent % n]
                    message[0] = qid >> 8
                    message[1] = qid & 0xFF
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
                    first[sent] = sent_at
                    ids[sent] = qid
                    slot[qid] = sent
                    sent += 1
                lane.id_next = id_next
                lane.in_flight += sent - before
                lane.sent = sent
                if interval:
                    lane.next_send = max(lane.next_send + interval * (sent - before), now - 1.0)   # no burst
            if not tcp and all(lane.done >= lane.total for lane in lanes):
                break
            # -- wait for an answer, the next timeout, the next send slot or the next tick --------------------
            now = monotonic()   # a long burst moved the clock on: wait from here, not from before it
            wake = now + STOP_CHECK_S
            for lane in lanes:
                if lane.expire_from < lane.sent and lane.first[lane.expire_from] + wait0 < wake:
                    wake = lane.first[lane.expire_from] + wait0
            for wait in waits:
                if wait and wait[0][0] < wake:
                    wake = wait[0][0]
            if interval:
                for index in active:
                    lane = lanes[index]
                    if lane.sent < lane.total and lane.in_flight < window and lane.next_send < wake:
                        wake = lane.next_send
            if tcp:
                wake = tcp.earliest(wake)
            if fine_pacing:
                events = poller.poll(max(0, int((wake - now) * 1000.0)))
                if not events:
                    now = monotonic()
                    if wake > now and _answers_within(answer_socks, wake - now):
                        events = poller.poll(0)
            else:
                events = poller.poll(max(0, int((wake - now) * 1000.0 + 0.999)))
            now = monotonic()
            for fd, event in events:
                lane = by_fd.get(fd)
                if lane is None:
                    tcp.event(fd, event, now)
                    continue
                # every answer waiting is read in this wake-up, until the socket says EAGAIN
                recv, recvmsg, stamps = lane.sock.recv, lane.sock.recvmsg, lane.kernel_stamps
                slot, quarantine = lane.slot, lane.quarantine
                first, latency, rcode, tries, tick_lat = lane.first, lane.latency, lane.rcode, lane.tries, lane.tick_lat
                answered = 0
                ancillary = ()  # type: Any
                while True:
                    try:
                        if stamps:
                            data, ancillary, _flags, _from = recvmsg(UDP_READ, space)
                        else:
                            data = recv(UDP_READ)
                    except (BlockingIOError, InterruptedError):
                        break
                    except ConnectionRefusedError:
                        lane.icmp_errors += 1
                        continue
                    if len(data) < 12 or not data[2] & 0x80:
                        lane.stray += 1
                        continue
                    qid = (data[0] << 8) | data[1]
                    seq = slot[qid]
                    if seq < 0:
                        lane.stray += 1
                        continue
                    q = quest[seq % n]
                    if not data.startswith(q, 12) and _other_question(data, q):
                        lane.stray += 1     # another question (0x20 case changes aside): not this query's answer
                        continue
                    slot[qid] = -1
                    lane.in_flight -= 1
                    if tries[seq] > 1:
                        quarantine[qid] = now + QUARANTINE_S   # the other try's answer may still come
                    if data[2] & 0x02 and tcp_fallback:
                        quarantine[qid] = now + QUARANTINE_S
                        tcp.start(lane, seq, pack(qid, flags, 1, 0, 0, arcount) + bodies[seq % n], now,
                                  max(timeouts))
                        continue
                    sent_at = first[seq]
                    arrived = now + 1.0
                    if ancillary:   # the kernel's receive time (SO_TIMESTAMPNS, the only one asked for)
                        _level, kind, stamp = ancillary[0]
                        if kind == stamped_kind and len(stamp) >= stamp_size:
                            sec, nsec = unpack_stamp(stamp)
                            arrived = (sec - clock_offset) + nsec * 1e-9
                    if arrived > now:   # read after `now` was taken (or no stamp): the clock now
                        now = monotonic()
                    if not sent_at <= arrived <= now:
                        arrived = now
                    ms = (arrived - sent_at) * 1000.0
                    latency[seq] = ms
                    rcode[seq] = data[3] & 0x0F
                    if ticking:
                        tick_lat.append(ms)
                    answered += 1
                if answered:
                    lane.done += answered
                    lane.end = now
            # -- timeouts: resend with the same id, or give up ------------------------------------------------
            for index, lane in enumerate(lanes):
                seq = lane.expire_from
                first, ids, slot = lane.first, lane.ids, lane.slot
                while seq < lane.sent and first[seq] + wait0 <= now:
                    if slot[ids[seq]] == seq and lane.tries[seq] == 1:
                        expired(lane, index, seq, 0, now)
                    seq += 1
                lane.expire_from = seq
            for level in range(1, last_try):
                wait = waits[level]
                while wait and wait[0][0] <= now:
                    _deadline, index, seq = wait.popleft()
                    lane = lanes[index]
                    if lane.slot[lane.ids[seq]] == seq and lane.tries[seq] == level + 1:
                        expired(lane, index, seq, level, now)
            if tcp:
                tcp.expire(now)
            # -- a second is over: tell the live view; a stop request ends the replay here --------------------
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
    finally:
        for ask in list(tcp.asks.values()):
            ask.sock.close()
    if on_tick is not None:   # the last, partial second
        for lane in lanes:
            if lane.tick_lat or lane.tick_timeouts:
                on_tick(lane, lane.tick_second, lane.tick_lat, lane.tick_timeouts)
