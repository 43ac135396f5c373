"""The resolvers the dns test is checked against: each kind of name does what it was made to do, through
Unbound and through BIND, asked by a client that is not Benchbay's (dnspython)."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import dns.flags
import dns.rcode
import pytest

from tests.fixtures.dns_query_list import build_query_list
from tests.fixtures.dns_servers import Resolvers, query
from tests.fixtures.processes import running

pytestmark = pytest.mark.integration


def _ask(address: str, port: int, name: str) -> tuple[str, float, bool]:
    """(rcode or "timeout", seconds, TC set) of one query over UDP, as a stub resolver waits: 3 s."""
    start = time.monotonic()
    reply = query(address, port, name, timeout=3.0)
    took = time.monotonic() - start
    if reply is None:
        return "timeout", took, False
    return dns.rcode.to_text(reply.rcode()), took, bool(reply.flags & dns.flags.TC)


@pytest.mark.parametrize("which", ["unbound", "bind"])
def test_each_kind_of_name_does_what_it_was_made_to_do(dns_resolvers: Resolvers, which: str) -> None:
    server = getattr(dns_resolvers, which)
    names = build_query_list(total=400, missing=20, slow=6, servfail=6, big=6, lost=4)
    kinds = {**dict.fromkeys(names.hosts, "host"), **dict.fromkeys(names.missing, "missing"),
             **dict.fromkeys(names.slow, "slow"), **dict.fromkeys(names.servfail, "servfail"),
             **dict.fromkeys(names.big, "big"), **dict.fromkeys(names.lost, "lost")}
    for rerun in ("cold", "warm"):
        with ThreadPoolExecutor(20) as pool:
            answers = dict(zip(names.order, pool.map(lambda n: _ask(server.address, server.port, n), names.order),
                               strict=True))
        by_kind: dict[str, set[str]] = {}
        for name, (rcode, _took, _tc) in answers.items():
            by_kind.setdefault(kinds[name], set()).add(rcode)
        lost = by_kind.pop("lost")
        assert by_kind == {"host": {"NOERROR"}, "missing": {"NXDOMAIN"}, "slow": {"NOERROR"},
                           "servfail": {"SERVFAIL"}, "big": {"NOERROR"}}, rerun
        # never answered while the resolver waits for the silent authority; once it has given up on it, a
        # resolver may fail its names at once (Unbound does while it remembers): never an answer
        assert lost == {"timeout"} if rerun == "cold" else lost <= {"timeout", "SERVFAIL"}, rerun
        assert all(answers[name][2] for name in names.big), f"{rerun}: a big answer came whole over UDP"
        assert not any(answers[name][2] for name in names.hosts), rerun
        slow = [answers[name][1] for name in names.slow]
        if rerun == "cold":
            assert min(slow) >= 0.29, "a slow name answered before its authority did"
        else:
            assert max(slow) < 0.29, "a slow name was not answered from the cache on the warm pass"
    for name in names.big:   # over TCP the whole answer comes
        reply = query(server.address, server.port, name, tcp=True)
        assert reply is not None and not reply.flags & dns.flags.TC and len(reply.answer[0]) == 90
    assert dns_resolvers.authorities.odd.count(names.big[0], "tcp") >= 1, "the resolver never asked over TCP"


def test_resolvers_stop_with_their_fixture(dns_authorities, tmp_path) -> None:
    from tests.fixtures.dns_servers import start_resolvers

    resolvers = start_resolvers(tmp_path / "r", dns_authorities)
    pids = [daemon.process.pid for daemon in resolvers.daemons]
    assert all(running(pid) for pid in pids)
    assert query(resolvers.unbound.address, resolvers.unbound.port, "example.com.").rcode() == dns.rcode.SERVFAIL
    resolvers.stop()
    assert not any(running(pid) for pid in pids)
