"""The built-in engine's maximum-throughput mode on several cores: one forked process per share of the window.

Python sends from one core; dnsperf sends and receives in threads of its own. For mode=max without dnsperf
(and for comparing the two), the window is split over `processes` children, each with its own socket and
replay loop for the same time. Each child sends its second-by-second figures and, at the end, its per-query
columns back over a pipe (pickled frames); the parent adds them up. A child whose parent is gone stops.
"""
import contextlib
import os
import pickle
import select
import signal
import struct
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple  # noqa: F401 - some only in type comments

from . import dns_replay, dns_stats, dns_wire
from .tool_cpu import whole_cpus

_LEN = struct.Struct(">I")


class Share:
    """What one child measured: its per-query columns and its time span (monotonic, same clock as the parent)."""

    def __init__(self, state: Dict[str, Any], prepared: Any) -> None:
        self.sent = state["sent"]
        self.latency = state["latency"]
        self.rcode = state["rcode"]
        self.tries = state["tries"]
        self.via = state["via"]
        self.start, self.end, self.stray = state["start"], state["end"], state["stray"]
        self.prepared = prepared


def _write(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=2)
    view = memoryview(_LEN.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _child(fd: int, resolver: Tuple[str, int], prepared: Any, window: int, timeout: float, seconds: float,
           parent: int) -> None:
    def tick(lane: Any, second: int, latencies: List[float], timeouts: int) -> None:
        _write(fd, ("tick", second, latencies, timeouts))

    def orphaned() -> None:
        if os.getppid() != parent:
            raise SystemExit(1)

    # answers timed at the read, as dnsperf's are: the kernel's stamp (recvmsg) costs a quarter of the CPU per
    # answer of a client that is CPU-bound here
    lane = dns_replay.replay([resolver], prepared, window=window, timeouts=(timeout,), total=10 ** 9,
                             seconds=seconds, on_tick=tick, should_stop=orphaned, kernel_stamps=False)[0]
    names = {}  # type: Dict[Any, Any]
    rcodes = [names[c] if c in names else names.setdefault(c, None if c is None else dns_wire.rcode_name(c))
              for c in lane.rcode]
    _write(fd, ("done", {"sent": lane.sent, "latency": lane.latency, "rcode": rcodes, "tries": lane.tries,
                         "via": lane.via, "start": lane.start, "end": lane.end, "stray": lane.stray}))


def replay_max(resolver: Tuple[str, int], prepared: Any, window: int, timeout: float, seconds: float,
               processes: int, on_tick: Optional[Callable[[int, List[float], int], None]] = None,
               should_stop: Optional[Callable[[], None]] = None, on_child: Optional[Callable[[int], None]] = None
               ) -> Tuple[dns_stats.Columns, float, int]:
    """Send the list in a loop for `seconds` from `processes` children; (columns, elapsed s, stray answers)."""
    processes = max(1, int(processes))
    children = []  # type: List[Tuple[int, int]]
    parent = os.getpid()
    try:
        for index in range(processes):
            share = window // processes + (1 if index < window % processes else 0)
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:    # the child: replay, report, leave without running the parent's cleanups
                code = 0
                try:
                    os.close(read_fd)
                    _child(write_fd, resolver, prepared, max(1, share), timeout, seconds, parent)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            os.close(write_fd)
            children.append((pid, read_fd))
            if on_child is not None:
                on_child(pid)
        return _collect(children, prepared, on_tick, should_stop)
    finally:
        for pid, read_fd in children:   # a child still sending (a stop, an error) ends here; all are reaped
            with contextlib.suppress(OSError):
                os.close(read_fd)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _collect(children: Sequence[Tuple[int, int]], prepared: Any, on_tick: Any, should_stop: Any
             ) -> Tuple[dns_stats.Columns, float, int]:
    buffers = {fd: b"" for _pid, fd in children}
    done = {}  # type: Dict[int, Share]
    ticks = {}  # type: Dict[int, List[Any]]   # second -> [latencies, timeouts, children reported]
    open_fds = set(buffers)
    while open_fds:
        ready, _w, _x = select.select(list(open_fds), [], [], 0.2)
        if should_stop is not None:
            should_stop()
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                open_fds.discard(fd)
                continue
            buffers[fd] += chunk
            while len(buffers[fd]) >= 4:
                size = _LEN.unpack_from(buffers[fd], 0)[0]
                if len(buffers[fd]) < 4 + size:
                    break
                message = pickle.loads(buffers[fd][4:4 + size])
                buffers[fd] = buffers[fd][4 + size:]
                if message[0] == "done":
                    done[fd] = Share(message[1], prepared)
                    continue
                _kind, second, latencies, timeouts = message
                entry = ticks.setdefault(second, [[], 0, 0])
                entry[0].extend(latencies)
                entry[1] += timeouts
                entry[2] += 1
                if entry[2] == len(children) and on_tick is not None:
                    on_tick(second, entry[0], entry[1])
                    del ticks[second]
    for second in sorted(ticks):    # the last seconds, which not every child reached
        if on_tick is not None:
            on_tick(second, ticks[second][0], ticks[second][1])
    if len(done) != len(children):
        raise RuntimeError("dns: {} of {} sending processes ended without their figures".format(
            len(children) - len(done), len(children)))
    shares = list(done.values())
    return _merged(shares, prepared), max(s.end for s in shares) - min(s.start for s in shares), sum(
        s.stray for s in shares)


def _merged(shares: Sequence[Share], prepared: Any) -> dns_stats.Columns:
    latency, rcode, tries, via, index = [], [], [], [], []  # type: List[Any], List[Any], List[int], List[str], List[int]
    for share in shares:
        latency.extend(share.latency)
        rcode.extend(share.rcode)
        tries.extend(share.tries)
        via.extend(share.via)
        index.extend(range(share.sent))
    n = len(prepared)
    return dns_stats.Columns(lambda i: prepared.names[index[i] % n], lambda i: prepared.types[index[i] % n],
                             latency, rcode, tries, via)


def default_processes() -> int:
    """Two senders (dnsperf runs a sender and a receiver thread) where a core is left for everything else: on
    a 2-core host a second sender only competes with the first (and with a resolver on the same host). The cores
    are the ones this process may run on (tool_cpu.usable_cpus)."""
    return max(1, min(2, whole_cpus() - 1))


def measure(resolver: Tuple[str, int], queries: Sequence[Tuple[str, str]], window: int = 100, timeout: float = 5.0,
            seconds: float = 10.0, processes: Optional[int] = None) -> Dict[str, Any]:
    """For a benchmark: the built-in max mode's figures (dns_stats.summarise) against one resolver."""
    prepared = dns_replay.Prepared(queries)
    start = time.monotonic()
    columns, elapsed, _stray = replay_max(resolver, prepared, window, timeout, seconds,
                                          processes or default_processes())
    figures = dns_stats.summarise(columns, elapsed or time.monotonic() - start)
    return figures
