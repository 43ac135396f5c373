"""What the dns benchmarks start and read alike: the test suite's DNS servers on loopback, a query list of their
zone, and the CPU time and load figures that say how far a measurement on a shared machine can be trusted.

tests/fixtures/dns_servers.py: NSD serving bench.test. (with a Python authority for odd.bench.test. and a
blackhole for void.bench.test. beside it) and Unbound as the caching resolver in front, one thread, on their
own 127.0.0.x addresses. Needs nsd and unbound (Debian packages) and the right to bind 127.0.0.x.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures.dns_authority import Blackhole, OddAuthority  # noqa: E402
from tests.fixtures.dns_query_list import QueryList, build_query_list  # noqa: E402
from tests.fixtures.dns_servers import (  # noqa: E402
    ODD_ADDRESS,
    ODD_ZONE,
    VOID_ADDRESS,
    Authorities,
    Daemon,
    odd_kind,
    start_nsd,
    start_unbound,
)

__all__ = ["Authorities", "Daemon", "authorities", "cpu_seconds", "load", "pin", "scratch", "unbound", "zone_list"]


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temporary directory for the servers' configurations and the query files, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def authorities(root: Path, address: str | None = None) -> Iterator[Authorities]:
    """NSD, the odd authority and the blackhole, stopped on the way out (also when starting one fails); all three
    on `address` (each on a port of its own) when given, else on the suite's loopback addresses."""
    nsd = start_nsd(root / "nsd", address) if address else start_nsd(root / "nsd")
    odd = void = None
    try:
        odd = OddAuthority(address or ODD_ADDRESS, ODD_ZONE, odd_kind)
        void = Blackhole(address or VOID_ADDRESS)
        yield Authorities(nsd, odd, void)
    finally:
        for server in (odd, void):
            if server is not None:
                server.close()
        nsd.stop()


@contextlib.contextmanager
def unbound(root: Path, auth: Authorities, address: str | None = None) -> Iterator[Daemon]:
    """A fresh Unbound (cold cache) in front of `auth`, in its own directory under root; on `address` (and
    asking the authorities from it) when given."""
    daemon = start_unbound(root, auth, address, address) if address else start_unbound(root, auth)
    try:
        yield daemon
    finally:
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


def zone_list(total: int, missing: int) -> QueryList:
    """`total` names of the zone in a shuffled order, `missing` of them names that do not exist (NXDOMAIN); none
    slow, failing, truncated or lost: what is timed is the resolver's and the client's own speed."""
    return build_query_list(total=total, missing=missing, slow=0, servfail=0, big=0, lost=0)


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) a process has used so far: this one when pid is None."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pin(pid: int, cpus: set[int]) -> None:
    """Every thread of a process onto these CPUs (children started afterwards inherit them)."""
    for task in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(task), cpus)


def load() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]
