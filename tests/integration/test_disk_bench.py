"""The "disk" test through the run engine, as the CLI and the GUI run it: local with both engines, over SSH.

Tiny settings (16 MiB file, sub-second runs): what is checked is the plumbing a user sees, i.e. results
stored under the spec's metric names with sane figures and the engine named, and no test file left.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration

TINY = {"file_size": "16M", "runtime": 0.5, "warmup": 0.2, "tests": ["randread_4k", "syncwrite_4k", "sweep"],
        "sweep_workers": [1, 2]}
JOBS = ["randread_4k", "syncwrite_4k", "sweep_randread_4k_w1", "sweep_randread_4k_w2"]
QUANTITIES = {"iops": "IOPS", "mbps": "MB/s", "lat_mean": "ms", "lat_p50": "ms", "lat_p95": "ms", "lat_p99": "ms",
              "lat_p99.9": "ms"}


def _need_fio() -> None:
    if shutil.which("fio") is None:
        if os.environ.get("CI"):
            pytest.fail("fio is not installed: the disk test's fio engine cannot be checked")
        pytest.skip("fio is not installed")


def _check_results(detail, engine: str, test_dir: Path) -> None:
    results = {r.metric: r for r in detail.results if r.test == "disk"}
    measured = {m for m in results if not m.endswith((".cv", ".p99_over_p50", ".steal"))}   # consistency apart
    assert measured == {f"{job}.{q}" for job in JOBS for q in QUANTITIES}
    for job in JOBS:
        assert all(results[f"{job}.{q}"].unit == unit for q, unit in QUANTITIES.items())
        assert results[f"{job}.iops"].value > 0 and results[f"{job}.mbps"].value > 0
        lat = [results[f"{job}.lat_{p}"].value for p in ("p50", "p95", "p99", "p99.9")]
        assert 0 < lat[0] <= lat[1] <= lat[2] <= lat[3]
        meta = results[f"{job}.iops"].metadata
        assert meta["engine"] == engine and meta["engine_version"] and meta["flags"]
        assert meta["file_size"] == 16 << 20 and meta["test_dir"] == str(test_dir.resolve())
        assert meta["cached"] is (not meta["direct"])
    assert results["syncwrite_4k.iops"].metadata["sync"] == "fdatasync"
    assert results["sweep_randread_4k_w2.iops"].metadata["workers"] == 2
    if engine == "fio":
        assert "--fdatasync=1" in results["syncwrite_4k.iops"].metadata["flags"]
        assert results["randread_4k.iops"].metadata["engine_version"].startswith("fio-")


@pytest.mark.parametrize("engine", ["builtin", "fio"])
def test_disk_run_on_local_stores_results_and_leaves_no_file(workbench, tmp_path: Path, engine: str) -> None:
    if engine == "fio":
        _need_fio()
    test_dir = tmp_path / "disk"
    test_dir.mkdir()
    request = RunRequest("local", "disk", dict(TINY, engine=engine, test_dir=str(test_dir)), interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    _check_results(workbench.store.runs.get(outcome.run_id), engine, test_dir)
    events = workbench.store.runs.events(outcome.run_id)
    phases = [e["phase"] for e in events if e["type"] == "phase_start"]
    assert phases == ["prepare"] + JOBS
    assert any(e["type"] == "progress" and e.get("eta_s") is not None for e in events)
    assert list(test_dir.iterdir()) == []


def test_cancelled_disk_run_leaves_no_test_file(workbench, tmp_path: Path) -> None:
    test_dir = tmp_path / "disk"
    test_dir.mkdir()
    control = RunControl()

    def on_event(host: str, event: dict) -> None:
        if event["type"] == "phase_start" and event["phase"] == "sweep_randread_4k_w2":
            control.cancel()   # the file is written and two worker processes are reading it

    params = dict(TINY, engine="builtin", test_dir=str(test_dir), tests=["sweep"], sweep_workers=[2],
                  runtime=60)
    started = time.monotonic()
    outcome = execute_run(workbench, RunRequest("local", "disk", params, interval=0.5), control, None, on_event)
    assert outcome.status == "cancelled" and time.monotonic() - started < 20
    events = workbench.store.runs.events(outcome.run_id)
    assert "sweep_randread_4k_w2" in [e.get("phase") for e in events if e["type"] == "phase_start"]
    assert list(test_dir.iterdir()) == []


def test_disk_run_over_ssh_with_the_builtin_engine(workbench, ssh_host: SshTestHost, tmp_path: Path) -> None:
    workbench.add_host(ssh_host.spec())
    workbench.known_hosts.add(ssh_host.host_id, ssh_host.host_key())
    test_dir = tmp_path / "ssh-disk"
    test_dir.mkdir()
    request = RunRequest(ssh_host.name, "disk", dict(TINY, engine="builtin", test_dir=str(test_dir)), interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    _check_results(workbench.store.runs.get(outcome.run_id), "builtin", test_dir)
    assert list(test_dir.iterdir()) == []
