"""The test directory's filesystem (mountinfo, statvfs, O_DIRECT) and RAID (mdstat, lspci)."""
import contextlib
import errno
import mmap
import os
import re
from typing import Dict, List, Optional

from .common import Collector, read_text, run_command, which

_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")
_MD_LINE = re.compile(r"^(md\S*)\s*:\s*(\S+)\s*(.*)$")
_MD_MEMBER = re.compile(r"^(\S+?)\[(\d+)\]((?:\([A-Za-z]\))*)$")
_MD_STATUS = re.compile(r"\[([U_]+)\]")
_MD_SYNC = re.compile(r"\b(recovery|resync|reshape|check|repair)\s*=\s*([\d.]+%)")
_MD_LEVELS = ("raid", "linear", "multipath", "faulty")
# lspci class names of storage controllers
_STORAGE_CLASSES = ("RAID bus controller", "SATA controller", "Serial Attached SCSI controller",
                    "SCSI storage controller", "Non-Volatile memory controller", "Mass storage controller",
                    "IDE interface")


def unescape_mount_field(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040 ...)."""
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), text)


def parse_mountinfo(text: str) -> List[Dict[str, str]]:
    """/proc/self/mountinfo lines as dicts: mount_point, device, fstype, options, root."""
    mounts = []
    for line in text.splitlines():
        fields = line.split(" ")
        if "-" not in fields[6:]:
            continue
        sep = fields.index("-", 6)  # optional fields end at the lone "-"
        if len(fields) < sep + 3:
            continue
        options = fields[5].split(",")
        super_options = fields[sep + 3].split(",") if len(fields) > sep + 3 else []
        merged = options + [o for o in super_options if o not in options and o not in ("rw", "ro")]
        mounts.append({
            "root": unescape_mount_field(fields[3]),
            "mount_point": unescape_mount_field(fields[4]),
            "fstype": fields[sep + 1],
            "device": unescape_mount_field(fields[sep + 2]),
            "options": ",".join(merged),
        })
    return mounts


def find_mount(path: str, mounts: List[Dict[str, str]]) -> Optional[Dict[str, str]]:
    """The mount that holds `path`: the longest matching mount point; a later mount on the same
    point hides an earlier one, as in the kernel."""
    best = None
    for mount in mounts:
        point = mount["mount_point"]
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best["mount_point"])):
            best = mount
    return best


def probe_o_direct(directory: str) -> Optional[bool]:
    """Can a file in `directory` be written with O_DIRECT? None when we cannot write there at all."""
    flag = getattr(os, "O_DIRECT", None)
    if flag is None:
        return None
    path = os.path.join(directory, ".benchbay-odirect-{}".format(os.getpid()))
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | flag, 0o600)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            _unlink_quietly(path)  # some filesystems create the file before refusing the flag
            return False
        return None
    try:
        buffer = mmap.mmap(-1, 4096)  # page aligned, as O_DIRECT needs
        try:
            os.write(fd, buffer)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return False
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                return None
            raise
        finally:
            buffer.close()
        return True
    finally:
        os.close(fd)
        _unlink_quietly(path)


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def whole_disk_of(path: str, sys_root: str = "/sys") -> Optional[str]:
    """The disk holding path, named as the telemetry names it: the whole disk of a partition (vda for
    vda1, nvme0n1 for nvme0n1p2), a device-mapper volume by its dm name. None where no block device
    holds it (tmpfs, overlay, NFS, btrfs: an anonymous device)."""
    try:
        dev = os.stat(path).st_dev
    except OSError:
        return None
    if os.major(dev) == 0:
        return None
    node = os.path.realpath(os.path.join(sys_root, "dev", "block", "{}:{}".format(os.major(dev), os.minor(dev))))
    if not os.path.isdir(node):
        return None
    if os.path.exists(os.path.join(node, "partition")):
        node = os.path.dirname(node)
    name = os.path.basename(node)
    try:
        dm_name = (read_text(os.path.join(sys_root, "block", name, "dm", "name")) or "").strip()
    except OSError:
        dm_name = ""
    return dm_name or name


def gather_test_dir(path: str, mountinfo_path: str = "/proc/self/mountinfo") -> Dict[str, object]:
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise OSError("{} is not a directory".format(path))
    mount = find_mount(real, parse_mountinfo(read_text(mountinfo_path) or "")) or {}
    stat = os.statvfs(real)
    return {
        "path": real,
        "device": mount.get("device"),
        "disk": whole_disk_of(real),   # the telemetry's name for it: the Live disk graphs open on it
        "fstype": mount.get("fstype"),
        "mount_point": mount.get("mount_point"),
        "options": mount.get("options"),
        "total_bytes": stat.f_blocks * stat.f_frsize,
        "free_bytes": stat.f_bavail * stat.f_frsize,  # what an unprivileged test may fill
        "o_direct": probe_o_direct(real) if os.access(real, os.W_OK) else None,
    }


def parse_mdstat(text: str) -> List[Dict[str, object]]:
    """Arrays from /proc/mdstat: name, level, state, member devices, failed/spare members, [UU_] status."""
    arrays = []  # type: List[Dict[str, object]]
    current = None  # type: Optional[Dict[str, object]]
    for line in text.splitlines():
        match = _MD_LINE.match(line)
        if match:
            name, state, rest = match.groups()
            words = [w for w in rest.split() if not (w.startswith("(") and w.endswith(")"))]
            level = words[0] if words and words[0].startswith(_MD_LEVELS) else None
            current = {"name": name, "level": level, "state": state, "devices": [], "failed": [],
                       "spare": [], "status": None, "degraded": False, "sync": None}
            for word in words[1:] if level else words:
                member = _MD_MEMBER.match(word)
                if not member:
                    continue
                device, _, marks = member.groups()
                current["devices"].append(device)
                if "(F)" in marks:
                    current["failed"].append(device)
                if "(S)" in marks:
                    current["spare"].append(device)
            arrays.append(current)
            continue
        if not line.strip() or not line[0].isspace():
            current = None  # a blank line or "unused devices:" ends the array's block
            continue
        if current is None:
            continue
        status = _MD_STATUS.search(line)
        if status and current["status"] is None:
            current["status"] = "[" + status.group(1) + "]"
            current["degraded"] = "_" in status.group(1)
        sync = _MD_SYNC.search(line)
        if sync:
            current["sync"] = "{} {}".format(sync.group(1), sync.group(2))
    return arrays


def storage_controllers(lspci_output: str) -> List[str]:
    return [line.strip() for line in lspci_output.splitlines()
            if any(cls in line for cls in _STORAGE_CLASSES)]


def gather_raid(collector: Collector, mdstat_path: str = "/proc/mdstat") -> Dict[str, object]:
    mdstat = collector.guard("raid.mdstat", lambda: read_text(mdstat_path))
    arrays = collector.guard("raid.arrays", lambda: parse_mdstat(mdstat), []) if mdstat else []
    hardware = []  # type: List[str]
    lspci = which("lspci")
    if lspci:
        def controllers() -> List[str]:
            status, out, err = run_command([lspci])
            if status != 0:
                raise RuntimeError("lspci exited {}: {}".format(status, err.strip()))
            return storage_controllers(out)
        hardware = collector.guard("raid.hardware", controllers, [])
    return {"mdstat": mdstat, "arrays": arrays, "hardware": hardware}
