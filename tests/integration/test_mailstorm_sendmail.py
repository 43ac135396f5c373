"""The mail storm over SSH against a real Sendmail, set up as README.md tells users (tests/fixtures/sendmail.py).

The agent finds the Sendmail the way it would on a server: `sendmail` on the host, its version from
`sendmail -d0.1 -bt`, the queue depth from `mailq`. Sendmail holds every message in /var/spool/mqueue
until the test starts a queue run, which it does once the agent has reported a non-empty queue.
"""
from __future__ import annotations

import os

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.processes import processes_using, running
from tests.fixtures.sendmail import Sendmail
from tests.integration.test_mailstorm import check_markers
from tests.integration.test_mailstorm_ssh import _agent

pytestmark = pytest.mark.integration

MESSAGES = 300


def _version(sendmail: Sendmail) -> str:
    return next(line.split()[1] for line in sendmail.check("sendmail -d0.1 -bt < /dev/null").splitlines()
                if line.startswith("Version"))


def test_host_facts_name_the_sendmail_and_its_version(workbench, sendmail_server: Sendmail) -> None:
    version = _version(sendmail_server)
    mta = workbench.gather_facts(sendmail_server.add_to(workbench)).facts["tools"]["mta"]
    assert mta == {"path": "/usr/sbin/sendmail", "present": True, "type": "sendmail", "version": version}


def test_storm_against_real_sendmail_queued_counted_drained_and_discarded(workbench,
                                                                          sendmail_server: Sendmail) -> None:
    name = sendmail_server.add_to(workbench)
    before = sendmail_server.mailstats()
    version = _version(sendmail_server)
    started, on_event = sendmail_server.queue_run_when_seen()
    request = RunRequest(name, "mailstorm", {"server": sendmail_server.server, "messages": MESSAGES,
                                              "concurrency": 10, "drain_timeout": 120.0}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl(), None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    res = {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}
    assert res["accepted"].value == MESSAGES and res["accepted"].metadata["attempted"] == MESSAGES
    assert res["refused_tcp"].value == res["smtp_4xx"].value == res["smtp_5xx"].value == res["errors"].value == 0
    meta = res["accepted"].metadata
    assert (meta["synthetic"], meta["mta"], meta["queue_tool"]) == (False, "sendmail", "mailq")
    assert meta["mta_version"] == version and version.startswith("8.")
    assert meta["queue_dir"] == "/var/spool/mqueue" and meta["queue_fs"]["fstype"]
    # every message waited in the real queue until the queue run: the agent's readings of mailq show it
    assert started.is_set()
    assert res["queue_max"].value == MESSAGES
    assert [d for _, d in res["queue_max"].metadata["series"]][0] == 0
    assert res["drain_s"].value >= 0
    events = workbench.store.runs.events(outcome.run_id)
    check_markers(events)
    pid, run_dir = _agent(events)   # the agent is gone and took its run directory with it
    assert not running(pid) and not os.path.exists(run_dir) and processes_using(run_dir) == []

    assert sendmail_server.depth() == 0
    after = sendmail_server.mailstats()
    delivered = {mailer: count - before.get(mailer, 0) for mailer, count in after.items()
                 if count != before.get(mailer, 0)}
    # every message went to the sink alias, /dev/null (Sendmail's *file* mailer): no mailbox, no relay
    assert delivered == {"*file*": MESSAGES}, delivered
    assert sendmail_server.check("find /var/mail -type f | wc -l").strip() == "0"


def test_storm_against_sendmail_limiting_sessions_counts_refusals_at_the_banner(workbench,
                                                                                sendmail_server: Sendmail) -> None:
    name = sendmail_server.add_to(workbench)
    started, on_event = sendmail_server.queue_run_when_seen()
    request = RunRequest(name, "mailstorm", {"server": sendmail_server.server, "messages": 60, "concurrency": 6,
                                              "drain_timeout": 120.0}, interval=0.5)
    with sendmail_server.limit_sessions(2):
        outcome = execute_run(workbench, request, RunControl(), None, on_event)

    assert (outcome.status, outcome.error) == ("done", "")
    res = {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}
    by_stage = res["smtp_4xx"].metadata["by_stage"]
    assert set(by_stage) == {"banner"} and by_stage["banner"].get("4xx", 0) == res["smtp_4xx"].value >= 1, by_stage
    assert "421" in res["smtp_4xx"].metadata["last_error"]
    assert res["accepted"].metadata["attempted"] == 60
    assert res["accepted"].value + res["smtp_4xx"].value == 60 and res["accepted"].value >= 2
    assert res["refused_tcp"].value == res["smtp_5xx"].value == res["errors"].value == 0
    assert started.is_set() and res["queue_max"].value == res["accepted"].value
    assert sendmail_server.depth() == 0
