"""The capacity test hosts under cgroup v2 (tests.fixtures.cgroup2_vm: a virtual machine whose kernel offers cpu and
io on cgroup2 only) are what they claim, placed by the suite's own cgroups.py: a session runs inside its host's
v2 group, each group carries the host's cpu.max and io.max, the half-CPU host is held to its quota and the
throttled disk's I/O is counted against its limit."""
from __future__ import annotations

import paramiko
import pytest

from tests.fixtures.capacity_hosts import IOPS_LIMIT, SHAPES
from tests.fixtures.cgroup2_vm import VmCapacityHosts, VmHost
from tests.fixtures.sshd import public_key

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
CONNECT_SECONDS = 120   # an emulated machine on a busy host may take long to greet and log in


def _ssh(host: VmHost, command: str, timeout: float = 300.0) -> str:
    client = paramiko.SSHClient()
    key = public_key(host.host_key_path)
    client.get_host_keys().add(f"[{host.address}]:{host.port}", key.get_name(), key)
    try:
        client.connect(host.address, port=host.port, username=host.user, key_filename=str(host.client_key_path),
                       allow_agent=False, look_for_keys=False, timeout=CONNECT_SECONDS,
                       banner_timeout=CONNECT_SECONDS, auth_timeout=CONNECT_SECONDS)
        _, stdout, stderr = client.exec_command(command, timeout=timeout)
        out = stdout.read().decode()
        assert stdout.channel.recv_exit_status() == 0, stderr.read().decode()
        return out
    finally:
        client.close()


def _leaf(host: VmHost) -> str:
    assert len(host.leaves) == 1, host.leaves   # v2: one group holds both controllers
    return host.leaves[0]


def test_each_host_is_in_its_own_v2_group_with_its_limits(cgroup2_capacity_hosts: VmCapacityHosts) -> None:
    assert "cpu: cgroup v2" in cgroup2_capacity_hosts.controllers, cgroup2_capacity_hosts.controllers
    assert "io: cgroup v2" in cgroup2_capacity_hosts.controllers, cgroup2_capacity_hosts.controllers
    assert set(cgroup2_capacity_hosts.hosts) == {shape.name for shape in SHAPES}
    for shape in SHAPES:
        host = cgroup2_capacity_hosts[shape.name]
        leaf = _leaf(host)
        cgroup, cpu_max, io_max = _ssh(host, f"cat /proc/self/cgroup; echo @; cat {leaf}/cpu.max; echo @; "
                                             f"cat {leaf}/io.max").split("@\n")
        assert cgroup.strip() == "0::" + leaf.removeprefix("/sys/fs/cgroup"), (shape.name, cgroup)
        assert cpu_max.split() == [str(int(shape.cpus * 100_000)), "100000"], (shape.name, cpu_max)
        assert io_max.split() == [host.device, "rbps=max", "wbps=max", f"riops={shape.iops}",
                                  f"wiops={shape.iops}"], (shape.name, io_max)


def test_the_half_cpu_host_is_held_to_its_quota(cgroup2_capacity_hosts: VmCapacityHosts) -> None:
    half = cgroup2_capacity_hosts["half"]
    stat = f"{_leaf(half)}/cpu.stat"
    out = _ssh(half, f"grep nr_throttled {stat}; timeout 2 sh -c 'while :; do :; done'; grep nr_throttled {stat}")
    before, after = (int(line.split()[1]) for line in out.splitlines())
    assert after > before, out   # the kernel stopped it at its quota


def test_the_throttled_disk_counts_its_io_against_the_limit(cgroup2_capacity_hosts: VmCapacityHosts) -> None:
    iops = cgroup2_capacity_hosts["iops"]
    assert iops.iops == IOPS_LIMIT and iops.device
    out = _ssh(iops, f"dd if=/dev/zero of={iops.test_dir}/probe bs=4k count=200 oflag=direct 2>/dev/null; "
                     f"rm -f {iops.test_dir}/probe; cat {_leaf(iops)}/io.stat")
    line = next(line for line in out.splitlines() if line.startswith(iops.device + " "))
    assert int(dict(part.split("=") for part in line.split()[1:])["wios"]) >= 200, line
