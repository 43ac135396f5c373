"""The dns benchmark's far resolver (benchmarks/dns_link.py): NSD, the odd authority and Unbound in a network
namespace of their own, a delayed veth away. Its answers are the zone's, none comes sooner than the link
allows, and nothing made for it (namespaces, servers, relay) is left once it is closed."""
from __future__ import annotations

import os
import time
from pathlib import Path

import dns.rcode
import pytest

from benchmarks import dns_link
from tests.fixtures.dns_servers import host_name, query, require_dns_servers
from tests.fixtures.netns import require_netns
from tests.fixtures.processes import running

pytestmark = pytest.mark.integration

DELAY_MS = 40.0    # round trip: far above this machine's own microseconds, so a lower bound that cannot flake


def _namespaces() -> set[str]:
    run = Path("/run/netns")
    return set(os.listdir(run)) if run.is_dir() else set()


def _ask(address: str, port: int, name: str) -> tuple[str, float]:
    start = time.monotonic()
    reply = query(address, port, name, timeout=5.0)
    return ("timeout" if reply is None else dns.rcode.to_text(reply.rcode())), time.monotonic() - start


def test_a_far_resolver_answers_its_zone_no_sooner_than_its_link_and_leaves_nothing(tmp_path: Path) -> None:
    require_netns()
    require_dns_servers()
    with dns_link.far_unbound(tmp_path, DELAY_MS) as far:
        made = set(far.namespaces)
        assert made <= _namespaces()
        pids = [pid for pid in (far.unbound.process.pid, far.relay_pid) if pid]
        answers = {name: _ask(far.address, far.port, name)
                   for name in (host_name(7), "nosuch.bench.test.", "slow1.odd.bench.test.", "fail1.odd.bench.test.")}
        again = _ask(far.address, far.port, host_name(7))      # cached now: only the link is left
    assert {name: rcode for name, (rcode, _took) in answers.items()} == {
        host_name(7): "NOERROR", "nosuch.bench.test.": "NXDOMAIN", "slow1.odd.bench.test.": "NOERROR",
        "fail1.odd.bench.test.": "SERVFAIL"}
    assert again[0] == "NOERROR"
    assert min(took for _rcode, took in [*answers.values(), again]) >= DELAY_MS / 1000, "an answer beat the link"
    # the odd authority sits beside NSD, on the far side: its slow names take its 300 ms and the link's
    assert answers["slow1.odd.bench.test."][1] >= 0.3 + DELAY_MS / 1000
    assert not made & _namespaces(), "a namespace outlived the far resolver"
    assert not any(running(pid) for pid in pids), "a server or the relay outlived the far resolver"
