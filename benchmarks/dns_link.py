"""The dns benchmarks' resolver across a link: the test suite's NSD (with the odd authority and the blackhole beside
it) and Unbound in a private network namespace, the clients in another, a veth pair between them with `tc netem`
delaying every packet (tests/fixtures/netns.py makes and removes them); where the kernel has no netem (the
qdisc is a build option), a relay in the resolver's namespace holds the packets instead (benchmarks/dns_delay.py).

Both ends carry loopback-range addresses (127.200.x.1 and .2, route_localnet), so nothing is ever addressed
elsewhere; the clients cannot stay in the machine's own namespace, whose 127.0.0.0/8 route takes every 127.x.y.z
to its loopback. The calling thread moves into the clients' namespace for as long as the resolver is used: the
sockets it opens and the processes it starts (dnsperf, the built-in engine's senders) are on the client's side.
Everything made (namespaces, veth, qdiscs, the servers and any process left inside) is removed on the way out,
pass or fail. Needs root.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import dns_rig  # noqa: E402
from tests.fixtures import netns  # noqa: E402
from tests.fixtures.processes import stop_group  # noqa: E402

__all__ = ["Far", "far_unbound", "missing", "relay"]


def missing() -> str | None:
    """Why a delayed link cannot be made here, or None."""
    if os.geteuid() != 0:
        return "--link-delay-ms needs root (network namespaces)"
    if not os.access(netns.IP, os.X_OK) or not os.access(netns.TC, os.X_OK):
        return "--link-delay-ms needs ip and tc (iproute2)"
    return None


@dataclass
class Far:
    """Where the clients send their queries, and what makes the distance."""

    address: str
    port: int
    unbound: dns_rig.Daemon
    delay_by: str           # "netem" or "relay"
    relay_pid: int | None = None
    namespaces: tuple[str, str] = ("", "")     # the clients' and the servers'


@contextlib.contextmanager
def far_unbound(root: Path, delay_ms: float) -> Iterator[Far]:
    """A fresh Unbound (and its authorities) `delay_ms` away: half of it each way, so that every query's round
    trip carries `delay_ms` more than on loopback. `tc netem` on both veth ends where the kernel has it, else a
    relay in the server's namespace in front of Unbound (benchmarks/dns_delay.py). While inside, this thread is in
    the clients' namespace (see the module's text)."""
    with netns.joined_namespaces(server_lo=True) as link, contextlib.ExitStack() as servers:
        # started from the server's namespace: their sockets (and NSD's and Unbound's processes) are made there
        with netns.entered(link.server_ns):
            auth = servers.enter_context(dns_rig.authorities(root, link.server_addr))
            daemon = servers.enter_context(dns_rig.unbound(root / "unbound", auth, link.server_addr))
        # the servers find each other before any delay: their start-up probes stay quick
        far = Far(daemon.address, daemon.port, daemon, "netem", namespaces=(link.client_ns, link.server_ns))
        try:
            link.delay(delay_ms / 2)
        except subprocess.CalledProcessError as error:
            if b"unknown" not in (error.stderr or b""):
                raise
            with netns.entered(link.server_ns):
                far.port, far.relay_pid = servers.enter_context(relay(link.server_addr, daemon, delay_ms / 2))
                far.delay_by = "relay"
        with netns.entered(link.client_ns):
            yield far


@contextlib.contextmanager
def relay(address: str, daemon: dns_rig.Daemon, each_way_ms: float) -> Iterator[tuple[int, int]]:
    """benchmarks/dns_delay.py in front of `daemon`, on `address`: yields the port it listens on and its pid;
    stopped after."""
    argv = [sys.executable, str(Path(__file__).with_name("dns_delay.py")), address, daemon.address, str(daemon.port),
            f"{each_way_ms:g}"]
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True)
    try:
        line = process.stdout.readline() if process.stdout else b""
        if not line.strip().isdigit():
            raise RuntimeError(f"the delaying relay did not start (exit {process.poll()})")
        yield int(line), process.pid
    finally:
        stop_group(process)
        if process.stdout:
            process.stdout.close()
