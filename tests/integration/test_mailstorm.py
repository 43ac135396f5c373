"""The mailstorm test through the real run engine on `local`, against a real Postfix that discards the sink."""
from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.postfix import MAIN_CF

pytestmark = pytest.mark.integration


def check_markers(events: list[dict]) -> None:
    """The live graphs' markers at the host times they name, in the order they happen."""
    at = {e["marker"]: e for e in events if e["type"] == "marker"}
    assert [at[m]["label"] for m in ("storm_start", "last_accept", "queue_drained")] == \
        ["Storm start", "Last accept", "Queue drained"]
    storm = [e["t"] for e in events if e.get("phase") == "storm" and e["type"] in ("phase_start", "phase_end")]
    assert storm[0] <= at["storm_start"]["t"] <= at["last_accept"]["t"] <= storm[1] <= at["queue_drained"]["t"]


def _results(workbench, outcome) -> dict:
    return {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}


def test_storm_against_postfix_all_accepted_drained_and_discarded(workbench, postfix_sink: str) -> None:
    log = Path(MAIN_CF["maillog_file"])
    offset = log.stat().st_size if log.exists() else 0
    request = RunRequest("local", "mailstorm", {"server": postfix_sink, "messages": 200, "concurrency": 10},
                         interval=0.5)
    outcome = execute_run(workbench, request, RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    res = _results(workbench, outcome)
    assert res["accepted"].value == 200 and res["accepted_per_s"].value > 0
    assert res["refused_tcp"].value == res["smtp_4xx"].value == res["smtp_5xx"].value == res["errors"].value == 0
    assert "drain_s" in res and res["queue_max"].unit == "messages"
    meta = res["accepted"].metadata
    assert meta["synthetic"] is False and meta["mta"] == "postfix" and meta["mta_version"]
    assert meta["queue_dir"] == "/var/spool/postfix" and meta["queue_fs"]["fstype"]
    assert meta["run_marker"] == str(outcome.run_id)
    assert {f"{p}_{q}" for p in ("connect", "banner", "data") for q in ("p50", "p95", "p99", "max")} <= set(res)
    events = workbench.store.runs.events(outcome.run_id)
    marks = [(e["type"], e.get("phase") or e.get("marker")) for e in events
             if e["type"] in ("phase_start", "phase_end", "marker")]
    assert marks == [("phase_start", "storm"), ("marker", "storm_start"), ("phase_end", "storm"),
                     ("marker", "last_accept"), ("phase_start", "drain"), ("marker", "queue_drained"),
                     ("phase_end", "drain")]
    check_markers(events)

    queue = subprocess.run(["/usr/sbin/postqueue", "-j"], capture_output=True, text=True, check=True).stdout
    assert queue.strip() == ""   # drained
    if log.exists():   # nothing delivered: every message went to the discard transport
        with log.open("rb") as handle:
            handle.seek(offset)
            lines = handle.read().decode("utf-8", "replace").splitlines()
        delivered = [line for line in lines if "to=<sink@benchbay.invalid>" in line]
        assert delivered and all("status=sent" in line and "discard" in line.lower() for line in delivered), \
            delivered[:3]
        assert not [line for line in lines if "status=bounced" in line or "relay=" in line and "relay=none" not in line]


def test_closed_port_runs_a_synthetic_storm(workbench) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    request = RunRequest("local", "mailstorm", {"server": f"127.0.0.1:{port}", "messages": 200, "concurrency": 10},
                         interval=0.5)
    outcome = execute_run(workbench, request, RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    res = _results(workbench, outcome)
    assert res["accepted"].value == 200 and res["accepted_per_s"].value > 0
    assert all(r.metadata["synthetic"] is True for r in res.values())
    warnings = [e["message"] for e in workbench.store.runs.events(outcome.run_id) if e["type"] == "warning"]
    assert f"synthetic: no MTA listening on 127.0.0.1:{port}" in warnings
