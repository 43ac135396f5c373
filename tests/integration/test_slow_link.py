"""`monitor --seconds N` over a 56 kbit/s link (tc tbf on both ends of a veth pair, tests.fixtures.netns).

The host's sampler ends the measurement itself at N seconds of its own clock, so however long the link
takes to bring the ticks (and the facts, and the agent for them), the stored run holds N seconds of
samples, its times say N seconds, and its parameters say N.
"""
from __future__ import annotations

import re

import pytest

from storage.db import open_store

pytestmark = pytest.mark.integration
SECONDS = 10
INTERVAL = 1.0


def test_monitor_seconds_on_a_56_kbit_link_measures_and_stores_what_it_says(far_host, bench_paths) -> None:
    far_host.slow_link(56)
    proc = far_host.benchbay("monitor", far_host.name, "--seconds", str(SECONDS))
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    ticks = [line for line in out.splitlines() if re.match(r"\d\d:\d\d:\d\d ", line)]
    assert len(ticks) == SECONDS / INTERVAL, out

    store = open_store(f"sqlite:///{bench_paths['db']}")
    try:
        [run] = store.runs.list(test="monitor")
        detail = store.runs.get(run.id)
        [cpu] = [s for s in store.runs.series(run.id) if s.name == "cpu.user" and s.device == ""]
        [telemetry] = [e for e in store.runs.events(run.id) if e["type"] == "telemetry"]
    finally:
        store.close()
    assert detail.run.status == "done"
    assert detail.run.parameters["duration"] == SECONDS
    assert len(cpu.t) == telemetry["samples"] == SECONDS / INTERVAL
    assert SECONDS - INTERVAL / 2 <= cpu.t[-1] <= SECONDS + INTERVAL / 2   # from t0: the measured span
    measured = (detail.run.finished_at - detail.run.started_at).total_seconds()
    assert SECONDS - INTERVAL / 2 <= measured <= SECONDS + INTERVAL / 2
