"""The disk test on a real host: odd directory names with real fio, another user's file, system places.

Over a real sshd test host (this machine), as the CLI and the GUI run it. As root the agent could write
anywhere: these check that it writes only its own, new file, where the user meant it to go.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from app.engine.orchestrator import RunControl, RunRequest, execute_run
from tests.fixtures.sshd import SshTestHost

pytestmark = pytest.mark.integration

TINY = {"file_size": "8M", "runtime": 0.3, "warmup": 0, "tests": ["randread_4k", "syncwrite_4k"]}


def _add(workbench, host: SshTestHost) -> str:
    workbench.add_host(host.spec())
    workbench.known_hosts.add(host.host_id, host.host_key())
    return host.name


def _results(workbench, run_id: int) -> dict:
    return {r.metric: r for r in workbench.store.runs.get(run_id).results if r.test == "disk"}


def test_fio_runs_in_a_directory_with_colon_semicolon_hash_and_spaces(workbench, ssh_host: SshTestHost,
                                                                     tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        if os.environ.get("CI"):
            pytest.fail("fio is not installed: the fio engine cannot be checked")
        pytest.skip("fio is not installed")
    test_dir = tmp_path / "disk a:b;c #d"
    test_dir.mkdir()
    request = RunRequest(_add(workbench, ssh_host), "disk", dict(TINY, engine="fio", test_dir=str(test_dir)),
                         interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    results = _results(workbench, outcome.run_id)
    for job in ("randread_4k", "syncwrite_4k"):
        assert results[f"{job}.iops"].value > 0 and results[f"{job}.mbps"].value > 0
        assert results[f"{job}.iops"].metadata["engine"] == "fio"
        assert results[f"{job}.iops"].metadata["test_dir"] == str(test_dir.resolve())
    assert list(test_dir.iterdir()) == []


def test_another_users_file_with_the_old_name_is_left_alone(workbench, ssh_host: SshTestHost,
                                                          tmp_path: Path) -> None:
    test_dir = tmp_path / "shared"
    test_dir.mkdir()
    theirs = [test_dir / f"benchbay-disk-{pid}.dat" for pid in range(300, 330)]   # pids an agent may get
    for path in theirs:
        path.write_bytes(b"not yours")
        if os.geteuid() == 0:
            os.chown(path, 65534, 65534)
    before = {p: p.stat() for p in theirs}
    request = RunRequest(_add(workbench, ssh_host), "disk", dict(TINY, engine="builtin", test_dir=str(test_dir)),
                         interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert (outcome.status, outcome.error) == ("done", "")
    assert sorted(test_dir.iterdir()) == sorted(theirs)          # ours is gone, theirs are all there
    for path in theirs:
        st = path.stat()
        assert path.read_bytes() == b"not yours"
        assert (st.st_ino, st.st_uid, st.st_mtime_ns) == (before[path].st_ino, before[path].st_uid,
                                                          before[path].st_mtime_ns)
    events = workbench.store.runs.events(outcome.run_id)
    [where] = [e for e in events if e["type"] == "test_file"]
    assert Path(where["path"]).parent == test_dir.resolve() and where["path"] not in map(str, theirs)


# /dev is devtmpfs on a host, often a plain tmpfs in a container: either way it is refused
@pytest.mark.parametrize("target, why", [("/etc", ("a system directory",)),
                                         ("/dev", ("a system directory", "on devtmpfs, a pseudo-filesystem")),
                                         ("/sys/kernel", ("on sysfs, a pseudo-filesystem",))])
def test_system_places_are_refused_with_one_line_saying_what_to_do(workbench, ssh_host: SshTestHost,
                                                                   tmp_path: Path, target: str, why: tuple) -> None:
    link = tmp_path / "data"
    link.symlink_to(target)
    resolved = os.path.realpath(target)
    ours_before = [n for n in os.listdir(resolved) if n.startswith("benchbay")]   # /dev changes by itself
    request = RunRequest(_add(workbench, ssh_host), "disk", dict(TINY, engine="builtin", test_dir=str(link)),
                         interval=0.5)
    outcome = execute_run(workbench, request, RunControl())
    assert outcome.status == "failed"
    assert "\n" not in outcome.error
    assert f"refusing test_dir {resolved} (resolved from {link})" in outcome.error
    assert any(w in outcome.error for w in why) and "allow_system_dir=true" in outcome.error
    assert [n for n in os.listdir(resolved) if n.startswith("benchbay")] == ours_before   # nothing written
    assert _results(workbench, outcome.run_id) == {}
