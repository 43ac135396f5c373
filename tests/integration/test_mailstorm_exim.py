"""The mail storm over SSH against a real Exim, set up as README.md tells users (tests/fixtures/exim.py).

The agent finds the Exim the way it would on a server: `exim` on the host, its version from `exim -bV`,
the queue depth from `exim -bpc`. Exim holds every message in its spool until the test starts a queue
run, which it does once the agent has reported a non-empty queue: the depth series and the drain are
the agent's own readings of the real queue.
"""
from __future__ import annotations

import os

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.exim import LIMITED_SESSIONS, Exim
from tests.fixtures.processes import processes_using, running
from tests.integration.test_mailstorm import check_markers
from tests.integration.test_mailstorm_ssh import _agent

pytestmark = pytest.mark.integration

MESSAGES = 300


def _log_from(exim: Exim) -> int:
    return int(exim.check("wc -c < /var/log/exim4/mainlog").strip() or 0)


def _log_since(exim: Exim, offset: int) -> list[str]:
    return exim.check(f"tail -c +{offset + 1} /var/log/exim4/mainlog").splitlines()


def test_host_facts_name_the_exim_and_its_version(workbench, exim_server: Exim) -> None:
    version = exim_server.check("exim -bV").splitlines()[0].split()[2]   # "Exim version 4.96 #2 built ..."
    mta = workbench.gather_facts(exim_server.add_to(workbench)).facts["tools"]["mta"]
    assert mta == {"path": "/usr/sbin/exim", "present": True, "type": "exim", "version": version}


def test_storm_against_real_exim_queued_counted_drained_and_discarded(workbench, exim_server: Exim) -> None:
    name = exim_server.add_to(workbench)
    offset = _log_from(exim_server)
    version = exim_server.check("exim -bV").splitlines()[0]   # "Exim version 4.96 #2 built ..."
    started, on_event = exim_server.queue_run_when_seen()
    request = RunRequest(name, "mailstorm", {"server": exim_server.server, "messages": MESSAGES, "concurrency": 10,
                                              "drain_timeout": 120.0}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl(), None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    res = {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}
    assert res["accepted"].value == MESSAGES and res["accepted"].metadata["attempted"] == MESSAGES
    assert res["refused_tcp"].value == res["smtp_4xx"].value == res["smtp_5xx"].value == res["errors"].value == 0
    meta = res["accepted"].metadata
    assert (meta["synthetic"], meta["mta"], meta["queue_tool"]) == (False, "exim", "exim -bpc")
    assert meta["mta_version"] == version.split()[2] and meta["mta_version"].startswith("4.")
    assert meta["queue_dir"] == "/var/spool/exim4" and meta["queue_fs"]["fstype"]
    # every message waited in the real queue until the queue run: the agent's readings of exim -bpc show it
    assert started.is_set()
    assert res["queue_max"].value == MESSAGES
    assert [d for _, d in res["queue_max"].metadata["series"]][0] == 0
    assert res["drain_s"].value >= 0
    events = workbench.store.runs.events(outcome.run_id)
    check_markers(events)
    pid, run_dir = _agent(events)   # the agent is gone and took its run directory with it
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []

    assert exim_server.depth() == 0
    lines = _log_since(exim_server, offset)
    arrived = [line for line in lines if " <= <> " in line]
    discarded = [line for line in lines if "=> :blackhole: <sink@benchbay.invalid> R=benchbay_sink" in line]
    assert len(arrived) == MESSAGES and len(discarded) == MESSAGES, lines[-5:]
    # nothing else was delivered, failed or bounced, and no mailbox was written
    assert not [line for line in lines if (" => " in line and ":blackhole:" not in line) or " ** " in line]
    assert exim_server.check("find /var/mail -type f | wc -l").strip() == "0"


def test_storm_against_exim_limiting_sessions_counts_refusals_at_the_banner(workbench, exim_server: Exim) -> None:
    name = exim_server.add_to(workbench)
    started, on_event = exim_server.queue_run_when_seen()
    request = RunRequest(name, "mailstorm", {"server": exim_server.limited_server, "messages": 60,
                                              "concurrency": 6, "drain_timeout": 120.0}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl(), None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    res = {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}
    by_stage = res["smtp_4xx"].metadata["by_stage"]
    # sessions beyond the limit are turned away with 421 before the greeting; the others carry their messages
    assert set(by_stage) == {"banner"} and by_stage["banner"].get("4xx", 0) == res["smtp_4xx"].value >= 1, by_stage
    assert "421" in res["smtp_4xx"].metadata["last_error"]
    assert res["accepted"].metadata["attempted"] == 60
    assert res["accepted"].value + res["smtp_4xx"].value == 60 and res["accepted"].value >= LIMITED_SESSIONS
    assert res["refused_tcp"].value == res["smtp_5xx"].value == res["errors"].value == 0
    assert started.is_set() and res["queue_max"].value == res["accepted"].value
    assert exim_server.depth() == 0


def test_storm_as_an_ordinary_user_says_exim_hides_its_queue_and_does_not_wait(workbench, exim_server: Exim) -> None:
    user_host = exim_server.user_hosts[0]
    workbench.add_host(user_host.spec())
    workbench.known_hosts.add(user_host.host_id, user_host.host_key())
    request = RunRequest(user_host.name, "mailstorm", {"server": exim_server.server, "messages": 30,
                                                       "concurrency": 3, "drain_timeout": 600.0}, interval=0.5)
    try:
        outcome = execute_run(workbench, request, RunControl())

        assert (outcome.status, outcome.error) == ("done", "")
        res = {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}
        assert res["accepted"].value == 30 and res["accepted"].metadata["mta"] == "exim"
        assert "queue_max" not in res and "drain_s" not in res
        events = workbench.store.runs.events(outcome.run_id)
        warnings = [e["message"] for e in events if e["type"] == "warning"]
        assert "mailstorm: exim -bpc: exim: permission denied (Exim shows its queue only to admin users: root, " \
               "or a user in Exim's group, Debian-exim on Debian): queue depth and drain time are not measured" \
               in warnings, warnings
        # no drain phase that could only wait out its timeout
        assert not [e for e in events if e.get("phase") == "drain"]
    finally:
        exim_server.queue_run()   # the messages it accepted go to the sink before the next test
        exim_server.wait_for_empty_queue()


def test_cancel_in_the_middle_of_a_storm_against_exim_leaves_nothing_behind(workbench, exim_server: Exim) -> None:
    name = exim_server.add_to(workbench)
    control = RunControl()

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "progress" and event.get("phase") == "storm" and event.get("fraction", 0) > 0:
            control.cancel()   # messages are on their way over ten sessions

    request = RunRequest(name, "mailstorm", {"server": exim_server.server, "messages": 200000, "concurrency": 10},
                         interval=0.5)
    offset = _log_from(exim_server)
    try:
        outcome = execute_run(workbench, request, control, None, on_event)

        assert outcome.status == "cancelled"
        events = workbench.store.runs.events(outcome.run_id)
        agent = [e for e in events if e["seq"] is not None]
        assert agent[-1]["type"] == "done" and agent[-1]["status"] == "cancelled"
        pid, run_dir = _agent(events)
        assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []
        # every message Exim took in before the cancel waits whole in its queue, and nothing else does
        arrived = [line for line in _log_since(exim_server, offset) if " <= <> " in line]
        assert exim_server.depth() == len(arrived) > 0
    finally:
        exim_server.queue_run()
    assert exim_server.wait_for_empty_queue() == 0
    assert exim_server.check("ls /var/spool/exim4/input | wc -l").strip() == "0"
