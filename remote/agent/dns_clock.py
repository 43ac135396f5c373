"""When an answer arrived: the kernel's receive time of each datagram (SO_TIMESTAMPNS), on the replay's clock.

A time taken in Python after recv() also holds the loop's own delays: waking from poll, reading the answers
before it in a batch, a busy machine's scheduling. The kernel stamps the datagram as it reaches the socket,
so the latency is the resolver's and the network's alone, whatever the client was doing. The stamp is on the
realtime clock; the replay keeps time on the monotonic one, so the stamp is moved by their offset (measured
again and again, so a slewed clock follows). A stamp that does not fall between the query's send and the
read (a clock stepped meanwhile) is not used: the read's time is.
"""
import platform
import socket
import struct
import sys
import time
from typing import Any, List, Optional, Tuple  # noqa: F401 - some only in type comments

# Linux's SO_TIMESTAMPNS (= SCM_TIMESTAMPNS); Python's socket module does not name it. Alpha, HP PA and SPARC
# number their socket options otherwise: there the read's own time is used.
SO_TIMESTAMPNS = 35
_OTHER_NUMBERS = ("alpha", "parisc", "sparc")
TIMESPEC = struct.Struct("@ll")     # the stamp's struct timespec (the replay reads it inline, per answer)
ANCILLARY_SPACE = socket.CMSG_SPACE(TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0


def enable(sock: socket.socket) -> bool:
    """Ask the kernel to stamp every datagram sock receives; False where it cannot (then stamp after recv)."""
    machine = platform.machine().lower()
    if not sys.platform.startswith("linux") or not ANCILLARY_SPACE or machine.startswith(_OTHER_NUMBERS):
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


def offset() -> float:
    """realtime - monotonic, from the tightest of three back-to-back readings (a preempted one is wide)."""
    best = None  # type: Optional[Tuple[float, float]]
    for _ in range(3):
        before = time.monotonic()
        real = time.time()
        after = time.monotonic()
        if best is None or after - before < best[0]:
            best = (after - before, real - (before + after) / 2.0)
    assert best is not None
    return best[1]

