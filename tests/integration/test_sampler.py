"""The real sampler.sh on this machine and on an sshd test host without python: ticks, stops, orphans."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from remote.connect import connect
from remote.local_transport import LocalTransport
from remote.telemetry import RawTickParser, Snapshot, TelemetryComputer, TelemetrySample, sampler_script
from remote.telemetry.sampler import start_command
from tests.fixtures.processes import group_members, running
from tests.fixtures.sshd import SshTestHost, known_hosts_for

pytestmark = pytest.mark.integration


def uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def parse(raw: bytes) -> tuple[RawTickParser, list[Snapshot], list[TelemetrySample]]:
    parser = RawTickParser()
    snapshots = parser.feed(raw)
    computer = TelemetryComputer()
    samples = [s for snap in snapshots if (s := computer.add(snap)) is not None]
    return parser, snapshots, samples


@pytest.fixture
def run_dir() -> Iterator[Path]:
    with LocalTransport() as local:
        path = Path(local.make_private_dir())
    (path / "sampler.sh").write_bytes(sampler_script())
    (path / "deadline").write_text(f"{uptime() + 120:.0f}\n")
    yield path
    pid_file = path / "sampler.pid"
    if pid_file.exists():   # a failed test must not leave a sampler behind
        (path / "stop").touch()
        pid = int(pid_file.read_text())
        if not wait_for(lambda: not running(pid), 12):
            os.killpg(pid, signal.SIGKILL)
    shutil.rmtree(path, ignore_errors=True)


def start_local(run_dir: Path, interval: float, mode: str = "auto", seconds: float | None = None) -> int:
    with LocalTransport() as local:
        started = time.monotonic()
        result = local.run(start_command(str(run_dir), interval, mode, seconds), timeout=10)
        assert result.ok, result.error_text()
        assert time.monotonic() - started < 2, "start_command must return at once"
    pid = int((run_dir / "sampler.pid").read_text())
    raw = run_dir / "samples.raw"
    assert wait_for(lambda: not raw.exists() or b"@header-end" in raw.read_bytes(), 3)
    return pid


@pytest.mark.parametrize("mode", ["auto", "compat", "posix"])
def test_a_timed_measurement_ends_on_the_hosts_own_clock(run_dir: Path, mode: str) -> None:
    """--seconds 2 at 0.5 s: the baseline tick and four more (2 s of samples), then sampler.done; however late
    the ticks are read, no more come, and the sampler waits (guarding the deadline) until it is stopped."""
    pid = start_local(run_dir, 0.5, mode, seconds=2)
    assert wait_for(lambda: (run_dir / "sampler.done").exists(), 20)
    time.sleep(1.5)   # three more intervals: none may be measured
    _parser, snapshots, samples = parse((run_dir / "samples.raw").read_bytes())
    assert len(snapshots) == 5 and len(samples) == 4
    assert 1.75 <= snapshots[-1].uptime - snapshots[0].uptime < 2.5
    assert running(pid)   # the run directory stays for the workbench to read
    (run_dir / "stop").touch()
    assert wait_for(lambda: not running(pid), 5)


@pytest.mark.parametrize("mode", ["auto", "compat", "posix"])
def test_ticks_arrive_every_half_second_with_sane_values(run_dir: Path, mode: str) -> None:
    pid = start_local(run_dir, 0.5, mode)
    assert os.getpgid(pid) == pid and os.getsid(pid) == pid   # own session: kill -TERM -PID stops it
    want = 6 if mode == "auto" else 4
    # as many ticks as the test needs, however long a busy machine takes (their spacing is checked below)
    assert wait_for(lambda: len(parse((run_dir / "samples.raw").read_bytes())[1]) >= want, 60)
    parser, snapshots, samples = parse((run_dir / "samples.raw").read_bytes())
    assert parser.bad_ticks == 0 and parser.garbage_lines == 0, parser.last_error
    assert parser.header is not None
    assert parser.header.shell.startswith("bash" if mode != "posix" else "sh")
    assert len(snapshots) >= want, [s.uptime for s in snapshots]
    gaps = [b.uptime - a.uptime for a, b in zip(snapshots, snapshots[1:], strict=False)]
    assert all(0.3 <= gap <= 0.75 for gap in gaps), gaps
    # the schedule does not drift: the mean spacing is the interval within 10 ms
    assert abs((snapshots[-1].uptime - snapshots[0].uptime) / len(gaps) - 0.5) < 0.011, gaps

    last = samples[-1]
    assert abs(last.t - time.time()) < 2.0
    assert sum(last.cpu.values()) == pytest.approx(100.0, abs=0.01)
    assert all(v >= 0 for v in last.cpu.values())
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    assert last.mem["total"] == int(meminfo["MemTotal"].split()[0])
    assert 0 < last.mem["memused-percent"] < 100
    assert last.tasks["total"] > 10 and last.load[0] >= 0
    used_disks = {line.split()[2] for line in Path("/proc/diskstats").read_text().splitlines()
                  if line.split()[2] in parser.header.disks and any(int(v) for v in line.split()[3:])}
    assert set(last.disks) == {parser.header.dm_names.get(d, d) for d in used_disks}
    for figures in last.disks.values():
        assert all(v >= 0 for v in figures.values()) and 0 <= figures["util"] <= 100.5
    if Path("/proc/pressure/io").exists():
        assert set(last.psi) == {"%scpu", "%sio", "%fio", "%smem", "%fmem"}

    (run_dir / "stop").touch()
    assert wait_for(lambda: not running(pid), 1.5), "RUN/stop must end the sampler within a tick"
    assert run_dir.exists()   # stopping is not cleaning up: the workbench still reads the samples


@pytest.mark.parametrize("mode", ["auto", "posix"])
def test_past_deadline_stops_the_agent_and_removes_the_run(run_dir: Path, mode: str) -> None:
    # a stand-in for the agent that ignores SIGTERM: it must be killed after the grace
    agent = subprocess.Popen(["sh", "-c", "trap '' TERM; sleep 300 & wait"], start_new_session=True,
                             cwd=str(run_dir))   # the agent works in RUN: that is how it is recognised
    try:
        (run_dir / "agent.pid").write_text(f"{agent.pid}\n")
        (run_dir / "deadline").write_text(f"{uptime() - 5:.0f}\n")
        pid = start_local(run_dir, 0.5, mode)
        assert agent.wait(timeout=6) == -signal.SIGKILL
        assert wait_for(lambda: not run_dir.exists(), 3)
        assert wait_for(lambda: not running(pid), 2)
        assert group_members(agent.pid) == []
    finally:
        if agent.poll() is None:
            os.killpg(agent.pid, signal.SIGKILL)
            agent.wait()


@pytest.mark.parametrize("mode", ["auto", "posix"])
def test_past_deadline_spares_a_process_that_took_the_dead_agents_pid(run_dir: Path, mode: str) -> None:
    # the agent ended long ago (nobody collected the run); its pid now leads someone else's process group
    stranger = subprocess.Popen(["sh", "-c", "sleep 300 & wait"], start_new_session=True, cwd="/")
    try:
        (run_dir / "agent.pid").write_text(f"{stranger.pid}\n")
        (run_dir / "deadline").write_text(f"{uptime() - 5:.0f}\n")
        pid = start_local(run_dir, 0.5, mode)
        assert wait_for(lambda: not run_dir.exists(), 6)
        assert wait_for(lambda: not running(pid), 2)
        assert stranger.poll() is None and len(group_members(stranger.pid)) == 2
    finally:
        if stranger.poll() is None:
            os.killpg(stranger.pid, signal.SIGKILL)
        stranger.wait()


def test_deadline_moved_forward_keeps_it_running(run_dir: Path) -> None:
    def renew() -> None:
        (run_dir / "deadline.tmp").write_text(f"{int(uptime()) + 1}\n")
        (run_dir / "deadline.tmp").rename(run_dir / "deadline")

    renew()   # whole seconds: it would expire 1 to 2 s from now
    pid = start_local(run_dir, 0.5)
    for _ in range(4):   # the workbench's keepalive
        time.sleep(0.6)
        renew()
    assert running(pid) and run_dir.exists()
    assert wait_for(lambda: not run_dir.exists(), 3), "without keepalive it must clean up by itself"


def test_run_dir_removed_ends_it(run_dir: Path) -> None:
    pid = start_local(run_dir, 0.5)
    shutil.rmtree(run_dir)
    assert wait_for(lambda: not running(pid), 1.5)


@pytest.mark.parametrize("mode", ["auto", "posix"])
def test_sigterm_ends_it_at_once_even_in_a_long_sleep(run_dir: Path, mode: str) -> None:
    pid = start_local(run_dir, 10, mode)
    assert wait_for(lambda: b"@end 1" in (run_dir / "samples.raw").read_bytes(), 3)
    time.sleep(0.3)   # now it sleeps for almost ten seconds
    started = time.monotonic()
    os.kill(pid, signal.SIGTERM)   # the sampler alone, not its group: it must take its sleep with it
    assert wait_for(lambda: not running(pid), 1.0)
    assert time.monotonic() - started < 1.0
    assert wait_for(lambda: group_members(pid) == [], 1.0), "a sleep was left behind"


def test_under_dash_without_bash(tmp_path: Path) -> None:
    dash = shutil.which("dash")
    if dash is None:
        if os.environ.get("CI"):
            pytest.fail("dash is not installed (apt install dash)")
        pytest.skip("dash is not installed")
    run = tmp_path / "benchbay-run"
    run.mkdir(mode=0o700)
    (run / "sampler.sh").write_bytes(sampler_script())
    (run / "deadline").write_text(f"{uptime() + 60:.0f}\n")
    # PATH without bash: auto mode has to stay in dash
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("cat", "sleep", "date", "rm", "mkfifo"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    with open(run / "samples.raw", "ab") as out:
        proc = subprocess.Popen([dash, str(run / "sampler.sh"), str(run), "0.5"], stdout=out,
                                stderr=subprocess.PIPE, env={"PATH": str(bin_dir)}, start_new_session=True)
    try:
        time.sleep(2.2)
        (run / "stop").touch()
        assert proc.wait(timeout=2) == 0
        assert proc.stderr is not None and proc.stderr.read() == b""
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    parser, snapshots, samples = parse((run / "samples.raw").read_bytes())
    assert parser.header is not None and parser.header.shell == "sh"
    assert len(snapshots) >= 4 and parser.bad_ticks == 0
    assert samples[-1].mem["total"] > 0 and sum(samples[-1].cpu.values()) == pytest.approx(100.0, abs=0.01)


def test_bad_arguments_are_refused(run_dir: Path) -> None:
    for interval in ("0.4", "11", "abc", ""):
        result = subprocess.run(["sh", str(run_dir / "sampler.sh"), str(run_dir), interval],
                                capture_output=True, timeout=10)
        assert result.returncode == 2 and b"interval must be 0.5 to 10 seconds" in result.stderr
    result = subprocess.run(["sh", str(run_dir / "sampler.sh"), str(run_dir / "nope"), "1"],
                            capture_output=True, timeout=10)
    assert result.returncode == 2 and b"no run directory" in result.stderr
    for interval in (0.4, 10.5):
        with pytest.raises(ValueError, match="0.5 to 10 s"):
            start_command(str(run_dir), interval)


def test_over_ssh_without_python_it_outlives_the_connection(
    ssh_host_nopython: SshTestHost, tmp_path: Path
) -> None:
    known = known_hosts_for(tmp_path, ssh_host_nopython)
    with connect(ssh_host_nopython.spec(), known_hosts=known, timeout=10) as transport:
        run = transport.make_private_dir()
        transport.put_bytes(sampler_script(), f"{run}/sampler.sh", mode=0o700)
        deadline = "read u _ </proc/uptime; echo $((${u%.*} + 120)) >" + f"'{run}/deadline'"
        started = time.monotonic()
        result = transport.run(f"{deadline} && {start_command(run, 0.5)}", timeout=20)
        assert result.ok, result.error_text()
        assert time.monotonic() - started < 5
    time.sleep(2.0)   # no connection now
    with connect(ssh_host_nopython.spec(), known_hosts=known, timeout=10) as transport:
        try:
            first = transport.get_bytes(f"{run}/samples.raw")
            time.sleep(1.2)
            more = transport.get_bytes(f"{run}/samples.raw", offset=len(first))
            parser = RawTickParser()
            ticks = parser.feed(first) + parser.feed(more)
            assert parser.header is not None and parser.header.shell.startswith("bash")
            assert len(ticks) >= 6 and parser.bad_ticks == 0
            assert ticks[-1].uptime - ticks[0].uptime >= 2.5   # it kept sampling while we were away
            transport.run(f"touch '{run}/stop'", timeout=20)
            pid = transport.get_bytes(f"{run}/sampler.pid").decode().strip()
            assert wait_for(lambda: not transport.run(f"kill -0 {pid}", timeout=20).ok, 3)
        finally:
            transport.remove_dir(run)
