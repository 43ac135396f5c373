"""The agent's fact gathering: parsers on sample texts, fake sysfs trees, and the real machine."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from remote.agent import common
from remote.agent.common import NEEDS_ROOT, Collector
from remote.agent.facts_cpu import cpu_from_cpuinfo, memory_from_meminfo, parse_cpuinfo, parse_meminfo
from remote.agent.facts_disks import gather_disks, selected_scheduler
from remote.agent.facts_storage import (
    find_mount,
    gather_test_dir,
    parse_mdstat,
    parse_mountinfo,
    probe_o_direct,
    storage_controllers,
    unescape_mount_field,
)
from remote.agent.facts_system import classify_virtualization, gather_system, parse_os_release
from remote.agent.facts_tools import first_version
from remote.facts import gather_facts
from remote.local_transport import LocalTransport

REPO = Path(__file__).resolve().parents[2]
MODEL = "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz"


def _cpuinfo_two_sockets() -> str:
    """2 sockets x 2 cores x 2 hyperthreads = 8 logical CPUs, as the kernel prints it."""
    blocks = []
    number = 0
    for thread in range(2):
        for socket in range(2):
            for core in (0, 4):
                blocks.append(
                    f"processor\t: {number}\nvendor_id\t: GenuineIntel\nmodel name\t: {MODEL}  \n"
                    f"cpu MHz\t\t: {2000 + number}.000\nphysical id\t: {socket}\nsiblings\t: 4\n"
                    f"core id\t\t: {core}\ncpu cores\t: 2\napicid\t\t: {socket * 16 + core * 2 + thread}\n"
                    "flags\t\t: fpu sse4_2 avx avx2 avx512f aes pclmulqdq ht\n"
                )
                number += 1
    return "\n".join(blocks) + "\n"


def test_cpuinfo_two_sockets():
    cpu = cpu_from_cpuinfo(parse_cpuinfo(_cpuinfo_two_sockets()))
    assert cpu["model"] == MODEL
    assert cpu["vendor"] == "GenuineIntel"
    assert (cpu["sockets"], cpu["cores"], cpu["threads"]) == (2, 4, 8)
    assert cpu["mhz"] == pytest.approx(2003.5)
    assert cpu["flags"] == ["sse4_2", "avx", "avx2", "avx512f", "aes", "pclmulqdq"]


def test_cpuinfo_without_physical_id_falls_back_to_one_socket():
    arm = "".join(
        f"processor\t: {n}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd aes pmull sha1 sha2 crc32\n"
        "CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\n"
        for n in range(4)
    ) + "Hardware\t: Example board\n"
    cpu = cpu_from_cpuinfo(parse_cpuinfo(arm))
    assert (cpu["sockets"], cpu["cores"], cpu["threads"]) == (1, 4, 4)
    assert cpu["model"] == "Example board"
    assert cpu["mhz"] is None
    assert cpu["flags"] == ["aes", "asimd", "sha1", "sha2", "pmull", "crc32"]


def test_meminfo_in_bytes():
    text = "MemTotal:       16318480 kB\nMemFree:  1000 kB\nMemAvailable:   12000000 kB\n" \
           "SwapTotal: 2097148 kB\nSwapFree: 2097000 kB\nHugePages_Total:       0\n"
    info = parse_meminfo(text)
    assert info["HugePages_Total"] == 0
    assert memory_from_meminfo(info) == {
        "total_bytes": 16318480 * 1024, "available_bytes": 12000000 * 1024,
        "swap_total_bytes": 2097148 * 1024, "swap_free_bytes": 2097000 * 1024,
    }


MDSTAT = """Personalities : [raid1] [raid10] [linear] [multipath] [raid0] [raid6] [raid5] [raid4]
md1 : active raid10 sdd1[3] sdc1[2] sdb2[1] sda2[0]
      976506880 blocks super 1.2 512K chunks 2 near-copies [4/4] [UUUU]
      bitmap: 2/8 pages [8KB], 65536KB chunk

md0 : active raid1 sdb1[1](F) sda1[0]
      1048512 blocks super 1.2 [2/1] [U_]
      [==>..................]  recovery = 12.6% (132096/1048512) finish=0.3min speed=44032K/sec

md127 : inactive sde1[0](S)
      1048576 blocks super 1.2

unused devices: <none>
"""


def test_mdstat_degraded_raid1():
    arrays = {a["name"]: a for a in parse_mdstat(MDSTAT)}
    assert set(arrays) == {"md0", "md1", "md127"}
    md0 = arrays["md0"]
    assert (md0["level"], md0["state"], md0["status"]) == ("raid1", "active", "[U_]")
    assert md0["devices"] == ["sdb1", "sda1"] and md0["failed"] == ["sdb1"]
    assert md0["degraded"] is True and md0["sync"] == "recovery 12.6%"
    md1 = arrays["md1"]
    assert (md1["level"], md1["status"], md1["degraded"]) == ("raid10", "[UUUU]", False)
    assert md1["devices"] == ["sdd1", "sdc1", "sdb2", "sda2"]
    md127 = arrays["md127"]
    assert (md127["state"], md127["level"], md127["spare"], md127["status"]) == ("inactive", None, ["sde1"], None)


MOUNTINFO = r"""22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro
30 22 0:26 / /tmp rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=8G
41 22 8:17 / /mnt/my\040disk rw,noatime shared:20 master:3 - xfs /dev/sdb1 rw,attr2,inode64
42 41 8:33 / /mnt/my\040disk/inner\011tab rw,relatime - ext4 /dev/sdc1 rw
43 22 0:50 / /srv rw - ext4 /dev/sdd1 rw
44 22 0:51 / /srv rw - xfs /dev/sde1 rw
"""


def test_mountinfo_escapes_and_longest_match():
    mounts = parse_mountinfo(MOUNTINFO)
    assert unescape_mount_field(r"a\040b\134c") == "a b\\c"
    assert [m["mount_point"] for m in mounts][2:4] == ["/mnt/my disk", "/mnt/my disk/inner\ttab"]
    disk = find_mount("/mnt/my disk/data", mounts)
    assert (disk["device"], disk["fstype"]) == ("/dev/sdb1", "xfs")
    assert disk["options"] == "rw,noatime,attr2,inode64"
    assert find_mount("/mnt/my disk/inner\ttab/x", mounts)["device"] == "/dev/sdc1"
    assert find_mount("/mnt/my diskette", mounts)["mount_point"] == "/"
    assert find_mount("/tmp", mounts)["fstype"] == "tmpfs"
    assert find_mount("/srv/data", mounts)["device"] == "/dev/sde1"  # the later mount hides the earlier


def test_small_parsers():
    assert selected_scheduler("none [mq-deadline] kyber bfq") == "mq-deadline"
    assert selected_scheduler("none") == "none"
    assert selected_scheduler(None) is None
    release = parse_os_release('NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n')
    assert release["PRETTY_NAME"] == "Debian GNU/Linux 12 (bookworm)" and release["ID"] == "debian"
    assert first_version("fio-3.33\n", "fio-") == "3.33"
    assert first_version("Exim version 4.96 #2 built 01-Jan-2024", "Exim version") == "4.96"
    assert first_version("Version 8.15.2\n Compiled with: DNSMAP", "Version ") == "8.15.2"
    assert first_version("postgres (PostgreSQL) 15.5 (Debian 15.5-0+deb12u1)", "PostgreSQL") == "15.5"
    assert first_version("sysstat version 12.6.1\n(C) Sebastien Godard", "version") == "12.6.1"
    assert first_version("mail_version = 3.7.10", "=") == "3.7.10"
    lspci = "00:1f.2 SATA controller: Intel Corporation C600 AHCI\n00:02.0 VGA compatible controller: X\n" \
            "03:00.0 RAID bus controller: Broadcom / LSI MegaRAID SAS-3 3108\n"
    assert len(storage_controllers(lspci)) == 2


def test_virtualization_fallback():
    assert classify_virtualization() == "none"
    assert classify_virtualization(dockerenv=True) == "docker"
    assert classify_virtualization(containerenv=True) == "podman"
    assert classify_virtualization(cgroup="0::/lxc.payload.c1\n") == "lxc"
    assert classify_virtualization(osrelease="5.15.90.1-microsoft-standard-WSL2") == "wsl"
    assert classify_virtualization(cpu_hypervisor=True, dmi_vendor="QEMU", dmi_product="Standard PC") == "qemu"
    assert classify_virtualization(cpu_hypervisor=True, dmi_vendor="VMware, Inc.") == "vmware"
    assert classify_virtualization(dmi_vendor="Microsoft Corporation", dmi_product="Virtual Machine") == "microsoft"
    assert classify_virtualization(cpu_hypervisor=True) == "vm-other"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _fake_disk(root: Path, name: str, sectors: int, **attrs: str) -> Path:
    base = root / name
    _write(base / "size", str(sectors))
    _write(base / "removable", "0")
    _write(base / "queue" / "rotational", attrs.pop("rotational", "0"))
    _write(base / "queue" / "scheduler", attrs.pop("scheduler", "none"))
    _write(base / "queue" / "read_ahead_kb", "128")
    _write(base / "queue" / "logical_block_size", "512")
    _write(base / "queue" / "physical_block_size", "4096")
    for rel, value in attrs.items():
        _write(base / rel.replace("__", "/"), value)
    return base


def test_disks_from_fake_sysfs(tmp_path, monkeypatch):
    sys_block = tmp_path / "block"
    _fake_disk(sys_block, "sda", 3907029168, rotational="1", scheduler="mq-deadline [bfq] none",
               device__model="ST2000DM008-2FR1", device__vendor="ATA     ")
    (sys_block / "sda" / "device" / "vpd_pg80").write_bytes(b"\x00\x80\x00\x08ZFL1ABCD")
    _fake_disk(sys_block, "nvme0n1", 1000215216, device__model="Samsung SSD 980", device__serial="S64ANS0")
    _fake_disk(sys_block, "dm-0", 2097152, dm__name="vg0-data")
    _fake_disk(sys_block, "md0", 2095104)
    _fake_disk(sys_block, "vda", 536870912, rotational="1", device__vendor="0x1af4")
    _fake_disk(sys_block, "loop0", 1024)
    _fake_disk(sys_block, "ram0", 8192)
    _fake_disk(sys_block, "zram0", 0)
    real_read_text = common.read_text

    def no_vpd_for_users(path: str):
        if path.endswith("vpd_pg80"):
            raise PermissionError(13, "Permission denied", path)
        return real_read_text(path)

    monkeypatch.setattr(common, "read_text", no_vpd_for_users)
    collector = Collector(is_root=False)
    disks = {d["name"]: d for d in gather_disks(collector, str(sys_block), str(tmp_path / "udev"))}
    assert sorted(disks) == ["dm-0", "md0", "nvme0n1", "sda", "vda"]
    assert disks["vda"]["model"] == "virtio block device"   # virtio has no model string of its own
    sda = disks["sda"]
    assert sda["size_bytes"] == 3907029168 * 512
    assert (sda["rotational"], sda["scheduler"], sda["vendor"], sda["kind"]) == (True, "bfq", "ATA", "disk")
    assert sda["serial"] == NEEDS_ROOT and collector.needs_root == ["disks.sda.serial"]
    assert (disks["nvme0n1"]["kind"], disks["nvme0n1"]["serial"]) == ("nvme", "S64ANS0")
    assert (disks["dm-0"]["kind"], disks["dm-0"]["dm_name"]) == ("dm", "vg0-data")
    assert disks["md0"]["kind"] == "md" and disks["md0"]["read_ahead_kb"] == 128
    monkeypatch.undo()
    as_root = Collector(is_root=True)
    disks = {d["name"]: d for d in gather_disks(as_root, str(sys_block), str(tmp_path / "udev"))}
    assert disks["sda"]["serial"] == "ZFL1ABCD" and as_root.needs_root == []


def test_dmi_serial_needs_root(tmp_path, monkeypatch):
    for name, value in (("sys_vendor", "Dell Inc."), ("product_name", "PowerEdge R640"),
                        ("product_serial", "ABC1234"), ("bios_version", "2.1.8")):
        _write(tmp_path / name, value)
    real_read_text = common.read_text

    def private_serial(path: str):
        if path.endswith("_serial"):
            raise PermissionError(13, "Permission denied", path)
        return real_read_text(path)

    monkeypatch.setattr(common, "read_text", private_serial)
    collector = Collector(is_root=False)
    system = gather_system(collector, str(tmp_path))
    assert system == {"vendor": "Dell Inc.", "product": "PowerEdge R640", "serial": NEEDS_ROOT, "bios": "2.1.8"}
    assert collector.needs_root == ["system.serial"] and collector.errors == []


def test_test_dir_and_o_direct(tmp_path):
    odd = tmp_path / "with space"
    odd.mkdir()
    info = gather_test_dir(str(odd))
    assert info["path"] == str(odd.resolve())
    assert info["mount_point"] and info["fstype"] and info["total_bytes"] > 0
    assert info["o_direct"] in (True, False)
    assert list(odd.iterdir()) == []  # the probe file is gone
    assert probe_o_direct(str(tmp_path / "missing")) is None


def _cpuinfo_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    pytest.skip("this machine's /proc/cpuinfo has no model name")


def test_facts_on_this_machine(tmp_path):
    facts = gather_facts(LocalTransport(), test_dir=str(tmp_path))
    assert set(facts) == {
        "schema", "agent_version", "collected_at", "hostname", "kernel", "kernel_version", "arch", "os",
        "python", "is_root", "cpu", "memory", "disks", "test_dir", "raid", "virtualization", "system",
        "tools", "needs_root", "errors",
    }
    assert facts["cpu"]["model"] == _cpuinfo_model()
    mem_total_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                        if line.startswith("MemTotal:"))
    assert facts["memory"]["total_bytes"] == mem_total_kb * 1024
    assert facts["cpu"]["threads"] == os.cpu_count()
    assert facts["cpu"]["sockets"] >= 1 and facts["cpu"]["cores"] <= facts["cpu"]["threads"]
    assert facts["kernel"] == os.uname().release and facts["is_root"] == (os.geteuid() == 0)
    assert facts["test_dir"]["path"] == str(tmp_path.resolve())
    assert set(facts["tools"]) == {"fio", "mta", "postgresql", "iostat", "dnsperf"}
    assert all(isinstance(e, str) and "\n" not in e for e in facts["errors"])
    fio = shutil.which("fio")
    assert facts["tools"]["fio"]["present"] == bool(fio)


def _run_agent_module(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remote.agent", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=60)


def test_cli_bad_command_is_exit_2_with_one_line():
    for args in (("frobnicate",), (), ("facts", "--no-such-option")):
        done = _run_agent_module(*args)
        assert done.returncode == 2, args
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_cli_facts_describes_where_run_dirs_live(tmp_path):
    run_dir = tmp_path / "benchbay-abc"
    run_dir.mkdir()
    done = _run_agent_module("facts", "--run-dir", str(run_dir))
    assert done.returncode == 0, done.stderr
    # the run directory is removed after the facts; its parent is where disk tests go by default
    assert json.loads(done.stdout)["test_dir"]["path"] == str(tmp_path.resolve())


def test_agent_passes_vermin_for_python_3_6():
    try:
        import vermin  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("vermin is not installed")
    # vermin has no __main__ module: call its console-script entry point
    run_vermin = "import sys; from vermin import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", run_vermin, "-t=3.6-", "--no-tips", "--violations", "remote/agent"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _old_python() -> str | None:
    """A Python 3.6 to try the agent with: BENCHBAY_OLD_PYTHON, else python3.6 on the PATH."""
    for candidate in (os.environ.get("BENCHBAY_OLD_PYTHON"), shutil.which("python3.6")):
        if not candidate:
            continue
        try:
            done = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                                  capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.strip() == "(3, 6)":
            return candidate
    return None


def test_agent_runs_on_python_3_6(tmp_path):
    old = _old_python()
    if not old:
        pytest.skip("no working python3.6 (set BENCHBAY_OLD_PYTHON); vermin covers the syntax")
    from remote.agent_package import build_agent

    pyz = tmp_path / "agent.pyz"
    pyz.write_bytes(build_agent())
    done = subprocess.run([old, "-E", "-s", str(pyz), "facts", "--test-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "LC_ALL": "C"})
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["python"].startswith("3.6.") and facts["errors"] == []


def _fake_tool(directory: Path, name: str, script: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)


def test_tools_found_and_a_hanging_tool_does_not_hang(tmp_path, monkeypatch):
    from remote.agent.facts_tools import gather_tools

    _fake_tool(tmp_path, "fio", f"exec {shutil.which('sleep')} 30")
    _fake_tool(tmp_path, "iostat", "echo 'sysstat version 12.7.5'; echo '(C) Sebastien Godard' >&2")
    _fake_tool(tmp_path, "exim4", "echo 'Exim version 4.97 #2 built 01-Jan-2024 12:00:00'")
    _fake_tool(tmp_path, "dnsperf", "echo 'Usage: dnsperf [-f family]' >&2; echo 'DNS Performance Testing Tool'; "
                                    "echo 'Version 2.10.0'; exit 1")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(common, "EXTRA_TOOL_DIRS", ())
    monkeypatch.setattr(common, "COMMAND_TIMEOUT", 0.5)
    collector = Collector()
    started = time.monotonic()
    tools = gather_tools(collector)
    assert time.monotonic() - started < 5
    assert tools["fio"] == {"present": True, "version": None, "path": str(tmp_path / "fio")}
    assert any(e.startswith("tools.fio: RuntimeError: fio did not finish") for e in collector.errors)
    assert tools["iostat"]["version"] == "12.7.5"
    assert tools["dnsperf"] == {"present": True, "version": "2.10.0", "path": str(tmp_path / "dnsperf")}
    assert (tools["mta"]["type"], tools["mta"]["version"]) == ("exim", "4.97")


def _fake_sys(root, dev: int, node: str, partition: bool = False, dm_name: str | None = None):
    """A /sys with the one block device whose number is dev: devices/.../<node>, linked from dev/block."""
    import os

    target = root / "devices" / "virtual" / "block" / node
    target.mkdir(parents=True)
    if partition:
        (target / "partition").write_text("1\n")
    (root / "dev" / "block").mkdir(parents=True)
    os.symlink(target, root / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}")
    if dm_name is not None:
        (root / "block" / node / "dm").mkdir(parents=True)
        (root / "block" / node / "dm" / "name").write_text(dm_name + "\n")


def test_the_test_directorys_disk_is_named_as_the_telemetry_names_it(tmp_path):
    import os

    from remote.agent.facts_storage import whole_disk_of

    dev = os.stat(tmp_path).st_dev
    if os.major(dev) == 0:
        assert whole_disk_of(str(tmp_path)) is None   # tmpfs, overlay: no block device holds it
        return
    parts = tmp_path / "parts"
    _fake_sys(parts, dev, "nvme0n1/nvme0n1p2", partition=True)
    assert whole_disk_of(str(tmp_path), str(parts)) == "nvme0n1"          # a partition: its whole disk
    mapper = tmp_path / "mapper"
    _fake_sys(mapper, dev, "dm-0", dm_name="vg0-root")
    assert whole_disk_of(str(tmp_path), str(mapper)) == "vg0-root"        # device-mapper: by its name
    assert whole_disk_of(str(tmp_path / "missing")) is None
    assert whole_disk_of("/proc") is None
