"""The cpu test through the real run engine on `local`: scores stored, versions recorded, cancel stops every worker."""
from __future__ import annotations

import os
import threading
import time

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.processes import processes_using

pytestmark = pytest.mark.integration


def _run_dir(workbench, run_id: int) -> str:
    return next(e["run_dir"] for e in workbench.store.runs.events(run_id) if e["type"] == "started")


def test_cpu_run_stores_scores_scaling_and_versions(workbench) -> None:
    request = RunRequest("local", "cpu", {"seconds": 0.3}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())

    assert (outcome.status, outcome.error) == ("done", "")
    results = {r.metric: r for r in workbench.store.runs.get(outcome.run_id).results}
    kernels = ["zlib_compress", "zlib_decompress", "sha256"]
    expected = {"single", "multi", "scaling"} | {f"{p}.{k}" for p in ("single", "multi") for k in kernels}
    assert {m for m in results if not m.endswith((".cv", ".steal"))} == expected   # consistency apart
    assert {results[m].test for m in expected} == {"cpu"}
    assert results["single"].unit == results["multi"].unit == "ops/s"
    assert results["single"].value > 0 and results["multi"].value > 0
    assert results["scaling"].value > 0
    assert results["scaling"].value == pytest.approx(results["multi"].value / results["single"].value, rel=0.01)
    assert all(results[f"single.{k}"].unit == "MB/s" and results[f"single.{k}"].value > 0 for k in kernels)

    meta = results["multi"].metadata
    import ssl
    import zlib
    assert meta["zlib"] == zlib.ZLIB_RUNTIME_VERSION and meta["openssl"] == ssl.OPENSSL_VERSION
    assert meta["python"].startswith("CPython 3.")
    assert meta["workers"] == meta["cores"] == os.cpu_count()
    assert results["single"].metadata["workers"] == 1

    events = workbench.store.runs.events(outcome.run_id)
    marks = [(e["type"], e.get("phase")) for e in events if e["type"] in ("phase_start", "phase_end")]
    assert marks == [("phase_start", "single"), ("phase_end", "single"),
                     ("phase_start", "multi"), ("phase_end", "multi")]
    assert any(e["type"] == "progress" and e["phase"] == "multi" for e in events)


def test_cancel_during_the_multi_phase_stops_every_worker(workbench) -> None:
    control = RunControl()
    seen: dict[str, object] = {}
    run_dirs: list[str] = []

    def look_and_cancel() -> None:
        seen["during"] = len(processes_using(run_dirs[0])) if run_dirs else 0
        control.cancel()

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "started":
            run_dirs.append(event["run_dir"])
        if event["type"] == "phase_start" and event["phase"] == "multi":
            threading.Timer(1.0, look_and_cancel).start()

    started = time.monotonic()
    request = RunRequest("local", "cpu", {"seconds": 4, "workers": 3}, interval=0.5)
    outcome = execute_run(workbench, request, control, None, on_event)

    assert (outcome.status, outcome.error) == ("cancelled", "")
    assert time.monotonic() - started < 15        # not the 8 s + margin the phases would take
    assert seen["during"] >= 4                    # the agent and its 3 workers were running
    run_dir = _run_dir(workbench, outcome.run_id)
    assert not os.path.exists(run_dir)
    deadline = time.monotonic() + 5
    while processes_using(run_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_using(run_dir) == []
    assert not any(r.metric == "multi" for r in workbench.store.runs.get(outcome.run_id).results)
