"""The mail storm on an SSH test host through the run engine, against the Postfix the host sees on 127.0.0.1:25.

The test sshd hosts are this machine: the Postfix, its queue and its log are the ones checked here.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.postfix import MAIN_CF
from tests.fixtures.processes import processes_using, running
from tests.fixtures.sshd import SshTestHost
from tests.integration.test_mailstorm import check_markers

pytestmark = pytest.mark.integration

MAILBOX_DIRS = ("/var/mail", "/var/spool/mail", "/root/Maildir")


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def _mailboxes() -> dict[str, int]:
    """Every file a local delivery could have written, with its size."""
    found = {}
    for top in MAILBOX_DIRS:
        for root, _, files in os.walk(top):
            for name in files:
                path = os.path.join(root, name)
                found[path] = os.path.getsize(path)
    return found


def _queue() -> str:
    return subprocess.run(["/usr/sbin/postqueue", "-j"], capture_output=True, text=True, check=True).stdout.strip()


def _wait_for_empty_queue(timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while _queue() and time.monotonic() < deadline:
        time.sleep(0.5)
    return _queue()


def _deliveries(lines: list[str], message_id: str) -> dict[str, str]:
    """queue id -> the delivery line of each message whose Message-ID starts so (Postfix logs both by queue id)."""
    ids = {line.split(": ", 2)[1] for line in lines if message_id in line and "cleanup[" in line}
    return {line.split(": ", 2)[1]: line for line in lines
            if "to=<" in line and len(line.split(": ", 2)) > 2 and line.split(": ", 2)[1] in ids}


def _log_until(log: Path, offset: int, done, timeout: float = 15.0) -> list[str]:
    """The mail log's lines since `offset`, once done(lines) or after `timeout` (postlogd writes late)."""
    deadline = time.monotonic() + timeout
    while True:
        with log.open("rb") as handle:
            handle.seek(offset)
            lines = handle.read().decode("utf-8", "replace").splitlines()
        if done(lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.5)


def _agent(events: list[dict]) -> tuple[int, str]:
    started = next(e for e in events if e["type"] == "started")
    start = next(e for e in events if e["type"] == "start" and e["seq"] is not None)
    return start["pid"], started["run_dir"]


def test_storm_over_ssh_all_accepted_drained_and_nothing_delivered(workbench, ssh_host, postfix_sink: str) -> None:
    name = _add(workbench, ssh_host)
    log = Path(MAIN_CF["maillog_file"])
    offset = log.stat().st_size if log.exists() else 0
    boxes = _mailboxes()
    request = RunRequest(name, "mailstorm", {"messages": 300, "concurrency": 10}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    detail = workbench.store.runs.get(outcome.run_id)
    stored = detail.run.parameters["params"]
    assert detail.run.status == "done" and (stored["messages"], stored["server"]) == (300, "127.0.0.1:25")
    res = {r.metric: r for r in detail.results}
    assert res["accepted"].value == 300 and res["accepted"].metadata["attempted"] == 300
    assert res["accepted_per_s"].value > 0 and sum(res["accepted_per_s"].metadata["per_second"]) == 300
    assert res["refused_tcp"].value == res["smtp_4xx"].value == res["smtp_5xx"].value == res["errors"].value == 0
    assert res["accepted"].metadata["server"] == "127.0.0.1:25" and res["accepted"].metadata["mta"] == "postfix"
    assert res["drain_s"].value >= 0 and res["queue_max"].metadata["series"]
    assert res["data_max"].metadata["samples"] == 300 and res["connect_max"].metadata["samples"] == 10
    events = workbench.store.runs.events(outcome.run_id)
    check_markers(events)
    assert outcome.samples > 0   # telemetry ran alongside

    assert _mailboxes() == boxes   # no local delivery, nothing bounced into a mailbox
    pid, run_dir = _agent(events)
    ours = f"message-id=<benchbay-{res['accepted'].metadata['run_marker']}-{pid}-"
    lines = _log_until(log, offset, lambda lines: len(_deliveries(lines, ours)) >= 300)
    delivered = _deliveries(lines, ours)
    assert len(delivered) == 300   # each message once, and none left in the queue
    assert all("relay=none" in line and "status=sent" in line and "postfix/discard" in line
               for line in delivered.values()), list(delivered.values())[:3]
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []


def test_cancel_in_the_middle_of_a_storm_over_ssh(workbench, ssh_host, postfix_sink: str) -> None:
    name = _add(workbench, ssh_host)
    control = RunControl()
    seen: list[dict] = []

    def on_event(host: str, event: dict) -> None:
        seen.append(event)
        if event["type"] == "progress" and event.get("phase") == "storm" and event.get("fraction", 0) > 0:
            control.cancel()   # messages are on their way over twenty sessions

    request = RunRequest(name, "mailstorm", {"messages": 200000, "concurrency": 20}, interval=0.5)
    started = time.monotonic()
    outcome = execute_run(workbench, request, control, None, on_event)

    assert time.monotonic() - started < 60
    assert outcome.status == "cancelled"
    assert workbench.store.runs.get(outcome.run_id).run.status == "cancelled"
    events = workbench.store.runs.events(outcome.run_id)
    agent = [e for e in events if e["seq"] is not None]
    assert agent[-1]["type"] == "done" and agent[-1]["status"] == "cancelled"
    assert [e["phase"] for e in agent if e["type"] == "phase_end"] == ["storm"]   # the phase is closed
    pid, run_dir = _agent(events)
    assert not running(pid)
    assert not os.path.exists(run_dir) and processes_using(run_dir) == []
    # the sessions are gone with the agent; what Postfix accepted before the cancel drains to discard
    assert _wait_for_empty_queue(120.0) == ""
