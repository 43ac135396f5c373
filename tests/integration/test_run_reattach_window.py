"""The window and runs whose workbench died or lost its link: followed from start-up, taken over and
cancelled on SIGTERM, collected once the host answers again (real sshd test hosts, `benchbay` processes).
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from storage.db import open_store
from tests.fixtures.lost_runs import (
    INTERVAL,
    ROOT,
    add_host,
    benchbay,
    finish,
    kill_run,
    popen,
    running_on_host,
    start_and_kill,
    stopped_after,  # noqa: F401 - a fixture, used through pytestmark
    wait_for,
)
from tests.fixtures.processes import children, processes_using

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("stopped_after")]


def test_the_window_at_start_up_follows_a_lost_run_to_its_end(cli_env, ssh_host, qtbot) -> None:
    from app.gui.main_window import MainWindow
    from app.workbench import Workbench

    name = add_host(ssh_host)
    run, proc = start_and_kill(cli_env, name)
    finish(proc)
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
    name = add_host(ssh_host)
    # a 10 min test (cancelled long before): the window takes it over while it runs, however slow its start
    run, proc = start_and_kill(cli_env, name, phases='[["measure","Measure",600]]')
    request.addfinalizer(lambda: kill_run(run))   # if the test fails before the window cancels it
    finish(proc)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    window = popen([sys.executable, str(ROOT / "main.py")], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env)
    store = open_store(f"sqlite:///{cli_env['db']}")
    try:
        def taken_over() -> bool:
            [again] = [r for r in store.runs.running() if r.id == run.id] or [None]
            return again is None or (again.owner is not None and again.owner.pid == window.pid)
        wait_for("the window to take the run over", taken_over)
        window.send_signal(signal.SIGTERM)
        code, _out, err = finish(window, timeout=60)
        assert code == 0 and "Traceback" not in err, err
        detail = store.runs.get(run.id)
    finally:
        store.close()
    # closing the window cancels what it follows, as it does for the tests it started
    assert detail.run.status == "cancelled"
    assert not Path(run.remote.run_dir).exists()


def test_the_open_window_collects_a_lost_link_run_once_its_host_answers(cli_env, fresh_ssh_host, qtbot) -> None:
    from app.gui.main_window import MainWindow
    from app.workbench import Workbench
    from tests.fixtures.store import write_settings

    write_settings(cli_env["home"], reconnect_budget=3, connect_timeout=3)
    name = add_host(fresh_ssh_host)
    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    window = MainWindow(bench)
    qtbot.addWidget(window)
    window.reattacher.timer.setInterval(1000)   # instead of every half minute
    server = fresh_ssh_host.server
    try:
        proc = benchbay("run", name, "--test", "idle", "--set", '[["measure","Measure",12]]'.join(["phases=", ""]),
                         "--interval", str(INTERVAL))
        run = wait_for("the run to start on the host", lambda: running_on_host(bench.store))
        run_dir = Path(run.remote.run_dir)
        wait_for("the sampler", lambda: (run_dir / "samples.raw").exists())
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
        code, out, err = finish(proc, timeout=90)
        assert code == 1 and f"{name}: lost link (run {run.id})" in out, out + err
        assert bench.store.runs.get(run.id).run.status == "lost link"
        wait_for("the run to end on the host", lambda: b'"done"' in (run_dir / "events.jsonl").read_bytes(), 60)
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
