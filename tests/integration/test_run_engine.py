"""Detached runs over real sshd: events and telemetry stored, dropped connections, cancel, orphans.

The test hosts run on this machine, so the tests look at the run directory and the processes
directly, as an admin logged in on the host would.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from remote.connect import connect
from remote.run_session import RunSession
from remote.telemetry import RawTickParser, TelemetryComputer
from tests.fixtures.processes import processes_using, running
from tests.fixtures.sshd import SshTestHost, known_hosts_for

pytestmark = pytest.mark.integration


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def _started(events: list[dict]) -> dict:
    return next(e for e in events if e["type"] == "started")


def _agent_events(events: list[dict]) -> list[dict]:
    return [e for e in events if e["seq"] is not None]


def test_idle_run_over_ssh_is_stored_and_cleaned_up(workbench, ssh_host) -> None:
    name = _add(workbench, ssh_host)
    phases = [["warmup", "Warm-up", 1.0], ["measure", "Measure", 3.0]]
    arrivals: list[float] = []
    request = RunRequest(name, "idle", {"phases": phases}, interval=0.5)
    outcome = execute_run(workbench, request, RunControl(), lambda host, s: arrivals.append(time.monotonic()))

    assert (outcome.status, outcome.error) == ("done", "")
    detail = workbench.store.runs.get(outcome.run_id)
    assert detail.run.status == "done" and detail.run.parameters["params"] == {"phases": phases}
    assert detail.facts["memory"]["total_bytes"] > 0          # from the agent's facts event
    [result] = detail.results
    assert (result.test, result.metric, result.unit) == ("idle", "elapsed", "s")
    assert 4.0 <= result.value < 6.0

    events = workbench.store.runs.events(outcome.run_id)
    agent = _agent_events(events)
    assert [e["seq"] for e in agent] == list(range(1, len(agent) + 1))
    kinds = [e["type"] for e in agent]
    assert kinds[:2] == ["start", "facts"] and kinds[-2:] == ["result", "done"]
    marks = [(e["type"], e["phase"]) for e in agent if e["type"] in ("phase_start", "phase_end")]
    assert marks == [("phase_start", "warmup"), ("phase_end", "warmup"), ("phase_start", "measure"),
                     ("phase_end", "measure")]
    assert kinds.count("progress") >= 6

    # about one sample per interval, live: not all at the end
    assert 8 <= outcome.samples <= 14
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert sorted(gaps)[len(gaps) // 2] == pytest.approx(0.5, abs=0.2)
    series = {(s.name, s.device): s for s in workbench.store.runs.series(outcome.run_id)}
    assert len(series[("cpu.user", "")].values) == outcome.samples
    assert all(v == pytest.approx(0.5, abs=0.1) for v in series[("interval", "")].values)

    run_dir = _started(events)["run_dir"]
    assert not os.path.exists(run_dir)
    assert processes_using(run_dir) == []


def _connection_processes(listener: int) -> list[int]:
    """The sshd processes serving connections: the listener's descendants named sshd*."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), stat.split("(", 1)[1].split(")")[0])
    doomed, frontier = [], [listener]
    while frontier:
        pid = frontier.pop()
        children = [child for child, (ppid, _) in parents.items() if ppid == pid]
        doomed += [child for child in children if parents[child][1].startswith("sshd")]
        frontier += children
    return doomed


def test_run_survives_a_dropped_connection(workbench, fresh_ssh_host) -> None:
    name = _add(workbench, fresh_ssh_host)
    raw: dict[str, bytes] = {}
    events: list[dict] = []
    samples: list = []

    def on_sample(host, sample) -> None:
        samples.append(sample)
        # what the sampler has written so far, as the host has it: the last copy holds every tick
        raw["copy"] = Path(_started(events)["run_dir"], "samples.raw").read_bytes()

    request = RunRequest(name, "idle", {"phases": [["long", "Long", 9.0]]}, interval=0.5)
    worker_result: dict = {}
    worker = threading.Thread(target=lambda: worker_result.update(
        outcome=execute_run(workbench, request, RunControl(), on_sample, lambda h, e: events.append(e))), daemon=True)
    worker.start()
    end = time.monotonic() + 30
    while len(samples) < 4 and time.monotonic() < end:
        time.sleep(0.1)
    assert len(samples) >= 4
    # the server goes away for a while (listener and connections), then comes back
    connections = _connection_processes(fresh_ssh_host.server.process.pid)
    assert connections
    fresh_ssh_host.server.stop()
    for pid in connections:
        os.kill(pid, signal.SIGKILL)
    time.sleep(2.5)
    fresh_ssh_host.server.start()
    worker.join(60)
    assert not worker.is_alive()

    outcome = worker_result["outcome"]
    assert (outcome.status, outcome.error) == ("done", "")
    stored = workbench.store.runs.events(outcome.run_id)
    kinds = [e["type"] for e in stored]
    assert "disconnected" in kinds and "reconnected" in kinds
    agent = _agent_events(stored)
    assert [e["seq"] for e in agent] == list(range(1, len(agent) + 1))
    assert [e["type"] for e in agent][-1] == "done"

    # every complete tick the sampler wrote is in the stored series exactly once
    ticks = RawTickParser().feed(raw["copy"])
    assert [t.seq for t in ticks] == list(range(1, len(ticks) + 1))
    computer = TelemetryComputer()
    expected = [s for s in (computer.add(t) for t in ticks) if s is not None]
    t0 = expected[0].t - expected[0].interval
    series = {(s.name, s.device): s for s in workbench.store.runs.series(outcome.run_id)}
    assert series[("interval", "")].t == pytest.approx([s.t - t0 for s in expected], abs=1e-6)
    assert series[("cpu.user", "")].values == pytest.approx([s.cpu["user"] for s in expected])
    assert outcome.samples == len(expected) >= 14
    assert not os.path.exists(_started(stored)["run_dir"])


def test_cancel_stops_the_agent_and_removes_the_run_dir(workbench, ssh_host) -> None:
    name = _add(workbench, ssh_host)
    control = RunControl()
    events: list[dict] = []

    def on_event(host, event) -> None:
        events.append(event)
        if event["type"] == "phase_start":
            threading.Timer(1.0, control.cancel).start()

    started = time.monotonic()
    request = RunRequest(name, "idle", {"phases": [["wait", "Wait", 60.0]]}, interval=0.5)
    outcome = execute_run(workbench, request, control, None, on_event)
    assert time.monotonic() - started < 20
    assert outcome.status == "cancelled"
    assert workbench.store.runs.get(outcome.run_id).run.status == "cancelled"
    stored = workbench.store.runs.events(outcome.run_id)
    agent = _agent_events(stored)
    assert agent[-1]["type"] == "done" and agent[-1]["status"] == "cancelled"   # the agent stopped cleanly
    pid = agent[0]["pid"]
    run_dir = _started(stored)["run_dir"]
    assert not running(pid)
    assert not os.path.exists(run_dir)
    assert processes_using(run_dir) == []


def test_a_dead_sampler_is_noticed_during_a_chatty_agent_run_and_says_why(workbench, ssh_host) -> None:
    name = _add(workbench, ssh_host)
    control = RunControl()
    events: list[dict] = []
    killed: list[float] = []
    warned = threading.Event()

    def kill_sampler(run_dir: str) -> None:
        # what a sampler writes before it exits on a full disk (test_tmpdir_space sees it do so); written
        # for it here, so that only the sampler stops and the agent goes on sending progress every 0.5 s
        with open(f"{run_dir}/sampler.log", "a") as log:
            log.write(f"no space left in {run_dir}; telemetry stopped\n")
        pid = int(Path(run_dir, "sampler.pid").read_text())
        killed.append(time.time())   # the clock events carry
        os.killpg(pid, signal.SIGKILL)

    def on_event(host, event) -> None:
        events.append(event)
        if event["type"] == "phase_start":
            threading.Timer(2.0, kill_sampler, [_started(events)["run_dir"]]).start()
        if event["type"] == "warning" and "sampler" in event["message"]:
            warned.set()
            threading.Timer(0.5, control.cancel).start()

    request = RunRequest(name, "idle", {"phases": [["wait", "Wait", 60.0]]}, interval=0.5)
    guard = threading.Timer(45.0, control.cancel)   # the run ends even when the warning never comes
    guard.start()
    try:
        outcome = execute_run(workbench, request, control, None, on_event)
    finally:
        guard.cancel()
    assert warned.is_set(), "the dead sampler was never noticed"
    stored = workbench.store.runs.events(outcome.run_id)
    run_dir = _started(stored)["run_dir"]
    [warning] = [e for e in stored if e["type"] == "warning" and "sampler" in e["message"]]
    assert warning["message"] == f"the telemetry sampler stopped: no space left in {run_dir}; telemetry stopped"
    # the agent kept talking all along: its events alone would never have led to the check
    progress = [e for e in stored if e["type"] == "progress" and killed[0] - 1 < e["t"] < warning["t"]]
    assert len(progress) >= 5
    assert warning["t"] - killed[0] < 20     # noticed within a bound: no ticks for max(5 s, 3 intervals)
    assert outcome.status == "cancelled" and not os.path.exists(run_dir)


def test_orphaned_runs_clean_up_after_their_deadline(ssh_host, tmp_path) -> None:
    known = known_hosts_for(tmp_path, ssh_host)
    transport = connect(ssh_host.spec(), known_hosts=known, timeout=10)
    # one run ends its test and leaves only the sampler; the other is still in its test at the deadline
    short = RunSession(transport, "idle", {"phases": [["a", "A", 1.0]]}, interval=0.5, margin=2)
    long = RunSession(transport, "idle", {"phases": [["a", "A", 600.0]]}, interval=0.5, margin=2)
    short.start()
    long.start()
    agent_pid = int(Path(long.run_dir, "agent.pid").read_text())
    transport.close()   # the workbench walks away: nobody renews the deadlines
    # as if the long test had run past its expected time: its deadline is 2 s from now
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    Path(long.run_dir, "deadline").write_text(f"{uptime + 2:.0f}\n")
    assert running(agent_pid)

    end = time.monotonic() + 20
    while time.monotonic() < end and any(os.path.exists(s.run_dir) for s in (short, long)):
        time.sleep(0.25)
    for session in (short, long):
        assert not os.path.exists(session.run_dir)
        assert processes_using(session.run_dir) == []
    assert not running(agent_pid)


def test_monitor_on_a_host_without_python(workbench, ssh_host_nopython) -> None:
    name = _add(workbench, ssh_host_nopython)
    got: list = []
    request = RunRequest(name, "monitor", interval=0.5, duration=3.0)
    outcome = execute_run(workbench, request, RunControl(), lambda host, s: got.append((host, s)))
    assert (outcome.status, outcome.error) == ("done", "")
    assert 5 <= outcome.samples <= 7 and len(got) == outcome.samples
    assert {host for host, _ in got} == {name}
    detail = workbench.store.runs.get(outcome.run_id)
    assert detail.facts is None and detail.run.engine == "sampler"
    assert ("load.1", "") in detail.series_names
    run_dir = _started(workbench.store.runs.events(outcome.run_id))["run_dir"]
    assert not os.path.exists(run_dir)


def test_two_hosts_in_parallel_threads(workbench, ssh_hosts) -> None:
    names = [_add(workbench, host) for host in ssh_hosts]
    outcomes: dict[str, object] = {}
    control = RunControl()

    def run(name: str) -> None:
        request = RunRequest(name, "idle", {"phases": [["a", "A", 2.0]]}, interval=0.5)
        outcomes[name] = execute_run(workbench, request, control, None, None)

    threads = [threading.Thread(target=run, args=(name,)) for name in names]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert time.monotonic() - started < 12   # side by side, not one after the other
    assert sorted(outcomes) == sorted(names)
    run_ids = {outcome.run_id for outcome in outcomes.values()}
    assert len(run_ids) == 2
    for name, outcome in outcomes.items():
        assert (outcome.host, outcome.status) == (name, "done")
        agent = _agent_events(workbench.store.runs.events(outcome.run_id))
        assert [e["seq"] for e in agent] == list(range(1, len(agent) + 1))
        assert workbench.store.runs.get(outcome.run_id).results[0].metric == "elapsed"
