"""The capacity test hosts are what they claim: a session on a host runs inside its cgroup, the half-CPU host is
held to its quota, the throttled disk's I/O is counted against its IOPS limit; and nothing of them is left on the
machine afterwards, also when the code using them failed."""
from __future__ import annotations

import subprocess
from pathlib import Path

import paramiko
import pytest

from tests.fixtures.capacity_hosts import CapacityHost, Shape, capacity_host_set, unavailable
from tests.fixtures.processes import running

pytestmark = pytest.mark.integration


def _ssh(host: CapacityHost, command: str, timeout: float = 60.0) -> str:
    client = paramiko.SSHClient()
    client.get_host_keys().add(host.host.host_id, host.host.host_key().get_name(), host.host.host_key())
    try:
        client.connect(host.host.address, port=host.host.port, username=host.host.user,
                       key_filename=str(host.host.client_key_path), allow_agent=False, look_for_keys=False,
                       timeout=10)
        _, stdout, stderr = client.exec_command(command, timeout=timeout)
        out = stdout.read().decode()
        assert stdout.channel.recv_exit_status() == 0, stderr.read().decode()
        return out
    finally:
        client.close()


def _stat(directory: Path, name: str) -> dict[str, int]:
    pairs = (line.split() for line in (directory / name).read_text().splitlines())
    return {pair[0]: int(pair[1]) for pair in pairs if len(pair) == 2 and pair[1].isdigit()}


def test_a_session_runs_inside_its_hosts_cgroup(capacity_hosts) -> None:
    for host in capacity_hosts.hosts.values():
        lines = _ssh(host, "cat /proc/self/cgroup").splitlines()
        for leaf in host.cgroup.leaves():
            assert any(line.endswith("/" + leaf.name) for line in lines), (host.name, leaf, lines)


def test_the_half_cpu_host_is_held_to_its_quota(capacity_hosts) -> None:
    half = capacity_hosts["half"]
    cpu_dir = next(leaf for leaf in half.cgroup.leaves() if (leaf / "cpu.stat").exists())
    before = _stat(cpu_dir, "cpu.stat").get("nr_throttled", 0)
    _ssh(half, "timeout 1 sh -c 'while :; do :; done' || true")
    assert _stat(cpu_dir, "cpu.stat")["nr_throttled"] > before   # the kernel stopped it at its quota


def test_the_throttled_disk_counts_its_io_against_the_limit(capacity_hosts) -> None:
    iops = capacity_hosts["iops"]
    device = iops.cgroup.limits.device
    assert device and iops.cgroup.limits.iops == 1000
    limit_files = [leaf / name for leaf in iops.cgroup.leaves()
                   for name in ("io.max", "blkio.throttle.write_iops_device") if (leaf / name).exists()]
    assert limit_files and all(device in path.read_text() and "1000" in path.read_text() for path in limit_files)
    _ssh(iops, f"dd if=/dev/zero of={iops.test_dir}/probe bs=4k count=200 oflag=direct 2>/dev/null; "
               f"rm -f {iops.test_dir}/probe")
    leaf = next(leaf for leaf in iops.cgroup.leaves()
                if (leaf / "io.stat").exists() or (leaf / "blkio.throttle.io_serviced").exists())
    if (leaf / "io.stat").exists():
        line = next(line for line in (leaf / "io.stat").read_text().splitlines() if line.startswith(device + " "))
        writes = int(dict(part.split("=") for part in line.split()[1:])["wios"])
    else:
        writes = next(int(line.split()[2]) for line in (leaf / "blkio.throttle.io_serviced").read_text().splitlines()
                      if line.startswith(device + " Write"))
    assert writes >= 200


def test_nothing_is_left_after_a_failure(sshd_session, tmp_path) -> None:
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    shape = Shape("gone", "127.0.0.85", 0.5, 1000)
    seen: dict[str, object] = {}
    with pytest.raises(RuntimeError, match="the caller failed"), \
            capacity_host_set(tmp_path, sshd_session, (shape,)) as hosts:
        host = hosts["gone"]
        seen.update(pid=host.host.server.process.pid, groups=list(host.cgroup.leaves()), mount=host.test_dir,
                    device=subprocess.run(["findmnt", "-no", "SOURCE", str(host.test_dir)], capture_output=True,
                                          text=True).stdout.strip())
        _ssh(host, "sleep 600 >/dev/null 2>&1 &")   # a straggler the host leaves running
        raise RuntimeError("the caller failed")
    assert not running(seen["pid"])
    assert not any(Path(group).exists() for group in seen["groups"])
    assert subprocess.run(["mountpoint", "-q", str(seen["mount"])]).returncode != 0
    assert seen["device"].startswith("/dev/loop")
    attached = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    assert str(tmp_path) not in attached   # its loop device is detached (the number may go to someone else)
    assert str(tmp_path) not in Path("/proc/mounts").read_text()
