"""The disk test's safety: where the file may go, free space, real data, the cached fallback, undoing changes."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from remote.agent import bench_disk
from remote.agent.disk_file import CREATED_LIST, DiskFileError, check_path, prepare_file, unique_file_name
from remote.agent.disk_readahead import ReadAhead
from remote.agent.run_context import Cancelled, EventWriter, RunContext

MIB = 1 << 20
TINY = {"file_size": 16 * MIB, "runtime": 0.3, "warmup": 0.1, "engine": "builtin"}


def _ctx(tmp_path: Path) -> RunContext:
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    return RunContext(EventWriter(str(run_dir / "events.jsonl")), str(run_dir), {})


def _events(ctx: RunContext) -> list[dict]:
    lines = (Path(ctx.run_dir) / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_devices_and_paths_outside_the_test_dir_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DiskFileError, match="not a regular file"):
        check_path("/dev/null", "/dev")
    with pytest.raises(DiskFileError, match="not inside the test directory"):
        check_path("/dev/null", str(tmp_path))
    with pytest.raises(DiskFileError, match="not inside the test directory"):
        prepare_file(str(tmp_path / ".." / "escape.dat"), MIB, None, str(tmp_path))
    (tmp_path / "link").symlink_to("/dev/null")
    with pytest.raises(DiskFileError, match="not a regular file"):
        prepare_file(str(tmp_path / "link"), MIB, None, str(tmp_path))
    assert os.path.islink(tmp_path / "link") and not (tmp_path.parent / "escape.dat").exists()


def test_not_enough_space_is_refused_before_writing_with_the_numbers(tmp_path: Path) -> None:
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    ctx = _ctx(tmp_path)
    with pytest.raises(DiskFileError) as caught:
        prepare_file(str(tmp_path / "big.dat"), 1 << 50, ctx, str(tmp_path))
    message = str(caught.value)
    assert "not enough free space" in message and str((1 << 50) + (16 << 20)) in message
    assert str(free >> 20) in message.split("bytes (")[-1]      # the free MiB, as statvfs says
    assert not (tmp_path / "big.dat").exists()


def test_the_file_holds_real_data_and_is_registered_for_removal(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    path = prepare_file(str(tmp_path / "t.dat"), 10 * MIB + 4096, ctx, str(tmp_path))
    st = os.stat(path)
    assert st.st_size == 10 * MIB + 4096 and st.st_blocks * 512 >= st.st_size   # written, not a sparse hole
    data = Path(path).read_bytes()
    blocks = {data[i:i + 4096] for i in range(0, len(data), 4096)}
    assert len(blocks) == len(data) // 4096                  # no two 4 KiB blocks alike, none all zeros
    assert ctx.cleanup() == [] and not os.path.exists(path)


def test_each_file_created_is_listed_in_the_run_directory_before_it_is_written(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    first = prepare_file(str(tmp_path / unique_file_name()), MIB, ctx, str(tmp_path))
    ctx.request_stop("cancelled")          # stopped while writing: the file is listed all the same
    with pytest.raises(Cancelled):
        prepare_file(str(tmp_path / unique_file_name()), 16 * MIB, ctx, str(tmp_path))
    lines = (Path(ctx.run_dir) / CREATED_LIST).read_text().splitlines()
    assert lines[0] == first and len(lines) == 2 and Path(lines[1]).parent == tmp_path.resolve()
    assert ctx.cleanup() == [] and not any(os.path.exists(p) for p in lines)


def test_a_line_break_in_the_path_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    test_dir = tmp_path / "two\nlines"
    test_dir.mkdir()
    with pytest.raises(DiskFileError, match="a line break"):
        prepare_file(str(test_dir / unique_file_name()), MIB, _ctx(tmp_path), str(test_dir))
    assert list(test_dir.iterdir()) == [] and not (tmp_path / "run" / CREATED_LIST).exists()


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_tmpfs_falls_back_to_cached_with_a_warning(tmp_path: Path) -> None:
    """tmpfs is RAM, whether or not it takes O_DIRECT (it does since Linux 6.6): labelled cached."""
    shm = Path("/dev/shm") / f"benchbay-test-{os.getpid()}"
    shm.mkdir()
    try:
        ctx = _ctx(tmp_path)
        params = bench_disk.validate(dict(TINY, test_dir=str(shm), tests=["randread_4k"]))
        bench_disk.run(ctx, params)
        events = _events(ctx)
        [warning] = [e["message"] for e in events if e["type"] == "warning"]
        assert "in memory" in warning and "not a disk" in warning and "cached" in warning and "tmpfs" in warning
        results = {e["metric"]: e for e in events if e["type"] == "result"}
        iops = results["randread_4k.iops"]
        assert iops["value"] > 0 and iops["metadata"]["cached"] is True and iops["metadata"]["direct"] is False
        assert "O_DIRECT" not in iops["metadata"]["flags"] and iops["metadata"]["fstype"] == "tmpfs"
        assert list(shm.iterdir()) == []
    finally:
        shm.rmdir()


def test_cancel_during_a_job_removes_the_file(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    test_dir = tmp_path / "data"
    test_dir.mkdir()
    params = bench_disk.validate(dict(TINY, runtime=30, test_dir=str(test_dir), tests=["sweep"],
                                      sweep_workers=[2]))
    threading.Timer(0.8, ctx.request_stop, args=("cancelled",)).start()
    with pytest.raises(Cancelled):
        bench_disk.run(ctx, params)
    assert list(test_dir.iterdir()) == []
    assert [e["phase"] for e in _events(ctx) if e["type"] == "phase_start"] == ["prepare", "sweep_randread_4k_w2"]


@pytest.mark.skipif(ReadAhead.for_dir("/tmp")[0] is None, reason="needs root and a writable read_ahead_kb")
def test_readahead_sweep_restores_the_original_also_when_cancelled(tmp_path: Path) -> None:
    readahead, _ = ReadAhead.for_dir(str(tmp_path))
    original = readahead.current()
    ctx = _ctx(tmp_path)
    params = bench_disk.validate(dict(TINY, test_dir=str(tmp_path), tests=["readahead"], readahead_kb=[16, 4096]))
    bench_disk.run(ctx, params)
    results = {e["metric"]: e for e in _events(ctx) if e["type"] == "result"}
    assert results["readahead_seqread_ra16.mbps"]["value"] > 0 and "readahead_seqread_ra4096.mbps" in results
    assert readahead.current() == original
    # the run stops in the middle: the cleanup callback (what runs on cancel and deadline) puts it back
    ctx = _ctx(tmp_path)
    params = bench_disk.validate(dict(TINY, runtime=30, test_dir=str(tmp_path), tests=["readahead"],
                                      readahead_kb=[16 if original != 16 else 32]))
    threading.Timer(0.8, ctx.request_stop, args=("cancelled",)).start()
    with pytest.raises(Cancelled):
        bench_disk.run(ctx, params)
    assert ctx.cleanup() == [] and readahead.current() == original
    assert not any(p.name.startswith("benchbay-disk") for p in tmp_path.iterdir())
