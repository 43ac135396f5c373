"""A workbench that dies mid-run (SIGKILL, SIGTERM) over a real sshd test host, as `benchbay` processes.

The test hosts run on this machine, so the tests look at the run directory directly, as an admin
logged in on the host would.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli import main
from storage.db import open_store
from tests.fixtures.processes import children, processes_using
from tests.fixtures.sshd import ssh_keygen_fingerprint

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
INTERVAL = 0.5
PHASES = '[["warmup","Warm-up",1],["measure","Measure",4]]'   # 5 s of idle test


def _add(host) -> str:
    assert main(["host", "add", host.name, "--address", host.address, "--port", str(host.port), "--user",
                 host.user, "--key", str(host.client_key_path)]) == 0
    assert main(["host", "trust", host.name, "--fingerprint", ssh_keygen_fingerprint(host.host_key_path)]) == 0
    return host.name


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _stop_what_the_test_started() -> Iterator[None]:
    """Every `benchbay` a test started, and every run it left on the (local) test host, is gone after it."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _popen(argv: list[str], **popen) -> subprocess.Popen:
    proc = subprocess.Popen(argv, **popen)
    _STARTED.append(proc)
    return proc


def _benchbay(*args: str) -> subprocess.Popen:
    return _popen([sys.executable, str(ROOT / "main.py"), *args], stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=os.environ.copy())


def _finish(proc: subprocess.Popen, timeout: float = 90) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _wait_for(what: str, check, timeout: float = 30.0):
    limit = time.monotonic() + timeout
    while time.monotonic() < limit:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _running_on_host(store) -> object:
    """The stored run once it runs on the host (its run directory is recorded)."""
    runs = [run for run in store.runs.running() if run.remote is not None]
    return runs[0] if runs else None


def _agent_pid(run_dir: Path) -> int:
    return int(_wait_for("the agent's pid", lambda: (run_dir / "agent.pid").exists()
                         and (run_dir / "agent.pid").read_text().strip()))


def _release(run) -> None:
    """Let a held run's agent go on (SIGCONT); nothing when it is gone."""
    with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
        os.kill(int((Path(run.remote.run_dir) / "agent.pid").read_text()), signal.SIGCONT)


def _kill_run(run) -> None:
    for pid in processes_using(run.remote.run_dir):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _start_and_kill(cli_env, name: str, sig: int = signal.SIGKILL, phases: str = PHASES,
                    hold: bool = False) -> tuple[object, subprocess.Popen]:
    """Start a run, let it go a little, then `sig` to its workbench. `hold`: the host holds the run (its agent
    stopped with SIGSTOP) before the signal, so that it is still running however slow the machine is; the
    caller lets it go on with _release."""
    proc = _benchbay("run", name, "--test", "idle", "--set", f"phases={phases}", "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = _wait_for("the run to start on the host", lambda: _running_on_host(store))
        events = Path(run.remote.run_dir) / "events.jsonl"
        _wait_for("the first phase", lambda: events.exists() and b"phase_start" in events.read_bytes())
        time.sleep(1.5)   # samples and events already read by the workbench that is about to die
        if hold:
            os.kill(_agent_pid(Path(run.remote.run_dir)), signal.SIGSTOP)
        proc.send_signal(sig)
        return run, proc
    finally:
        store.close()


def _series_t(cli_env, run_id: int) -> list[float]:
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        [cpu] = [s for s in store.runs.series(run_id) if s.name == "cpu.user" and s.device == ""]
        return cpu.t
    finally:
        store.close()


def _detail(cli_env, run_id: int):
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        return store.runs.get(run_id), store.runs.events(run_id)
    finally:
        store.close()


def test_killed_workbench_run_is_collected_complete_by_the_next_start(cli_env, ssh_host) -> None:
    name = _add(ssh_host)
    run, proc = _start_and_kill(cli_env, name)
    assert _finish(proc)[0] == -signal.SIGKILL
    run_dir = Path(run.remote.run_dir)
    detail, _ = _detail(cli_env, run.id)
    assert detail.run.status == "running" and run_dir.is_dir()   # what a crash leaves: nobody collects it
    # the host side goes on alone: wait until the agent is done (well before the run's deadline)
    _wait_for("the agent to finish", lambda: b'"done"' in (run_dir / "events.jsonl").read_bytes())
    time.sleep(3.0)   # nobody watches: the sampler adds ticks that are not the test's

    # the next start of Benchbay (here a monitor of one second) collects it first
    code, out, err = _finish(_benchbay("monitor", name, "--seconds", "1"))
    assert code == 0, err
    assert f"run {run.id} on {name}: re-attached after its workbench went away; stored as done" in err

    detail, events = _detail(cli_env, run.id)
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
    t = _series_t(cli_env, run.id)
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
    name = _add(ssh_host)
    run, proc = _start_and_kill(cli_env, name)
    _finish(proc)
    run_dir = Path(run.remote.run_dir)
    for pid in processes_using(str(run_dir)):   # as the host does at the deadline: stop all, remove RUN
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(run_dir)

    code, _out, err = _finish(_benchbay("runs", "attach", str(run.id)))
    assert code == 1
    lines = err.strip().splitlines()
    assert lines[-1].startswith(f"benchbay: run {run.id} stored as interrupted: {name}: the run directory "
                                f"{run_dir} is gone"), err
    assert "deadline" in lines[-1]
    detail, _ = _detail(cli_env, run.id)
    assert detail.run.status == "interrupted" and "is gone" in detail.run.error
    assert detail.run.finished_at is not None


def test_sigterm_to_benchbay_run_is_handled_like_ctrl_c(cli_env, ssh_host) -> None:
    name = _add(ssh_host)
    run, proc = _start_and_kill(cli_env, name, signal.SIGTERM)
    code, _out, err = _finish(proc, timeout=60)
    assert code == 130, err
    assert "cancelling" in err and "Traceback" not in err
    detail, events = _detail(cli_env, run.id)
    assert detail.run.status == "cancelled"
    assert [e["status"] for e in events if e["type"] == "done"] == ["cancelled"]
    run_dir = Path(run.remote.run_dir)
    assert not run_dir.exists() and processes_using(str(run_dir)) == []


def test_a_live_workbench_keeps_its_run(cli_env, ssh_host) -> None:
    name = _add(ssh_host)
    proc = _benchbay("run", name, "--test", "idle", "--set", f"phases={PHASES}", "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = _wait_for("the run to start on the host", lambda: _running_on_host(store))
    finally:
        store.close()
    # the host holds the run while a second Benchbay tries to take it, so it is not over by then
    os.kill(_agent_pid(Path(run.remote.run_dir)), signal.SIGSTOP)
    try:
        code, _out, err = _finish(_benchbay("runs", "attach", str(run.id)))
    finally:
        _release(run)
    assert code == 1 and f"run {run.id} is still driven by Benchbay pid {proc.pid} on this computer" in err
    code, _out, err = _finish(proc)
    assert code == 0, err                          # the first workbench finished its run undisturbed
    detail, _ = _detail(cli_env, run.id)
    assert detail.run.status == "done" and detail.results


def test_a_run_still_running_on_the_host_is_left_for_attach_then_followed(cli_env, ssh_host) -> None:
    name = _add(ssh_host)
    run, proc = _start_and_kill(cli_env, name, hold=True)
    try:
        _finish(proc)
        # the host holds the run: a start only collects what is over, and says so
        code, _out, err = _finish(_benchbay("monitor", name, "--seconds", "1"))
        assert code == 0, err
        assert f"run {run.id} on {name} is still running on the host" in err and f"runs attach {run.id}" in err
        assert _detail(cli_env, run.id)[0].run.status == "running"
    finally:
        _release(run)
    code, _out, err = _finish(_benchbay("runs", "attach", str(run.id)))
    assert code == 0, err
    detail, _ = _detail(cli_env, run.id)
    assert detail.run.status == "done" and len(detail.results) == 1
    assert not Path(run.remote.run_dir).exists()


def test_the_window_at_start_up_follows_a_lost_run_to_its_end(cli_env, ssh_host, qtbot) -> None:
    from app.gui.main_window import MainWindow
    from app.workbench import Workbench

    name = _add(ssh_host)
    run, proc = _start_and_kill(cli_env, name)
    _finish(proc)
    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    window = MainWindow(bench)
    qtbot.addWidget(window)
    try:
        # the agent still runs: the window re-attaches in a worker and stores the run when it ends
        qtbot.waitUntil(lambda: bench.store.runs.get(run.id).run.status != "running", timeout=60_000)
        detail = bench.store.runs.get(run.id)
        assert detail.run.status == "done" and len(detail.results) == 1
        qtbot.waitUntil(lambda: f"run {run.id} on {name}: re-attached" in window.statusBar().currentMessage(),
                        timeout=10_000)
        assert not Path(run.remote.run_dir).exists()
    finally:
        window.close()
        bench.close()


def test_sigterm_to_the_window_is_handled_like_ctrl_c(cli_env, ssh_host, request) -> None:
    name = _add(ssh_host)
    # a 10 min test (cancelled long before): the window takes it over while it runs, however slow its start
    run, proc = _start_and_kill(cli_env, name, phases='[["measure","Measure",600]]')
    request.addfinalizer(lambda: _kill_run(run))   # if the test fails before the window cancels it
    _finish(proc)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    window = _popen([sys.executable, str(ROOT / "main.py")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env)
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        def taken_over() -> bool:
            [again] = [r for r in store.runs.running() if r.id == run.id] or [None]
            return again is None or (again.owner is not None and again.owner.pid == window.pid)
        _wait_for("the window to take the run over", taken_over)
        window.send_signal(signal.SIGTERM)
        code, _out, err = _finish(window, timeout=60)
        assert code == 0 and "Traceback" not in err, err
        detail = store.runs.get(run.id)
    finally:
        store.close()
    # closing the window cancels what it follows, as it does for the tests it started
    assert detail.run.status == "cancelled"
    assert not Path(run.remote.run_dir).exists()


def test_a_killed_open_ended_monitor_is_stored_with_its_samples(cli_env, ssh_host) -> None:
    name = _add(ssh_host)
    proc = _benchbay("monitor", name, "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = _wait_for("the monitor to start on the host", lambda: _running_on_host(store))
        samples = Path(run.remote.run_dir) / "samples.raw"
        _wait_for("a few ticks", lambda: samples.exists() and samples.read_bytes().count(b"@end") >= 4)
        proc.send_signal(signal.SIGKILL)
        _finish(proc)
    finally:
        store.close()
    code, _out, err = _finish(_benchbay("runs", "attach", str(run.id)))
    assert code == 0, err
    detail, _ = _detail(cli_env, run.id)
    assert detail.run.status == "done"
    t = _series_t(cli_env, run.id)
    assert len(t) >= 3 and min(b - a for a, b in zip(t, t[1:], strict=False)) > 0
    assert not Path(run.remote.run_dir).exists()


def test_sigterm_to_benchbay_monitor_stops_and_stores_it_like_ctrl_c(cli_env, ssh_host) -> None:
    name = _add(ssh_host)
    proc = _benchbay("monitor", name, "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = _wait_for("the monitor to start on the host", lambda: _running_on_host(store))
        samples = Path(run.remote.run_dir) / "samples.raw"
        _wait_for("a few ticks", lambda: samples.exists() and samples.read_bytes().count(b"@end") >= 4)
        proc.send_signal(signal.SIGTERM)
        code, _out, err = _finish(proc, timeout=60)
        detail = store.runs.get(run.id)
    finally:
        store.close()
    assert code == 0 and "stopping" in err and "Traceback" not in err, err
    assert detail.run.status == "done" and len(_series_t(cli_env, run.id)) >= 3
    assert not Path(run.remote.run_dir).exists()


def test_a_host_that_rebooted_is_said_so_not_a_removed_run(cli_env, ssh_host) -> None:
    """A reboot cannot be made on a test host; what tells it is: the boot id the run began in is not the
    host's any more, and (with a /tmp that does not survive) the run directory is gone."""
    from dataclasses import replace

    name = _add(ssh_host)
    run, proc = _start_and_kill(cli_env, name)
    _finish(proc)
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

    code, _out, err = _finish(_benchbay("runs", "attach", str(run.id)))
    assert code == 1
    assert err.strip().splitlines()[-1] == (f"benchbay: run {run.id} stored as interrupted: {name}: the host rebooted "
                                            "during the run (its boot id changed): the run ended with it; what was "
                                            "read before is kept"), err
    detail, _ = _detail(cli_env, run.id)
    assert detail.run.status == "interrupted" and "rebooted" in detail.run.error


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def test_ctrl_c_twice_says_what_stays_on_the_host_and_attach_removes_it(cli_env, ssh_host) -> None:
    name = _add(ssh_host)
    proc = _benchbay("run", name, "--test", "idle", "--set", 'phases=[["measure","Measure",60]]',
                     "--interval", str(INTERVAL))
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        run = _wait_for("the run to start on the host", lambda: _running_on_host(store))
    finally:
        store.close()
    run_dir = Path(run.remote.run_dir)
    _wait_for("the sampler", lambda: (run_dir / "samples.raw").exists())
    # the agent runs its test (a TERM before it is up would end it without a word)
    _wait_for("the test", lambda: b'"phase_start"' in _read(run_dir / "events.jsonl"))
    proc.send_signal(signal.SIGINT)   # cancel ...
    time.sleep(0.05)                  # (a cancel over a quick link cleans up in a fraction of a second)
    proc.send_signal(signal.SIGINT)   # ... and leave at once, before the host is cleaned up
    code, _out, err = _finish(proc, timeout=60)
    assert code == 130, err
    assert (f"benchbay: run {run.id} on {name} may still be on the host (its run directory, and its telemetry "
            f"sampler and test unless the cancel reached them): `benchbay runs attach {run.id}` collects it and "
            "removes it there") in err
    # what was said: the run directory is still there (the first Ctrl-C's cancel may have stopped its sampler)
    assert run_dir.is_dir()

    code, _out, err = _finish(_benchbay("runs", "attach", str(run.id)), timeout=120)
    assert code in (0, 130) and "Traceback" not in err, err
    detail, _ = _detail(cli_env, run.id)
    assert detail.run.status in ("cancelled", "done")   # the agent may or may not have had the cancel
    assert not run_dir.exists() and processes_using(str(run_dir)) == []



def test_the_open_window_collects_a_lost_link_run_once_its_host_answers(cli_env, fresh_ssh_host, qtbot) -> None:
    from app.gui.main_window import MainWindow
    from app.workbench import Workbench
    from tests.fixtures.store import write_settings

    write_settings(cli_env["home"], reconnect_budget=3, connect_timeout=3)
    name = _add(fresh_ssh_host)
    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    window = MainWindow(bench)
    qtbot.addWidget(window)
    window.reattacher.timer.setInterval(1000)   # instead of every half minute
    server = fresh_ssh_host.server
    try:
        proc = _benchbay("run", name, "--test", "idle", "--set", '[["measure","Measure",12]]'.join(["phases=", ""]),
                         "--interval", str(INTERVAL))
        run = _wait_for("the run to start on the host", lambda: _running_on_host(bench.store))
        run_dir = Path(run.remote.run_dir)
        _wait_for("the sampler", lambda: (run_dir / "samples.raw").exists())
        # the host's sshd goes away with every connection (the run itself goes on: it is detached)
        connections, todo = [], children(server.process.pid)
        while todo:   # each connection's sshd processes (the run itself left them: it is detached)
            pid = todo.pop()
            connections.append(pid)
            todo += children(pid)
        connections = [pid for pid in connections if pid not in processes_using(str(run_dir))]
        server.stop()
        for pid in connections:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        code, out, err = _finish(proc, timeout=90)
        assert code == 1 and f"{name}: lost link (run {run.id})" in out, out + err
        assert bench.store.runs.get(run.id).run.status == "lost link"
        _wait_for("the run to end on the host", lambda: b'"done"' in (run_dir / "events.jsonl").read_bytes(), 60)
        server.start()   # the host answers again: the open window collects the run by itself
        qtbot.waitUntil(lambda: bench.store.runs.get(run.id).run.status != "lost link", timeout=60_000)
        detail = bench.store.runs.get(run.id)
        assert detail.run.status == "done" and len(detail.results) == 1
        qtbot.waitUntil(lambda: f"run {run.id} on {name}: re-attached after its link was lost"
                        in window.statusBar().currentMessage(), timeout=10_000)
        assert not run_dir.exists()
    finally:
        window.close()
        bench.close()
