"""One resolver's share of a replay: its socket, its ids in flight and its per-query columns.

The hot path (dns_replay's loop) touches only flat lists: `slot[qid]` is the sequence number a query id is in
flight for (-1 when free), and the per-query columns are grown in chunks filled with what an unanswered UDP query
has (no answer, one try, via UDP), so a send writes three items and an answer three, with no dict, tuple or
append per query. `trim()` cuts the columns to the queries sent when the replay ends.
"""
import contextlib
import random
import socket
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from . import dns_clock, dns_wire
from .dns_stats import Columns
from .dns_targets import Prepared, resolver_text

RCVBUF = 4 << 20
CHUNK = 4096            # per-query columns grow by this many entries at a time
ID_SPACE = 1 << 16


class Lane:
    """One resolver's share of a replay: its socket, its window and what came back."""

    def __init__(self, resolver: Tuple[str, int], prepared: Prepared, total: int, kernel_stamps: bool = False) -> None:
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
        self.kernel_stamps = dns_clock.enable(self.sock) if kernel_stamps else False
        self.sent = 0
        self.done = 0
        self.in_flight = 0
        self.slot = [-1] * ID_SPACE     # id -> sequence number in flight, -1 when the id is free
        self.quarantine = {}  # type: Dict[int, float]
        # ids: k * odd + offset (mod 2^16) runs through all 65536 before one comes back, in a scrambled order
        self.id_step = random.getrandbits(15) * 2 + 1
        self.id_next = random.getrandbits(16)
        # per sequence number: first send (monotonic), latency ms or None, rcode, tries, via, id
        self.first = []  # type: List[float]
        self.latency = []  # type: List[Optional[float]]
        self.rcode = []  # type: List[Optional[int]]
        self.tries = []  # type: List[int]
        self.via = []  # type: List[str]
        self.ids = []  # type: List[int]
        self.capacity = 0
        self.expire_from = 0            # the first sequence number whose first wait may not be over
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

    def grow(self, needed: int) -> None:
        """Room in the per-query columns for sequence numbers below `needed`."""
        more = max(CHUNK, needed - self.capacity)
        self.first += [0.0] * more
        self.latency += [None] * more
        self.rcode += [None] * more
        self.tries += [1] * more
        self.via += ["udp"] * more
        self.ids += [0] * more
        self.capacity += more

    def trim(self) -> None:
        """The per-query columns cut to the queries sent."""
        for column in (self.first, self.latency, self.rcode, self.tries, self.via, self.ids):
            del column[self.sent:]
        self.capacity = self.sent

    def free_id(self, qid: int, now: float) -> int:
        """qid if it is free, else the next free id of the cycle through all 65536 (an id comes back only after
        every other one, so a late answer finds it unused or asked for something else); never an id in flight or
        quarantined. Moves the cycle on past what it returns."""
        slot, quarantine = self.slot, self.quarantine
        while True:
            if slot[qid] < 0:
                until = quarantine.get(qid)
                if until is None:
                    return qid
                if until < now:
                    del quarantine[qid]
                    return qid
            qid = self.id_next
            self.id_next = (qid + self.id_step) & 0xFFFF

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

