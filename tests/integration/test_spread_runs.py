"""Real short runs on `local` store how much each figure varied: the spread of its per-interval rates, the
rates themselves as a series, and how steady the host was (variation, p99/p50, CPU steal); the command
line shows them, and an export re-imported elsewhere holds them unchanged."""
from __future__ import annotations

import io
import json
import math
import os
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.compare.model import compare_runs
from app.compare.overlay import aligned, overlay_runs
from app.engine.orchestrator import RunControl, RunRequest, execute_run
from storage.db import open_store
from storage.run_exchange import import_file, write_runs
from storage.spread import spread_of
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration

DISK = {"file_size": "16M", "runtime": 1.0, "warmup": 0.2, "tests": ["randread_4k", "syncwrite_4k"]}


def _results(workbench, run_id: int) -> dict:
    return {r.metric: r for r in workbench.store.runs.get(run_id).results}


def _series(workbench, run_id: int) -> dict:
    return {s.name: s for s in workbench.store.runs.series(run_id)}


def _check_rate(workbench, run_id: int, metric: str, intervals: int, interval_s: float) -> None:
    """The figure's spread is that of its stored per-interval rates, which lie on the telemetry's axis."""
    results, series = _results(workbench, run_id), _series(workbench, run_id)
    figure = results[metric]
    spread = figure.spread
    assert spread is not None and spread.kind == "within run"
    assert spread.n == intervals and spread.interval_s == pytest.approx(interval_s)
    assert 0 < spread.min <= spread.p5 <= spread.p50 <= spread.p95 <= spread.max
    assert spread.min * 0.5 <= figure.value <= spread.max * 2   # the run's own figure is of the same size
    rate = series[f"rate.{metric}"]
    assert rate.unit == figure.unit and len(rate.values) == intervals
    assert spread_of(rate.values, interval_s) == spread
    assert rate.t == sorted(rate.t) and rate.t[1] - rate.t[0] == pytest.approx(interval_s, abs=1e-3)
    telemetry = series["cpu.idle"].t
    assert telemetry[0] - 1.0 <= rate.t[0] and rate.t[-1] <= telemetry[-1] + 1.0
    cv = results[f"{metric}.cv"]
    assert (cv.unit, cv.value) == ("%", round(spread.cv_percent, 3))
    # the events keep no second copy of the rates
    stored = [e for e in workbench.store.runs.events(run_id) if e["type"] == "result" and e["metric"] == metric]
    assert stored and not isinstance(stored[0].get("rates"), dict)


def test_cpu_run_stores_spread_rates_and_consistency(workbench) -> None:
    outcome = execute_run(workbench, RunRequest("local", "cpu", {"seconds": 1.0}, interval=0.5), RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    results = _results(workbench, outcome.run_id)
    for phase in ("single", "multi"):
        _check_rate(workbench, outcome.run_id, phase, intervals=5, interval_s=0.2)
        steal = results[f"{phase}.steal"]
        assert steal.unit == "%" and 0 <= steal.value <= 100 and steal.metadata["phase"] == phase
    assert results["single.sha256"].spread is None   # a throughput of one kernel: no per-interval rate


def test_cpu_run_over_ssh_stores_the_same(workbench, ssh_host: SshTestHost) -> None:
    workbench.add_host(ssh_host.spec())
    workbench.known_hosts.add(ssh_host.host_id, ssh_host.host_key())
    request = RunRequest(ssh_host.name, "cpu", {"seconds": 1.0}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    for phase in ("single", "multi"):
        _check_rate(workbench, outcome.run_id, phase, intervals=5, interval_s=0.2)


@pytest.mark.parametrize("engine", ["builtin", "fio"])
def test_disk_run_stores_spread_rates_and_latency_tail(workbench, tmp_path: Path, engine: str) -> None:
    if engine == "fio" and shutil.which("fio") is None:
        if os.environ.get("CI"):
            pytest.fail("fio is not installed: its per-interval logs cannot be checked")
        pytest.skip("fio is not installed")
    test_dir = tmp_path / "disk"
    test_dir.mkdir()
    request = RunRequest("local", "disk", dict(DISK, engine=engine, test_dir=str(test_dir)), interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    results = _results(workbench, outcome.run_id)
    # fio logs the intervals that ended before it stopped: the last one may be missing
    counts = {_results(workbench, outcome.run_id)[f"{job}.iops"].spread.n for job in ("randread_4k", "syncwrite_4k")}
    assert counts <= ({5} if engine == "builtin" else {4, 5})
    for job in ("randread_4k", "syncwrite_4k"):
        n = results[f"{job}.iops"].spread.n
        _check_rate(workbench, outcome.run_id, f"{job}.iops", intervals=n, interval_s=0.2)
        _check_rate(workbench, outcome.run_id, f"{job}.mbps", intervals=n, interval_s=0.2)
        tail = results[f"{job}.p99_over_p50"]
        p99, p50 = results[f"{job}.lat_p99"].value, results[f"{job}.lat_p50"].value
        assert tail.unit == "x" and tail.value == round(p99 / p50, 3) and tail.value >= 1
        assert tail.metadata["engine"] == engine   # the labels of the job go with it
        assert 0 <= results[f"{job}.steal"].value <= 100
    assert "prepare.steal" not in results   # writing the test file is no figure
    assert results["randread_4k.lat_p99"].spread is None
    assert list(test_dir.iterdir()) == []   # fio's logs went with the run


def test_command_line_shows_the_spread_and_export_keeps_it(cli_env, capsys, tmp_path: Path) -> None:
    assert main(["run", "local", "--test", "cpu", "--set", "seconds=1"]) == 0
    out = capsys.readouterr().out
    single = next(line for line in out.splitlines() if line.strip().startswith("single "))
    assert "±" in single and " %" in single
    assert "consistency, single core:" in out and "over 5 × 0.2 s" in out and "CPU steal" in out

    assert main(["runs", "list", "--json"]) == 0
    [run] = json.loads(capsys.readouterr().out)
    assert main(["runs", "show", str(run["id"])]) == 0
    shown = capsys.readouterr().out
    line = next(line for line in shown.splitlines() if line.split()[:2] == ["cpu", "single"])
    assert "±" in line and "over 5 × 0.2 s, within run" in line
    # its legend says this ± is a standard deviation, not the run-to-run range compare's verdicts use
    assert "±: one standard deviation of the figure's per-interval rate" in shown

    store = open_store(os.environ["BENCHBAY_DB"])
    other = open_store(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    try:
        text = io.StringIO()
        write_runs(store, [run["id"]], text)
        report = import_file(other, io.StringIO(text.getvalue()), "cpu.json")
        original = store.runs.get(run["id"]).results
        copied = other.runs.get(report.imported[0][1]).results
        assert copied == original and copied[0].spread is not None
        assert [s for s in other.runs.series(report.imported[0][1]) if s.name == "rate.single"] == \
            [s for s in store.runs.series(run["id"]) if s.name == "rate.single"]
    finally:
        store.close()
        other.close()


def test_two_mail_storms_overlay_accepts_and_queue_depth(workbench, postfix_sink: str) -> None:
    runs = []
    for _ in range(2):
        request = RunRequest("local", "mailstorm", {"server": postfix_sink, "messages": 200, "concurrency": 10},
                             interval=0.5)
        outcome = execute_run(workbench, request, RunControl())
        assert (outcome.status, outcome.error) == ("done", "")
        runs.append(outcome.run_id)
        results = _results(workbench, outcome.run_id)
        rate = results["accepted_per_s"]
        assert rate.spread is not None and rate.spread.n == 5
        series = _series(workbench, outcome.run_id)
        accepts = series["rate.accepted_per_s"]
        # every accepted message is in one interval: the rates add up to the storm
        assert math.fsum(v * rate.spread.interval_s for v in accepts.values) == pytest.approx(200, abs=1)
        queue = series["mail.queue"]
        assert queue.unit == "messages" and queue.values and max(queue.values) == results["queue_max"].value
        assert results["accepted_per_s.cv"].unit == "%" and "storm.steal" in results
    comparison = compare_runs(workbench, runs)
    labelled = overlay_runs(comparison, "mailstorm")
    accepted = aligned(workbench, labelled, "mail.accepted")
    depth = aligned(workbench, labelled, "mail.queue")
    assert [c.run_id for c in accepted] == runs and [c.run_id for c in depth] == runs
    for curve in accepted:   # both start with the storm: t = 0 is each storm's start
        assert curve.unit == "msg/s" and -0.5 <= curve.t[0] <= 2.0
