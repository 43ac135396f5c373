"""The dns test over SSH from an sshd test host, through Unbound and BIND in front of the test authorities
(tests/fixtures/dns_servers.py): 5,000 names, every count what the zone was made to do, the slow names named,
cold against warm, and nothing left on the host."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from app.summary.dns import dns_lines
from app.summary.text import summary_text
from tests.fixtures.dns_query_list import build_query_list
from tests.fixtures.dns_servers import Resolvers
from tests.fixtures.processes import processes_using
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def test_five_thousand_names_through_two_resolvers_count_what_the_zone_does(
        workbench, ssh_host, dns_resolvers: Resolvers, tmp_path: Path) -> None:
    names = build_query_list(total=5000, missing=160, slow=10, servfail=10, big=30, lost=3)
    listing = names.write(tmp_path / "queries.txt")
    name = _add(workbench, ssh_host)
    started: dict[str, str] = {}

    def on_event(_host: str, event: dict) -> None:
        if event["type"] == "started":
            started["run_dir"] = event["run_dir"]

    request = RunRequest(name, "dns", {"resolvers": dns_resolvers.spec, "queries": str(listing),
                                       "passes": "cold,warm", "order": "sequential", "in_flight": 50,
                                       "timeouts": "1,2", "tcp_fallback": True}, interval=1.0)
    outcome = execute_run(workbench, request, RunControl(), None, on_event)
    assert (outcome.status, outcome.error) == ("done", "")
    results = workbench.store.runs.get(outcome.run_id).results
    by: dict[tuple[str, str], dict[str, object]] = {}
    for result in results:
        key = (result.metadata["resolver"], result.metadata["pass"])
        by.setdefault(key, {})[result.metric] = result
    assert set(by) == {(r, p) for r in (dns_resolvers.unbound.spec, dns_resolvers.bind.spec)
                       for p in ("cold", "warm")}
    expected = {"answered": names.answered, "noerror": names.noerror, "nxdomain": len(names.missing),
                "servfail": len(names.servfail), "refused": 0, "other_rcode": 0, "timeouts": len(names.lost),
                "via_tcp": len(names.big)}
    slow = {n.rstrip(".") for n in names.slow}
    lost = {n.rstrip(".") for n in names.lost}
    for (resolver, pass_), figures in by.items():
        counts = {metric: int(figures[metric].value) for metric in expected}
        if pass_ == "warm" and counts["timeouts"] != expected["timeouts"]:
            # a resolver that learnt in the cold pass that the silent authority is down may fail its names
            # at once (Unbound does, while it remembers): SERVFAIL instead of a timeout, never an answer
            moved = expected["timeouts"] - counts["timeouts"]
            counts = {**counts, "timeouts": counts["timeouts"] + moved, "servfail": counts["servfail"] - moved,
                      "answered": counts["answered"] - moved}
        assert counts == expected, (resolver, pass_)
        assert figures["answered"].metadata["queries"] == 5000
        slowest = figures["slowest"].metadata["slowest"]
        # timeouts first: the names never answered
        timed_out = int(figures["timeouts"].value)
        assert all(x["ms"] is None for x in slowest[:timed_out])
        assert {x["name"].rstrip(".") for x in slowest[:timed_out]} <= lost
        cdf = figures["p50_ms"].metadata["cdf"]
        if pass_ == "cold":
            # the authority held each slow name 300 ms: at least that many queries took that long (a lower
            # bound: a busy machine only adds), and slow names are among the slowest named
            within = max((share for ms, share in cdf if ms < 295), default=0.0)
            assert within <= 1 - (len(names.slow) + len(names.lost)) / 5000 + 1e-9, resolver
            assert {x["name"].rstrip(".") for x in slowest if x["ms"] is not None and x["ms"] >= 295} & slow, \
                resolver
        assert 0 < len(cdf) <= 200 and cdf[-1][1] == pytest.approx(int(figures["answered"].value) / 5000, abs=1e-6)
    # the summary a user reads names the slow names of the cold pass, and the timeouts
    text = summary_text(name, "done", results, run_id=outcome.run_id)
    for resolver in (dns_resolvers.unbound.spec, dns_resolvers.bind.spec):
        cold = next(line for line in text.splitlines() if line.strip().startswith(f"slowest, {resolver} cold"))
        assert sum(n.rstrip(".") in cold for n in names.lost) == len(names.lost)
    # with more lines, the slow names (each answered after 300 ms or more) are named too
    longer = dns_lines(results, shown=20)
    for resolver in (dns_resolvers.unbound.spec, dns_resolvers.bind.spec):
        cold = next(line for line in longer if line.startswith(f"slowest, {resolver} cold"))
        assert any(n.rstrip(".") in cold for n in names.slow), cold
    # nothing left on the host
    run_dir = started["run_dir"]
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []

    # warm means cached: the slow names again, through both resolvers, never reach their authority
    odd = dns_resolvers.authorities.odd
    asked = {n: odd.count(n) for n in names.slow}
    assert all(asked.values()), "a slow name never reached its authority in the cold pass"
    again = RunRequest(name, "dns", {"resolvers": dns_resolvers.spec,
                                     "queries": str(names.write_names(tmp_path / "slow.txt", names.slow)),
                                     "passes": "warm", "timeouts": "1,2"}, interval=1.0)
    second = execute_run(workbench, again, RunControl())
    assert second.status == "done"
    warm = [r for r in workbench.store.runs.get(second.run_id).results if r.metric in ("noerror", "answered")]
    assert {int(r.value) for r in warm} == {len(names.slow)}
    assert {n: odd.count(n) for n in names.slow} == asked
