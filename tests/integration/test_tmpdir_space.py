"""Hosts whose $TMPDIR is tiny and nearly full, noexec, or fills up during a run (real sshd, real tmpfs).

Each either works, with the run directory it used named in the run's events, or ends within a bounded
time with one true line; and nothing of a run is left on the host.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from remote.errors import RemoteCommandError
from remote.local_transport import LocalTransport
from remote.run_dir import NoSpaceError
from remote.run_session import RunSession
from remote.telemetry.sampler import sampler_script, start_command
from tests.fixtures.processes import running
from tests.fixtures.tmpdirs import TmpfsHost, fill, free_kb, require_root_mounts, tmpfs

pytestmark = pytest.mark.integration

BOUND = 30.0   # seconds in which any of these ends, however it ends
IDLE = {"phases": [["measure", "Measure", 2.0]]}


def _add(workbench, th: TmpfsHost, **changes) -> str:
    workbench.add_host(th.host.spec(**changes))
    workbench.known_hosts.add(th.host.host_id, th.host.host_key())
    return th.host.name


def _started(workbench, run_id: int) -> dict:
    return next(e for e in workbench.store.runs.events(run_id) if e["type"] == "started")


def _leftovers(th: TmpfsHost) -> list[Path]:
    """Run directories in the candidates this host's runs may use that are still there."""
    places = [th.tmpdir, th.home / ".cache" / "benchbay"]
    return [p for place in places if place.is_dir() for p in place.glob("benchbay-*")]


def _one_line(text: str) -> bool:
    return bool(text) and "\n" not in text and "Traceback" not in text


def test_a_nearly_full_tmpdir_is_passed_over_and_named(workbench, tmpfs_hosts) -> None:
    th = tmpfs_hosts["tiny"]
    assert free_kb(th.tmpdir) <= 32
    name = _add(workbench, th)
    started = time.monotonic()
    outcome = execute_run(workbench, RunRequest(name, "idle", IDLE, interval=0.5))
    assert (outcome.status, outcome.error) == ("done", "")
    assert time.monotonic() - started < BOUND
    event = _started(workbench, outcome.run_id)
    assert not event["run_dir"].startswith(str(th.tmpdir))
    assert f"{th.tmpdir} has " in event["run_dir_note"] and " KB free" in event["run_dir_note"]
    warnings = [e["message"] for e in workbench.store.runs.events(outcome.run_id) if e["type"] == "warning"]
    assert any(f"not used: {th.tmpdir} has" in w for w in warnings), warnings
    assert not Path(event["run_dir"]).exists() and _leftovers(th) == []


def test_facts_monitor_and_cancel_on_a_nearly_full_tmpdir(workbench, tmpfs_hosts) -> None:
    th = tmpfs_hosts["tiny"]
    name = _add(workbench, th)
    facts = workbench.gather_facts(name)
    assert facts.facts["memory"]["total_bytes"] > 0
    outcome = execute_run(workbench, RunRequest(name, "monitor", interval=0.5, duration=2.0))
    assert outcome.status == "done" and outcome.samples >= 2
    _cancel_soon(workbench, name)
    assert _leftovers(th) == []


def test_a_configured_run_dir_comes_first_and_falls_back_when_full(workbench, tmpfs_hosts) -> None:
    roomy, tiny = tmpfs_hosts["noexec"], tmpfs_hosts["tiny"]
    name = _add(workbench, tiny, run_dir=str(roomy.tmpdir))
    outcome = execute_run(workbench, RunRequest(name, "idle", IDLE, interval=0.5))
    assert outcome.status == "done", outcome.error
    assert _started(workbench, outcome.run_id)["run_dir"].startswith(f"{roomy.tmpdir}/benchbay-")

    workbench.update_host(name, workbench.get_host(name).with_changes(run_dir=str(tiny.tmpdir)))
    outcome = execute_run(workbench, RunRequest(name, "idle", IDLE, interval=0.5))
    assert outcome.status == "done", outcome.error
    note = _started(workbench, outcome.run_id)["run_dir_note"]
    assert f"not used: {tiny.tmpdir} has" in note
    assert _leftovers(roomy) == [] and _leftovers(tiny) == []


def test_when_nothing_has_room_one_line_says_where_and_what_to_do(tmpfs_hosts, tmp_path) -> None:
    th = tmpfs_hosts["tiny"]
    with _connect(th, tmp_path) as transport:
        started = time.monotonic()
        with pytest.raises(NoSpaceError) as caught:
            transport.make_private_dir(need_bytes=1 << 50)   # more than any disk here has
        assert time.monotonic() - started < BOUND
    message = str(caught.value)
    assert _one_line(message)
    assert f"{th.tmpdir} has " in message and "/tmp has " in message
    assert f"host edit {th.host.name} --run-dir DIR" in message
    assert _leftovers(th) == []


def test_an_upload_into_a_full_directory_fails_with_one_line_and_leaves_nothing(tmpfs_hosts, tmp_path) -> None:
    th = tmpfs_hosts["tiny"]
    target = th.tmpdir / "agent-upload.pyz"
    with _connect(th, tmp_path) as transport, pytest.raises(RemoteCommandError) as caught:
        transport.put_bytes(b"x" * 200_000, str(target))
    message = str(caught.value)
    assert _one_line(message) and message.startswith(f"upload of agent-upload.pyz to {th.host.name}:{th.tmpdir}")
    assert "no space left?" in message
    assert not target.exists()


def test_a_full_run_directory_says_so_instead_of_awk(tmpfs_hosts, tmp_path) -> None:
    th = tmpfs_hosts["tiny"]
    run_dir = th.tmpdir / "benchbay-deadline"
    run_dir.mkdir()
    try:
        with _connect(th, tmp_path) as transport:
            session = RunSession(transport, "monitor")
            session.run_dir = str(run_dir)
            filler = fill(th.tmpdir, 0, "filler-deadline")
            result = transport.run(session._deadline_command(0.0, 60.0), timeout=BOUND)
    finally:
        for leftover in (th.tmpdir / "filler-deadline",):
            leftover.unlink(missing_ok=True)
        for child in run_dir.iterdir():
            child.unlink()
        run_dir.rmdir()
    assert filler.name == "filler-deadline"
    assert not result.ok
    assert result.error_text() == f"no space left in the run directory {run_dir}"


def test_noexec_tmpdir_runs_facts_idle_monitor_and_cancel(workbench, tmpfs_hosts) -> None:
    th = tmpfs_hosts["noexec"]
    name = _add(workbench, th)
    assert workbench.gather_facts(name).facts["memory"]["total_bytes"] > 0
    outcome = execute_run(workbench, RunRequest(name, "idle", IDLE, interval=0.5))
    assert (outcome.status, outcome.error) == ("done", "")
    assert os.statvfs(th.tmpdir).f_flag & os.ST_NOEXEC
    assert _started(workbench, outcome.run_id)["run_dir"].startswith(f"{th.tmpdir}/benchbay-")
    assert outcome.samples >= 2   # the sampler ran from the noexec directory (as `sh sampler.sh`)
    outcome = execute_run(workbench, RunRequest(name, "monitor", interval=0.5, duration=2.0))
    assert outcome.status == "done" and outcome.samples >= 2
    _cancel_soon(workbench, name)
    assert _leftovers(th) == []


def test_a_monitor_whose_directory_fills_stops_promptly_with_one_line(workbench, tmpfs_hosts) -> None:
    th = tmpfs_hosts["fills"]
    name = _add(workbench, th)
    outcome, ended = _fill_during(workbench, th, RunRequest(name, "monitor", interval=0.5))
    assert ended < BOUND
    assert outcome.status == "failed"
    assert _one_line(outcome.error)
    assert "no space left in " in outcome.error and "telemetry stopped" in outcome.error, outcome.error
    assert _leftovers(th) == []


def test_an_agent_run_whose_directory_fills_ends_with_one_line(workbench, tmpfs_hosts) -> None:
    th = tmpfs_hosts["fills"]
    name = _add(workbench, th)
    request = RunRequest(name, "idle", {"phases": [["measure", "Measure", 60.0]]}, interval=0.5)
    outcome, ended = _fill_during(workbench, th, request)
    assert ended < BOUND
    assert outcome.status == "failed"
    assert _one_line(outcome.error)
    assert "no space left" in outcome.error and str(th.tmpdir) in outcome.error, outcome.error
    assert _leftovers(th) == []


@pytest.mark.parametrize("mode", ["auto", "posix"])
def test_the_sampler_stops_on_a_full_disk_and_says_why(tmp_path, mode: str) -> None:
    require_root_mounts()
    with tmpfs(tmp_path / "small", 512) as mount, LocalTransport() as local:
        run = mount / "benchbay-sampler"
        run.mkdir(mode=0o700)
        (run / "sampler.sh").write_bytes(sampler_script())
        (run / "deadline").write_text("99999999\n")
        assert local.run(start_command(str(run), 0.5, mode), timeout=10).ok
        pid = int((run / "sampler.pid").read_text())
        try:
            assert _wait(lambda: (run / "samples.raw").stat().st_size > 0, 10)
            fill(mount, 0)
            assert _wait(lambda: not running(pid), 10), "the sampler kept running on a full disk"
        finally:
            (run / "stop").touch()
        log = (run / "sampler.log").read_text().strip().splitlines()
        assert log[-1] == f"no space left in {run}; telemetry stopped"


def test_cancel_on_the_small_tmpdir(workbench, tmpfs_hosts) -> None:
    th = tmpfs_hosts["fills"]
    name = _add(workbench, th)
    assert workbench.gather_facts(name).facts["memory"]["total_bytes"] > 0
    _cancel_soon(workbench, name)
    assert _leftovers(th) == []


# -- helpers ----------------------------------------------------------------------------------------

def _wait(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def _connect(th: TmpfsHost, tmp_path: Path):
    from remote.connect import connect
    from tests.fixtures.sshd import known_hosts_for

    return connect(th.host.spec(), known_hosts=known_hosts_for(tmp_path, th.host))


def _cancel_soon(workbench, name: str) -> None:
    """An idle run of a minute, cancelled once it has sent telemetry: stored as cancelled, in time."""
    control = RunControl()
    got: list[object] = []

    def on_sample(_host: str, sample: object) -> None:
        got.append(sample)
        if len(got) == 2:
            control.cancel()

    started = time.monotonic()
    request = RunRequest(name, "idle", {"phases": [["measure", "Measure", 60.0]]}, interval=0.5)
    outcome = execute_run(workbench, request, control, on_sample)
    assert outcome.status == "cancelled", outcome.error
    assert time.monotonic() - started < BOUND


def _fill_during(workbench, th: TmpfsHost, request: RunRequest):
    """Run `request`; once samples arrive, fill the host's $TMPDIR. (outcome, seconds from fill to end)."""
    control = RunControl()
    samples = threading.Event()
    result: dict = {}

    def work() -> None:
        result["outcome"] = execute_run(workbench, request, control, lambda _h, _s: samples.set())

    worker = threading.Thread(target=work)
    worker.start()
    filler = th.tmpdir / "filler-midrun"
    try:
        assert samples.wait(BOUND), "no telemetry before filling the disk"
        fill(th.tmpdir, 0, filler.name)
        filled = time.monotonic()
        worker.join(BOUND + 10)
        ended = time.monotonic() - filled
    finally:
        filler.unlink(missing_ok=True)
        if worker.is_alive():
            control.cancel()
            worker.join(60)
    assert "outcome" in result, "the run did not end"
    return result["outcome"], ended
