"""A `benchbay run` or `benchbay monitor` that dies mid-run (SIGKILL, SIGTERM, Ctrl-C twice) over a real sshd test
host, and the next start or `benchbay runs attach` that collects what it left.

The test hosts run on this machine, so the tests look at the run directory directly, as an admin
logged in on the host would.
"""
from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from storage.db import open_store
from tests.fixtures.lost_runs import (
    INTERVAL,
    PHASES,
    add_host,
    agent_pid,
    benchbay,
    finish,
    release,
    running_on_host,
    series_t,
    start_and_kill,
    stopped_after,  # noqa: F401 - a fixture, used through pytestmark
    stored_run,
    wait_for,
)
from tests.fixtures.processes import processes_using

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("stopped_after")]


def test_killed_workbench_run_is_collected_complete_by_the_next_start(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    run, proc = start_and_kill(cli_env, name)
    assert finish(proc)[0] == -signal.SIGKILL
    run_dir = Path(run.remote.run_dir)
    detail, _ = stored_run(cli_env, run.id)
    assert detail.run.status == "running" and run_dir.is_dir()   # what a crash leaves: nobody collects it
    # the host side goes on alone: wait until the agent is done (well before the run's deadline)
    wait_for("the agent to finish", lambda: b'"done"' in (run_dir / "events.jsonl").read_bytes())
    time.sleep(3.0)   # nobody watches: the sampler adds ticks that are not the test's

    # the next start of Benchbay (here a monitor of one second) collects it first
    code, out, err = finish(benchbay("monitor", name, "--seconds", "1"))
    assert code == 0, err
    assert f"run {run.id} on {name}: re-attached after its workbench went away; stored as done" in err

    detail, events = stored_run(cli_env, run.id)
    assert (detail.run.status, detail.run.error) == ("done", "")
    [result] = detail.results
    assert (result.metric, result.unit) == ("elapsed", "s") and 5.0 <= result.value < 7.0
    # the times the host measured, not until the re-attach (which came seconds after the end)
    stored_for = (detail.run.finished_at - detail.run.started_at).total_seconds()
    assert result.value - INTERVAL <= stored_for < result.value + 4 * INTERVAL
    assert detail.facts["memory"]["total_bytes"] > 0
    seqs = [e["seq"] for e in events if e["seq"] is not None]
    assert seqs == list(range(1, len(seqs) + 1))     # every agent event once, none missing
    assert any(e["type"] == "reattached" for e in events)
    t = series_t(cli_env, run.id)
    steps = [b - a for a, b in zip(t, t[1:], strict=False)]
    assert steps and min(steps) > 0                  # no duplicate t
    assert max(steps) < 1.8 * INTERVAL               # no tick missing across the kill (one would make 2x)
    assert len(t) >= 5.0 / INTERVAL                  # the whole 5 s test, a sample per tick
    [telemetry] = [e for e in events if e["type"] == "telemetry"]
    [done] = [e for e in events if e["type"] == "done"]
    # ends with the first tick after "done", not with the ticks the sampler added while nobody watched
    assert 0 <= telemetry["t0"] + t[-1] - done["t"] < 2 * INTERVAL
    assert not run_dir.exists() and processes_using(str(run_dir)) == []


def test_run_directory_gone_means_interrupted_with_a_true_line(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    run, proc = start_and_kill(cli_env, name)
    finish(proc)
    run_dir = Path(run.remote.run_dir)
    for pid in processes_using(str(run_dir)):   # as the host does at the deadline: stop all, remove RUN
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(run_dir)

    code, _out, err = finish(benchbay("runs", "attach", str(run.id)))
    assert code == 1
    lines = err.strip().splitlines()
    assert lines[-1].startswith(f"benchbay: run {run.id} stored as interrupted: {name}: the run directory "
                                f"{run_dir} is gone"), err
    assert "deadline" in lines[-1]
    detail, _ = stored_run(cli_env, run.id)
    assert detail.run.status == "interrupted" and "is gone" in detail.run.error
    assert detail.run.finished_at is not None


def test_sigterm_to_benchbay_run_is_handled_like_ctrl_c(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    run, proc = start_and_kill(cli_env, name, signal.SIGTERM)
    code, _out, err = finish(proc, timeout=60)
    assert code == 130, err
    assert "cancelling" in err and "Traceback" not in err
    detail, events = stored_run(cli_env, run.id)
    assert detail.run.status == "cancelled"
    assert [e["status"] for e in events if e["type"] == "done"] == ["cancelled"]
    run_dir = Path(run.remote.run_dir)
    assert not run_dir.exists() and processes_using(str(run_dir)) == []


def test_a_live_workbench_keeps_its_run(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    proc = benchbay("run", name, "--test", "idle", "--set", f"phases={PHASES}", "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = wait_for("the run to start on the host", lambda: running_on_host(store))
    finally:
        store.close()
    # the host holds the run while a second Benchbay tries to take it, so it is not over by then
    os.kill(agent_pid(Path(run.remote.run_dir)), signal.SIGSTOP)
    try:
        code, _out, err = finish(benchbay("runs", "attach", str(run.id)))
    finally:
        release(run)
    assert code == 1 and f"run {run.id} is still driven by Benchbay pid {proc.pid} on this computer" in err
    code, _out, err = finish(proc)
    assert code == 0, err                          # the first workbench finished its run undisturbed
    detail, _ = stored_run(cli_env, run.id)
    assert detail.run.status == "done" and detail.results


def test_a_run_still_running_on_the_host_is_left_for_attach_then_followed(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    run, proc = start_and_kill(cli_env, name, hold=True)
    try:
        finish(proc)
        # the host holds the run: a start only collects what is over, and says so
        code, _out, err = finish(benchbay("monitor", name, "--seconds", "1"))
        assert code == 0, err
        assert f"run {run.id} on {name} is still running on the host" in err and f"runs attach {run.id}" in err
        assert stored_run(cli_env, run.id)[0].run.status == "running"
    finally:
        release(run)
    code, _out, err = finish(benchbay("runs", "attach", str(run.id)))
    assert code == 0, err
    detail, _ = stored_run(cli_env, run.id)
    assert detail.run.status == "done" and len(detail.results) == 1
    assert not Path(run.remote.run_dir).exists()


def test_a_killed_open_ended_monitor_is_stored_with_its_samples(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    proc = benchbay("monitor", name, "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = wait_for("the monitor to start on the host", lambda: running_on_host(store))
        samples = Path(run.remote.run_dir) / "samples.raw"
        wait_for("a few ticks", lambda: samples.exists() and samples.read_bytes().count(b"@end") >= 4)
        proc.send_signal(signal.SIGKILL)
        finish(proc)
    finally:
        store.close()
    code, _out, err = finish(benchbay("runs", "attach", str(run.id)))
    assert code == 0, err
    detail, _ = stored_run(cli_env, run.id)
    assert detail.run.status == "done"
    t = series_t(cli_env, run.id)
    assert len(t) >= 3 and min(b - a for a, b in zip(t, t[1:], strict=False)) > 0
    assert not Path(run.remote.run_dir).exists()


def test_sigterm_to_benchbay_monitor_stops_and_stores_it_like_ctrl_c(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    proc = benchbay("monitor", name, "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = wait_for("the monitor to start on the host", lambda: running_on_host(store))
        samples = Path(run.remote.run_dir) / "samples.raw"
        wait_for("a few ticks", lambda: samples.exists() and samples.read_bytes().count(b"@end") >= 4)
        proc.send_signal(signal.SIGTERM)
        code, _out, err = finish(proc, timeout=60)
        detail = store.runs.get(run.id)
    finally:
        store.close()
    assert code == 0 and "stopping" in err and "Traceback" not in err, err
    assert detail.run.status == "done" and len(series_t(cli_env, run.id)) >= 3
    assert not Path(run.remote.run_dir).exists()


def test_a_host_that_rebooted_is_said_so_not_a_removed_run(cli_env, ssh_host) -> None:
    """A reboot cannot be made on a test host; what tells it is: the boot id the run began in is not the
    host's any more, and (with a /tmp that does not survive) the run directory is gone."""
    from dataclasses import replace

    name = add_host(ssh_host)
    run, proc = start_and_kill(cli_env, name)
    finish(proc)
    assert len(run.remote.boot_id) >= 32   # recorded at the start, from /proc/sys/kernel/random/boot_id
    run_dir = Path(run.remote.run_dir)
    for pid in processes_using(str(run_dir)):   # a reboot ends every process and empties /tmp
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(run_dir)
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        store.runs.set_remote_state(run.id, replace(run.remote, boot_id="0" * 8 + run.remote.boot_id[8:]))
    finally:
        store.close()

    code, _out, err = finish(benchbay("runs", "attach", str(run.id)))
    assert code == 1
    assert err.strip().splitlines()[-1] == (f"benchbay: run {run.id} stored as interrupted: {name}: the host rebooted "
                                            "during the run (its boot id changed): the run ended with it; what was "
                                            "read before is kept"), err
    detail, _ = stored_run(cli_env, run.id)
    assert detail.run.status == "interrupted" and "rebooted" in detail.run.error


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def test_ctrl_c_twice_says_what_stays_on_the_host_and_attach_removes_it(cli_env, ssh_host) -> None:
    name = add_host(ssh_host)
    proc = benchbay("run", name, "--test", "idle", "--set", 'phases=[["measure","Measure",60]]',
                     "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = wait_for("the run to start on the host", lambda: running_on_host(store))
    finally:
        store.close()
    run_dir = Path(run.remote.run_dir)
    wait_for("the sampler", lambda: (run_dir / "samples.raw").exists())
    # the agent runs its test (a TERM before it is up would end it without a word)
    wait_for("the test", lambda: b'"phase_start"' in _read(run_dir / "events.jsonl"))
    proc.send_signal(signal.SIGINT)   # cancel ...
    time.sleep(0.05)                  # (a cancel over a quick link cleans up in a fraction of a second)
    proc.send_signal(signal.SIGINT)   # ... and leave at once, before the host is cleaned up
    code, _out, err = finish(proc, timeout=60)
    assert code == 130, err
    assert (f"benchbay: run {run.id} on {name} may still be on the host (its run directory, and its telemetry "
            f"sampler and test unless the cancel reached them): `benchbay runs attach {run.id}` collects it and "
            "removes it there") in err
    # what was said: the run directory is still there (the first Ctrl-C's cancel may have stopped its sampler)
    assert run_dir.is_dir()

    code, _out, err = finish(benchbay("runs", "attach", str(run.id)), timeout=120)
    assert code in (0, 130) and "Traceback" not in err, err
    detail, _ = stored_run(cli_env, run.id)
    assert detail.run.status in ("cancelled", "done")   # the agent may or may not have had the cancel
    assert not run_dir.exists() and processes_using(str(run_dir)) == []
