"""Every process a disk run starts dies when the run ends early: on cancel, on the deadline, on failure.

fio calls setsid() for each job process, so they are outside the agent's process group. The runs go
over a real sshd test host with real fio; the host is this machine, so the tests look at /proc as an
admin on the host would: no process may be left with its cwd, an open file or its command line in
the test or run directory, and both must be empty or gone.
"""
from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from remote.connect import connect
from remote.run_session import RunSession
from tests.fixtures.processes import running
from tests.fixtures.sshd import SshTestHost, known_hosts_for

pytestmark = pytest.mark.integration

# two fio job processes reading for a minute: far longer than any of these tests waits
LONG_FIO = {"engine": "fio", "file_size": "16M", "runtime": 60, "warmup": 0, "tests": ["sweep"],
            "sweep_workers": [2]}
SWEEP_PHASE = "sweep_randread_4k_w2"
GONE_WITHIN = 15.0   # seconds for everything to be gone once the run has ended


@pytest.fixture(autouse=True)
def _need_fio() -> None:
    if shutil.which("fio") is None:
        if os.environ.get("CI"):
            pytest.fail("fio is not installed: the fio engine's cancel cannot be checked")
        pytest.skip("fio is not installed")


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _inside(target: str, directory: str) -> bool:
    target = target.removesuffix(" (deleted)")
    return target == directory or target.startswith(directory.rstrip("/") + "/")


def processes_in(*directories: str) -> list[int]:
    """Live processes whose cwd, an open file or the command line is in one of `directories`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
            fds = [_link(str(fd)) for fd in (entry / "fd").iterdir()]
        except OSError:
            continue
        places = [_link(str(entry / "cwd")), *fds]
        named = any(_inside(p, d) for p in places for d in directories) or any(d in cmdline for d in directories)
        if named and running(int(entry.name)):
            found.append(int(entry.name))
    return found


def fio_processes(test_dir: str) -> list[int]:
    """fio's main process and its job processes: all run in the test directory."""
    found = []
    for pid in processes_in(test_dir):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "fio":
                found.append(pid)
        except OSError:
            continue
    return found


def _wait_for(condition, timeout: float, step: float = 0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


class FioWatch:
    """Runs beside execute_run: once fio measures (its phase started, main + 2 jobs up), acts."""

    def __init__(self, test_dir: Path, action) -> None:
        self.test_dir = str(test_dir.resolve())
        self.action = action
        self.events: list[dict] = []
        self.fio_pids: list[int] = []
        self.run_dir = ""
        self.agent_pid = 0
        self._phase = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def on_event(self, _host: str, event: dict) -> None:
        self.events.append(event)
        if event.get("type") == "started":
            self.run_dir = event["run_dir"]
        if event.get("type") == "start":
            self.agent_pid = int(event["pid"])
        if event.get("type") == "phase_start" and event.get("phase") == SWEEP_PHASE:
            self._phase.set()

    def _watch(self) -> None:
        if self._phase.wait(120):
            self.fio_pids = _wait_for(lambda: (lambda p: p if len(p) >= 3 else [])(fio_processes(self.test_dir)),
                                      30)
            if len(self.fio_pids) >= 3:
                self.action(self)


def _left_after(find, timeout: float = GONE_WITHIN) -> list[int]:
    """What `find` still finds once it found nothing, or after `timeout`."""
    end = time.monotonic() + timeout
    left = find()
    while left and time.monotonic() < end:
        time.sleep(0.2)
        left = find()
    return left


def _bystander(test_dir: Path) -> Path:
    """A file that was in the test directory before the run: whatever happens, it stays as it was."""
    path = test_dir / "benchbay-disk-results.dat"
    path.write_bytes(b"not the run's\n")
    return path


def _only_the_bystander_left(test_dir: Path, bystander: Path) -> None:
    assert list(test_dir.iterdir()) == [bystander]      # the run's test file is gone too
    assert bystander.read_bytes() == b"not the run's\n"


def _assert_nothing_left(test_dir: Path, run_dir: str, fio_pids: list[int]) -> None:
    assert len(fio_pids) >= 3, f"fio never measured with its two job processes: {fio_pids}"
    left = _left_after(lambda: sorted({p for p in fio_pids if running(p)}
                                      | set(processes_in(str(test_dir.resolve()), run_dir))))
    assert left == [], f"still running after the run ended: {left}"
    assert list(test_dir.iterdir()) == []
    assert not os.path.exists(run_dir)


def test_cancel_while_fio_measures_kills_its_job_processes(workbench, ssh_host: SshTestHost,
                                                          tmp_path: Path) -> None:
    name = _add(workbench, ssh_host)
    test_dir = tmp_path / "cancel-disk"
    test_dir.mkdir()
    control = RunControl()
    watch = FioWatch(test_dir, lambda _w: control.cancel())
    started = time.monotonic()
    request = RunRequest(name, "disk", dict(LONG_FIO, test_dir=str(test_dir)), interval=0.5)
    outcome = execute_run(workbench, request, control, None, watch.on_event)
    assert outcome.status == "cancelled" and time.monotonic() - started < 60
    done = [e for e in watch.events if e["type"] == "done" and e.get("seq") is not None]
    assert done and done[-1]["status"] == "cancelled"      # the agent stopped it all itself ...
    assert not any("was killed" in str(e.get("message")) for e in watch.events)   # ... without the fallback
    _assert_nothing_left(test_dir, watch.run_dir, watch.fio_pids)


def test_cancel_of_a_frozen_agent_kills_fio_from_the_workbench(workbench, ssh_host: SshTestHost,
                                                              tmp_path: Path) -> None:
    name = _add(workbench, ssh_host)
    test_dir = tmp_path / "frozen-disk"
    test_dir.mkdir()
    bystander = _bystander(test_dir)
    control = RunControl()

    def freeze_and_cancel(watch: FioWatch) -> None:
        os.kill(watch.agent_pid, signal.SIGSTOP)   # an agent that cannot answer: the KILL fallback's case
        control.cancel()

    watch = FioWatch(test_dir, freeze_and_cancel)
    request = RunRequest(name, "disk", dict(LONG_FIO, test_dir=str(test_dir)), interval=0.5)
    outcome = execute_run(workbench, request, control, None, watch.on_event)
    assert outcome.status == "cancelled"
    assert any("the agent did not stop; it was killed" in str(e.get("message")) for e in watch.events)
    assert not running(watch.agent_pid)
    left = _left_after(lambda: [p for p in watch.fio_pids if running(p)])
    assert len(watch.fio_pids) >= 3 and left == []
    # a frozen agent cannot remove its test file: the workbench does, from the agent's list
    _only_the_bystander_left(test_dir, bystander)
    assert not os.path.exists(watch.run_dir)


def test_agent_failure_while_fio_measures_kills_its_job_processes(workbench, ssh_host: SshTestHost,
                                                                 tmp_path: Path) -> None:
    name = _add(workbench, ssh_host)
    test_dir = tmp_path / "failed-disk"
    test_dir.mkdir()

    def kill_fio_main(watch: FioWatch) -> None:
        # fio's main process dies: the agent's job fails while fio's job processes go on
        main = [p for p in watch.fio_pids if _ppid(p) == watch.agent_pid]
        assert main, "fio's main process not found below the agent"
        os.kill(main[0], signal.SIGKILL)

    watch = FioWatch(test_dir, kill_fio_main)
    request = RunRequest(name, "disk", dict(LONG_FIO, test_dir=str(test_dir)), interval=0.5)
    outcome = execute_run(workbench, request, RunControl(), None, watch.on_event)
    assert outcome.status == "failed" and "fio failed" in outcome.error
    _assert_nothing_left(test_dir, watch.run_dir, watch.fio_pids)


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def test_deadline_while_fio_measures_kills_its_job_processes(ssh_host: SshTestHost, tmp_path: Path) -> None:
    test_dir = tmp_path / "deadline-disk"
    test_dir.mkdir()
    transport = connect(ssh_host.spec(), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=10)
    session = RunSession(transport, "disk", dict(LONG_FIO, test_dir=str(test_dir)), interval=0.5, margin=2)
    session.start()
    fio_pids = _wait_for(lambda: (lambda p: p if len(p) >= 3 else [])(fio_processes(str(test_dir.resolve()))), 60)
    transport.close()   # the workbench walks away: nobody renews the deadline
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    Path(session.run_dir, "deadline").write_text(f"{uptime + 1:.0f}\n")
    _wait_for(lambda: not os.path.exists(session.run_dir), 30)
    _assert_nothing_left(test_dir, session.run_dir, fio_pids)


def test_an_agent_killed_by_the_system_does_not_leave_fio_running(workbench, ssh_host: SshTestHost,
                                                                 tmp_path: Path) -> None:
    name = _add(workbench, ssh_host)
    test_dir = tmp_path / "oom-disk"
    test_dir.mkdir()
    bystander = _bystander(test_dir)
    watch = FioWatch(test_dir, lambda w: os.kill(w.agent_pid, signal.SIGKILL))   # as the OOM killer would
    started = time.monotonic()
    request = RunRequest(name, "disk", dict(LONG_FIO, test_dir=str(test_dir)), interval=0.5)
    outcome = execute_run(workbench, request, RunControl(), None, watch.on_event)
    assert outcome.status == "failed" and "the agent stopped without finishing" in outcome.error
    assert time.monotonic() - started < 50       # found out well before fio's 60 s would end
    left = _left_after(lambda: [p for p in watch.fio_pids if running(p)])
    assert len(watch.fio_pids) >= 3 and left == []
    assert not os.path.exists(watch.run_dir)
    _only_the_bystander_left(test_dir, bystander)   # a killed agent cannot remove its file: the workbench does


def test_deadline_of_a_frozen_agent_without_workbench_leaves_nothing(ssh_host: SshTestHost, tmp_path: Path) -> None:
    # the agent hangs and the workbench is gone: the sampler expires the run, and with it fio's jobs
    # (outside the agent's group) and the agent's test file, from the list the agent kept
    test_dir = tmp_path / "frozen-deadline-disk"
    test_dir.mkdir()
    bystander = _bystander(test_dir)
    transport = connect(ssh_host.spec(), known_hosts=known_hosts_for(tmp_path, ssh_host), timeout=10)
    session = RunSession(transport, "disk", dict(LONG_FIO, test_dir=str(test_dir)), interval=0.5, margin=2)
    session.start()
    fio_pids = _wait_for(lambda: (lambda p: p if len(p) >= 3 else [])(fio_processes(str(test_dir.resolve()))), 60)
    agent_pid = int(Path(session.run_dir, "agent.pid").read_text())
    os.kill(agent_pid, signal.SIGSTOP)
    transport.close()
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    Path(session.run_dir, "deadline").write_text(f"{uptime + 1:.0f}\n")
    _wait_for(lambda: not os.path.exists(session.run_dir), 30)
    left = _left_after(lambda: sorted({p for p in [agent_pid, *fio_pids] if running(p)}))
    assert len(fio_pids) >= 3 and left == [], f"still running after the run expired: {left}"
    _only_the_bystander_left(test_dir, bystander)
