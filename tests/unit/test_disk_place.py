"""Where the disk test writes: never over a file it did not create, never into system places unasked."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from remote.agent import bench_disk
from remote.agent.disk_file import DiskFileError, prepare_file, remove_file, unique_file_name
from remote.agent.disk_place import mount_of, resolve, system_dir_problem
from remote.agent.run_context import EventWriter, RunContext

MIB = 1 << 20


def _ctx(tmp_path: Path) -> RunContext:
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    return RunContext(EventWriter(str(run_dir / "events.jsonl")), str(run_dir), {})


def _events(ctx: RunContext) -> list[dict]:
    return [json.loads(line) for line in (Path(ctx.run_dir) / "events.jsonl").read_text().splitlines()]


def test_an_existing_file_is_neither_overwritten_nor_removed(tmp_path: Path) -> None:
    theirs = tmp_path / "benchbay-disk-1234.dat"      # the old predictable name, someone else's file
    theirs.write_bytes(b"precious")
    ctx = _ctx(tmp_path)
    with pytest.raises(DiskFileError, match="already exists and this run did not create it"):
        prepare_file(str(theirs), MIB, ctx, str(tmp_path))
    assert ctx.cleanup() == []
    remove_file(str(theirs))
    assert theirs.read_bytes() == b"precious"


def test_a_file_put_in_place_of_ours_is_left_alone(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    path = prepare_file(str(tmp_path / unique_file_name()), MIB, ctx, str(tmp_path))
    os.unlink(path)
    Path(path).write_bytes(b"someone else's")          # same name, another file
    assert ctx.cleanup() == []
    assert Path(path).read_bytes() == b"someone else's"


def test_file_names_are_unpredictable() -> None:
    names = {unique_file_name() for _ in range(50)}
    assert len(names) == 50 and all(n.startswith("benchbay-disk-") and n.endswith(".dat") for n in names)
    assert f"benchbay-disk-{os.getpid()}.dat" not in names
    assert {len(n) for n in names} == {len("benchbay-disk-.dat") + 16}     # 64 random bits each


@pytest.mark.parametrize("directory, fstype, problem", [
    ("/etc", "ext4", "a system directory"),
    ("/etc/ssl/private", "ext4", "a system directory"),
    ("/usr/local/share", "ext4", "a system directory"),
    ("/", "ext4", "a system directory"),
    ("/var", "ext4", "a system directory"),
    ("/dev", "devtmpfs", "on devtmpfs, a pseudo-filesystem, not a disk"),
    ("/mnt/odd", "sysfs", "on sysfs, a pseudo-filesystem, not a disk"),
    ("/dev/shm", "tmpfs", None),
    ("/var/lib/postgresql", "xfs", None),
    ("/srv/data", "ext4", None),
    ("/etcetera", "ext4", None),
])
def test_system_places(directory: str, fstype: str, problem: str | None) -> None:
    assert system_dir_problem(directory, fstype) == problem


def test_refusal_names_where_a_symlink_leads_and_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to("/etc")
    with pytest.raises(ValueError) as caught:
        resolve(str(tmp_path / "data"), allow_system_dir=False)
    message = str(caught.value)
    assert f"refusing test_dir /etc (resolved from {tmp_path / 'data'})" in message
    assert "a system directory" in message and "allow_system_dir=true" in message
    real, fstype, problem = resolve(str(tmp_path / "data"), allow_system_dir=True)
    assert (real, problem) == ("/etc", "a system directory") and fstype


def test_mount_points_with_escaped_characters(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/vda / ext4 rw 0 0\n"
                      "/dev/vdb /mnt/my\\040disk xfs rw 0 0\n"
                      "tmpfs /mnt/my\\040disk/ram tmpfs rw 0 0\n")
    assert mount_of("/mnt/my disk/sub", str(mounts)) == ("/mnt/my disk", "xfs")
    assert mount_of("/mnt/my disk/ram", str(mounts)) == ("/mnt/my disk/ram", "tmpfs")
    assert mount_of("/mnt/my diskette", str(mounts)) == ("/", "ext4")


def test_the_run_says_where_the_file_went(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (tmp_path / "via-link").symlink_to(data)
    ctx = _ctx(tmp_path)
    params = bench_disk.validate({"file_size": MIB, "runtime": 0.2, "warmup": 0, "engine": "builtin",
                                  "tests": ["randread_4k"], "test_dir": str(tmp_path / "via-link")})
    bench_disk.run(ctx, params)
    events = _events(ctx)
    [where] = [e for e in events if e["type"] == "test_file"]
    assert where["test_dir"] == str(data) and where["requested"] == str(tmp_path / "via-link")
    assert where["path"].startswith(str(data) + "/benchbay-disk-") and where["fstype"] == mount_of(str(data))[1]
    assert any(str(data) in e["message"] and "leads to" in e["message"] for e in events if e["type"] == "warning")
    meta = next(e for e in events if e["type"] == "result")["metadata"]
    assert meta["test_file"] == where["path"] and meta["test_dir"] == str(data) and meta["fstype"]
    assert list(data.iterdir()) == []


def test_allow_system_dir_is_a_checked_parameter() -> None:
    assert bench_disk.validate({})["allow_system_dir"] is False
    assert bench_disk.validate({"allow_system_dir": "true"})["allow_system_dir"] is True
    with pytest.raises(ValueError, match="allow_system_dir must be true or false"):
        bench_disk.validate({"allow_system_dir": "please"})


@pytest.mark.skipif(not os.access("/run", os.W_OK), reason="needs write access to /run (root)")
def test_insisting_on_a_system_directory_runs_and_says_so(tmp_path: Path) -> None:
    system_dir = Path("/run") / f"benchbay-test-{os.getpid()}"
    system_dir.mkdir()
    try:
        ctx = _ctx(tmp_path)
        params = bench_disk.validate({"file_size": MIB, "runtime": 0.2, "warmup": 0, "engine": "builtin",
                                      "tests": ["randread_4k"], "test_dir": str(system_dir),
                                      "allow_system_dir": True})
        bench_disk.run(ctx, params)
        events = _events(ctx)
        assert any(e["type"] == "warning" and "a system directory: used because allow_system_dir=true"
                   in e["message"] for e in events)
        [where] = [e for e in events if e["type"] == "test_file"]
        assert where["test_dir"] == str(system_dir) and where["fstype"] == mount_of(str(system_dir))[1]
        assert any(e["type"] == "result" for e in events) and list(system_dir.iterdir()) == []
    finally:
        system_dir.rmdir()
