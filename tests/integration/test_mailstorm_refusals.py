"""The mail storm against a Postfix smtpd that refuses a client's sessions beyond a tiny connection limit."""
from __future__ import annotations

import subprocess

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run

pytestmark = pytest.mark.integration


def test_refused_sessions_are_counted_at_the_banner_and_the_storm_finishes(workbench, postfix_limited: str) -> None:
    request = RunRequest("local", "mailstorm", {"server": postfix_limited, "messages": 120, "concurrency": 8,
                                                "timeout": 10.0}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    res = {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}
    accepted, refused = res["accepted"].value, res["smtp_4xx"].value
    # two sessions get through and keep their connection; the others get 421 at the greeting
    assert accepted >= 2 * 120 // 8 and refused > 0
    assert accepted + refused + res["smtp_5xx"].value + res["errors"].value + res["refused_tcp"].value == 120
    by_stage = res["smtp_4xx"].metadata["by_stage"]
    assert by_stage["banner"]["4xx"] == refused
    assert "421" in res["smtp_4xx"].metadata["last_error"] and "too many connections" in \
        res["smtp_4xx"].metadata["last_error"]
    assert res["accepted_per_s"].value > 0 and res["accepted"].metadata["attempted"] == 120
    warnings = [e["message"] for e in workbench.store.runs.events(outcome.run_id) if e["type"] == "warning"]
    assert any(f"{accepted:.0f} of 120 messages accepted" in w for w in warnings)
    assert subprocess.run(["/usr/sbin/postqueue", "-j"], capture_output=True, text=True).stdout.strip() == ""
