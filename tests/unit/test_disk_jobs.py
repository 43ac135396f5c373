"""The disk test's parameters: presets, overrides as the CLI's --set gives them, and wrong values refused."""
from __future__ import annotations

import pytest

from remote.agent import bench_disk, benches

MIB = 1 << 20


def test_quick_preset_defaults_and_job_names() -> None:
    params = benches.validate("disk", {})
    assert params["preset"] == "quick" and params["file_size"] == 256 * MIB
    assert (params["runtime"], params["warmup"], params["direct"], params["engine"]) == (5.0, 1.0, True, "auto")
    assert params["sweep_workers"] == [1, 4, 16] and "readahead" not in params["tests"]
    names = [job["name"] for job in bench_disk.jobs(params, "/t/f")]
    assert names == ["randread_4k", "randread_1m", "syncwrite_4k", "syncwrite_1m", "seqread_1m", "seqwrite_1m",
                     "sweep_randread_4k_w1", "sweep_randread_4k_w4", "sweep_randread_4k_w16"]
    jobs = {job["name"]: job for job in bench_disk.jobs(params, "/t/f")}
    assert jobs["syncwrite_4k"]["sync"] == "fdatasync" and jobs["randread_4k"]["sync"] == "none"
    assert jobs["randread_1m"]["bs"] == MIB and jobs["sweep_randread_4k_w16"]["workers"] == 16
    assert 9 * 6 < benches.expected_seconds("disk", {}) < 200


def test_full_preset_and_overrides_as_strings() -> None:
    full = benches.validate("disk", {"preset": "full"})
    assert full["file_size"] == 2048 * MIB and full["runtime"] == 30.0 and "readahead" in full["tests"]
    assert full["sweep_workers"] == [1, 2, 4, 8, 16, 32]
    names = [job["name"] for job in bench_disk.jobs(full, "/t/f")]
    assert "readahead_seqread_ra128" in names
    params = benches.validate("disk", {"file_size": "16M", "runtime": "0.5", "warmup": "0.2", "direct": "false",
                                       "tests": "syncwrite_4k,randread_4k", "sweep_workers": "2,1",
                                       "sync_mode": "osync", "engine": "builtin", "test_dir": "/var/tmp"})
    assert params["file_size"] == 16 * MIB and params["direct"] is False
    assert params["tests"] == ["randread_4k", "syncwrite_4k"] and params["sweep_workers"] == [1, 2]
    [_, write] = bench_disk.jobs(params, "/t/f")
    assert write["sync"] == "osync" and write["rw"] == "randwrite"


@pytest.mark.parametrize(("params", "message"), [
    ({"preset": "huge"}, "preset"),
    ({"engine": "dd"}, "engine"),
    ({"tests": ["randread_4k", "fsmark"]}, "fsmark"),
    ({"file_size": "lots"}, "file_size"),
    ({"file_size": 4096}, "at least 1 MiB"),
    ({"runtime": -1}, "runtime"),
    ({"sync_mode": "async"}, "sync_mode"),
    ({"direct": "maybe"}, "direct"),
    ({"test_dir": "relative/dir"}, "absolute"),
    ({"sweep_workers": [0]}, "sweep_workers"),
    ({"iodepth": 32}, "unknown parameter"),
])
def test_wrong_parameters_are_refused_with_the_name(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        benches.validate("disk", params)
