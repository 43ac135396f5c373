"""The dns test over SSH through the run engine: a proxy log on the workbench, uploaded with the agent, replayed
from an sshd test host to two responders on loopback that answer, delay, drop, fail and truncate as told
(tests/fixtures/dns_responder.py): the counts come back exactly as made, the slow names are named."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from app.summary.dns import dns_passes
from app.summary.text import summary_text
from tests.fixtures.dns_responder import responder
from tests.fixtures.processes import processes_using
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration

FINE = [f"host{i}.shop.test" for i in range(40)]
ODD = ["slow300-images.cdn.test", "slow300-ads.cdn.test", "drop-tracker.test", "servfail-broken.test",
       "nx-typo.test", "tc-bigtxt.test"]


def _squid_log(names: list[str]) -> str:
    lines = []
    for i, name in enumerate(names):
        if i % 3:
            lines.append(f"1764148321.{i:03d}    152 192.168.1.20 TCP_MISS/200 5120 GET http://{name}/index.html - "
                         "HIER_DIRECT/192.0.2.1 text/html")
        else:
            lines.append(f"1764148321.{i:03d}   4087 192.168.1.20 TCP_TUNNEL/200 6112 CONNECT {name}:443 - "
                         "HIER_DIRECT/192.0.2.1 -")
    return "\n".join(lines) + "\n"


def test_a_proxy_log_replayed_through_two_resolvers_over_ssh(workbench, ssh_host: SshTestHost,
                                                               tmp_path: Path) -> None:
    workbench.add_host(ssh_host.spec())
    workbench.known_hosts.add(ssh_host.host_id, ssh_host.host_key())
    log = tmp_path / "access.log"
    log.write_text(_squid_log(FINE + ODD))
    with responder("127.0.0.31") as one, responder("127.0.0.32") as two:
        params = {"resolvers": f"{one.resolver},{two.resolver}", "queries": str(log), "timeouts": "0.4,0.4",
                  "order": "interleaved"}
        outcome = execute_run(workbench, RunRequest(ssh_host.name, "dns", params, interval=0.5), RunControl())
        seen = [dict(one.udp_seen), dict(two.udp_seen)]
    assert (outcome.status, outcome.error) == ("done", "")
    detail = workbench.store.runs.get(outcome.run_id)
    assert detail.run.parameters["params"]["queries"] == "upload:queries-access.log"
    assert detail.run.parameters["uploads"][0]["bytes"] == len(log.read_bytes())
    passes = dns_passes(detail.results)
    assert [(p.resolver, p.pass_name) for p in passes] == [(one.resolver, "cold"), (one.resolver, "warm"),
                                                           (two.resolver, "cold"), (two.resolver, "warm")]
    for item in passes:
        v = item.values
        assert (v["answered"], v["timeouts"], v["noerror"], v["servfail"], v["nxdomain"], v["via_tcp"]) == (
            45, 1, 43, 1, 1, 1)
        assert item.meta["queries"] == 46 and item.meta["source"].startswith("squid uploaded queries-access.log")
        assert item.slowest[0]["name"] == "drop-tracker.test" and item.slowest[0]["ms"] is None
        assert {s["name"] for s in item.slowest[1:3]} == {"slow300-images.cdn.test", "slow300-ads.cdn.test"}
        assert v["max_ms"] >= 300 and v["p50_ms"] < 300
        assert item.cdf[-1][1] == pytest.approx(45 / 46, abs=1e-6)
    for counts in seen:   # each resolver: both passes, the dropped name sent and resent each time
        assert counts["drop-tracker.test."] == 4 and counts["host0.shop.test."] == 2
    events = workbench.store.runs.events(outcome.run_id)
    ticks = [e for e in events if e["type"] == "dns_tick"]
    assert {e["resolver"] for e in ticks} == {one.resolver, two.resolver}
    assert sum(e["answered"] for e in ticks) == 4 * 45 and sum(e["timeouts"] for e in ticks) == 4
    text = summary_text(ssh_host.name, "done", detail.results, run_id=outcome.run_id)
    assert "timeouts drop-tracker.test A;" in text and "slow300-images.cdn.test" in text
    run_dir = next(e for e in events if e["type"] == "started")["run_dir"]
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_max_mode_runs_dnsperf_on_the_host_and_says_so(workbench, ssh_host: SshTestHost) -> None:
    if not shutil.which("dnsperf"):
        if os.environ.get("CI"):
            pytest.fail("dnsperf not installed (run-tests.sh installs the Debian package dnsperf)")
        pytest.skip("dnsperf not installed")
    workbench.add_host(ssh_host.spec())
    workbench.known_hosts.add(ssh_host.host_id, ssh_host.host_key())
    with responder("127.0.0.33") as server:
        params = {"resolvers": server.resolver, "queries": "builtin", "limit": 50, "mode": "max", "duration": 2,
                  "rate": 300, "timeouts": "1"}
        outcome = execute_run(workbench, RunRequest(ssh_host.name, "dns", params, interval=0.5), RunControl())
        asked = sum(server.udp_seen.values())
    assert (outcome.status, outcome.error) == ("done", "")
    detail = workbench.store.runs.get(outcome.run_id)
    (item,) = dns_passes(detail.results)
    assert item.pass_name == "max" and item.meta["engine"].startswith("dnsperf 2.")
    assert item.meta["dnsperf"]["sent"] == asked == item.meta["queries"]
    assert item.values["answered"] + item.values["timeouts"] == asked and asked > 300
    assert "p50_ms" in item.values and item.cdf
    text = summary_text(ssh_host.name, "done", detail.results)
    assert "engine dnsperf 2." in text and "mode max for 2 s per resolver" in text
    events = workbench.store.runs.events(outcome.run_id)
    run_dir = next(e for e in events if e["type"] == "started")["run_dir"]
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_a_cancel_in_the_middle_of_a_replay_stops_it_and_leaves_nothing(workbench, ssh_host: SshTestHost,
                                                                          tmp_path: Path) -> None:
    workbench.add_host(ssh_host.spec())
    workbench.known_hosts.add(ssh_host.host_id, ssh_host.host_key())
    names = tmp_path / "names.txt"
    names.write_text("".join(f"drop-{i}.test\n" for i in range(200)))   # nothing answers: 200 x 20 s to wait
    control = RunControl()

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "dns_tick":
            control.cancel()

    with responder("127.0.0.34") as server:
        params = {"resolvers": server.resolver, "queries": str(names), "timeouts": "10,10", "in_flight": 5}
        started = time.monotonic()
        outcome = execute_run(workbench, RunRequest(ssh_host.name, "dns", params, interval=0.5), control, None,
                              on_event)
    assert outcome.status == "cancelled" and time.monotonic() - started < 120
    events = workbench.store.runs.events(outcome.run_id)
    run_dir = next(e for e in events if e["type"] == "started")["run_dir"]
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []
    assert sum(server.udp_seen.values()) <= 10    # the window's first queries, perhaps resent: no more
