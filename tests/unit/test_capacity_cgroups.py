"""The capacity test hosts' cgroup set-up on either cgroup version: which hierarchy holds cpu and io/blkio (read
from mountinfo as the kernel writes it), and what is written where to give a host half a CPU and 1000 IOPS. The
machine's own cgroups are never touched: the hierarchies here are directories under tmp_path."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.cgroups import CgroupError, Controllers, Hierarchy, HostCgroup, Limits, find_controllers


def _mountinfo(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "mountinfo"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _v2(tmp_path: Path, controllers: str) -> Path:
    mount = tmp_path / "unified"
    mount.mkdir()
    (mount / "cgroup.controllers").write_text(controllers + "\n")
    (mount / "cgroup.subtree_control").write_text("\n")
    return mount


def test_a_v2_only_machine_uses_cgroup2_for_both(tmp_path: Path) -> None:
    mount = _v2(tmp_path, "cpuset cpu io memory pids")
    info = _mountinfo(tmp_path, f"35 24 0:30 / {mount} rw,nosuid,nodev,noexec shared:9 - cgroup2 cgroup2 rw,nsdelegate")
    found = find_controllers(info)
    assert found == Controllers(Hierarchy(2, mount), Hierarchy(2, mount)) and found.missing() == []
    assert found.describe() == f"cpu: cgroup v2 at {mount}; io: cgroup v2 at {mount}"


def test_a_hybrid_machine_takes_v1_where_cgroup2_holds_no_controller(tmp_path: Path) -> None:
    mount = _v2(tmp_path, "hugetlb")
    info = _mountinfo(
        tmp_path,
        "25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct",
        "26 24 0:23 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio",
        f"27 24 0:24 / {mount} rw,relatime - cgroup2 cgroup2 rw",
    )
    found = find_controllers(info)
    assert found.cpu == Hierarchy(1, Path("/sys/fs/cgroup/cpu,cpuacct"))
    assert found.io == Hierarchy(1, Path("/sys/fs/cgroup/blkio"))
    assert "blkio: cgroup v1 at /sys/fs/cgroup/blkio" in found.describe()


def test_a_missing_controller_is_named_not_skipped_over(tmp_path: Path) -> None:
    info = _mountinfo(tmp_path, "25 24 0:22 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu")
    found = find_controllers(info)
    assert found.cpu is not None and found.io is None
    assert found.missing() == ["no cgroup hierarchy offers the io controller (v2 cgroup.controllers without 'io', "
                               "no v1 'blkio' mount)"]
    with pytest.raises(CgroupError, match="io controller"):
        HostCgroup("half", found, Limits(0.5)).make()


def test_v2_half_a_cpu_and_1000_iops(tmp_path: Path) -> None:
    mount = _v2(tmp_path, "cpu io")
    group = HostCgroup("slow", Controllers(Hierarchy(2, mount), Hierarchy(2, mount)), Limits(0.5, 1000, "7:3"))
    group.make()
    [leaf] = group.leaves()
    assert leaf.parent.parent == mount and "+cpu +io" in (leaf.parent / "cgroup.subtree_control").read_text()
    assert (leaf / "cpu.max").read_text() == "50000 100000\n"
    assert (leaf / "io.max").read_text() == "7:3 riops=1000 wiops=1000\n"
    assert (leaf / "cpu.weight").read_text() == "10000\n"
    group.join(4321)
    assert (leaf / "cgroup.procs").read_text() == "4321\n"


def test_v1_a_whole_cpu_without_an_iops_limit(tmp_path: Path) -> None:
    cpu, blkio = tmp_path / "cpu", tmp_path / "blkio"
    cpu.mkdir()
    blkio.mkdir()
    group = HostCgroup("twin", Controllers(Hierarchy(1, cpu), Hierarchy(1, blkio)), Limits(1.0))
    group.make()
    leaves = {leaf.parent: leaf for leaf in group.leaves()}
    assert set(leaves) == {cpu, blkio}
    assert (leaves[cpu] / "cpu.cfs_quota_us").read_text() == "100000\n"
    assert (leaves[cpu] / "cpu.cfs_period_us").read_text() == "100000\n"
    assert not (leaves[blkio] / "blkio.throttle.read_iops_device").exists()
