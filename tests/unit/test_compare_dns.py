"""The dns lines of a comparison: one per resolver and pass, named by what differs, judged on p50, p99 and
timeouts by the comparison's rules."""
from __future__ import annotations

from app.compare.dns import dns_comparison, run_lines, timeout_verdict
from app.compare.model import build, load_inputs
from tests.fixtures.dns_runs import QUERIES, local_and_far, store_dns_runs


def _lines(hosts=("office-gw",), workbench=None):
    ids = store_dns_runs(workbench.store, hosts)
    inputs = load_inputs(workbench, ids)
    return dns_comparison((run.record.id, run.record.host_name, run.results) for run in inputs), inputs


def test_a_run_of_two_resolvers_is_a_line_per_resolver_and_pass() -> None:
    lines = run_lines(1, "office-gw", local_and_far())
    assert {(line.resolver, line.pass_) for line in lines} == {
        ("10.0.0.2:53", "cold"), ("10.0.0.2:53", "warm"), ("9.9.9.9:53", "cold"), ("9.9.9.9:53", "warm")}
    local = next(line for line in lines if line.resolver == "10.0.0.2:53" and line.pass_ == "cold")
    assert local.timeouts == 8 and local.queries == QUERIES and local.never_share == 8 / QUERIES
    assert local.counts["answered"] + local.timeouts == QUERIES
    assert len(local.cdf) == 120 and local.cdf[-1][1] == (QUERIES - 8) / QUERIES
    assert local.slowest[0]["ms"] is None   # timeouts first


def test_verdicts_of_one_host_name_the_resolvers(workbench) -> None:
    found, inputs = _lines(workbench=workbench)
    build(inputs, None)   # the comparison of the runs themselves still builds
    cold = {line.label: line for line in found.of_pass("cold")}
    assert set(cold) == {"10.0.0.2:53", "9.9.9.9:53"}
    # the local resolver is far faster at the median, and loses 8 queries the far one answers
    assert cold["10.0.0.2:53"].verdicts["p50_ms"] == "leader"
    # one run each, judged with the dns p50's noise floor (resources/noise_floors.json): 7x is past it
    assert cold["9.9.9.9:53"].verdicts["p50_ms"].startswith("0.146x of 10.0.0.2:53 (")
    assert cold["9.9.9.9:53"].verdicts["timeouts"] == "leader"
    assert cold["10.0.0.2:53"].verdicts["timeouts"].startswith("more than 9.9.9.9:53 (8 vs 0")
    assert found.passes == ["cold", "warm"]


def test_one_resolver_from_two_hosts_is_named_by_host(workbench) -> None:
    ids = store_dns_runs(workbench.store, ("branch-a", "branch-b"))
    inputs = load_inputs(workbench, ids)
    found = dns_comparison((run.record.id, run.record.host_name, [r for r in run.results
                                                                    if r.metadata["resolver"] == "9.9.9.9:53"])
                           for run in inputs)
    assert sorted(line.label for line in found.of_pass("warm")) == ["branch-a", "branch-b"]


def test_equal_or_close_timeouts_are_not_a_win() -> None:
    lines = run_lines(1, "h", local_and_far())
    local = next(line for line in lines if line.resolver == "10.0.0.2:53" and line.pass_ == "cold")
    assert timeout_verdict(local, local, "x") == "as many as x"
    from dataclasses import replace

    close = replace(local, counts={**local.counts, "timeouts": 11})
    assert timeout_verdict(close, local, "x").startswith("tie with x (11 vs 8")
