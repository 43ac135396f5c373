"""Block devices from /sys/block: whole disks, md arrays and device-mapper volumes."""
import functools
import os
from typing import Dict, List, Optional

from .common import NEEDS_ROOT, Collector, read_attr, read_int, read_private, read_text

SYS_BLOCK = "/sys/block"
UDEV_DATA = "/run/udev/data"
_SKIP_PREFIXES = ("loop", "ram")


def selected_scheduler(text: Optional[str]) -> Optional[str]:
    """The [selected] entry of queue/scheduler ("none [mq-deadline] kyber" -> "mq-deadline")."""
    if not text:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    words = text.split()
    return words[0] if len(words) == 1 else None


def disk_kind(name: str) -> str:
    for prefix, kind in (("md", "md"), ("dm-", "dm"), ("nvme", "nvme"), ("zram", "zram"),
                         ("mmcblk", "mmc"), ("nbd", "nbd"), ("rbd", "rbd"), ("sr", "rom")):
        if name.startswith(prefix):
            return kind
    return "disk"


def _udev_serial(dev_numbers: Optional[str], udev_dir: str) -> Optional[str]:
    """udev's database is world-readable and often knows the serial that sysfs hides from non-root."""
    if not dev_numbers:
        return None
    try:
        text = read_text(os.path.join(udev_dir, "b" + dev_numbers))
    except OSError:
        return None
    values = {}
    for line in (text or "").splitlines():
        if line.startswith("E:") and "=" in line:
            key, _, value = line[2:].partition("=")
            values[key] = value.strip()
    return values.get("ID_SERIAL_SHORT") or values.get("ID_SCSI_SERIAL") or None


def _serial(collector: Collector, base: str, name: str, udev_dir: str) -> Optional[str]:
    for path in (os.path.join(base, "device", "serial"), os.path.join(base, "serial")):
        value = read_attr(path)  # NVMe and virtio expose it to everyone
        if value:
            return value
    value = _udev_serial(read_attr(os.path.join(base, "dev")), udev_dir)
    if value:
        return value
    vpd = os.path.join(base, "device", "vpd_pg80")  # SCSI unit serial page: root only
    if not os.path.exists(vpd):
        return None
    raw = read_private(collector, vpd, "disks.{}.serial".format(name))
    if raw is None or raw == NEEDS_ROOT:
        return raw
    serial = "".join(ch for ch in raw[4:] if ch.isprintable()).strip()  # 4-byte page header
    return serial or None


# Paravirtual disks have no model string; their PCI vendor id says what they are.
_VIRTUAL_MODELS = {"0x1af4": "virtio block device", "0x15ad": "VMware virtual disk", "0x5853": "Xen virtual disk"}


def describe_disk(collector: Collector, base: str, name: str, udev_dir: str = UDEV_DATA) -> Optional[Dict]:
    """One /sys/block entry as a facts dict, or None for devices that are not storage (size 0)."""
    sectors = read_int(os.path.join(base, "size"))
    if not sectors:
        return None
    queue = os.path.join(base, "queue")
    kind = disk_kind(name)
    vendor = read_attr(os.path.join(base, "device", "vendor"))
    model = read_attr(os.path.join(base, "device", "model")) or _VIRTUAL_MODELS.get(vendor or "")
    return {
        "name": name,
        "model": model,
        "vendor": vendor,
        "serial": _serial(collector, base, name, udev_dir),
        "size_bytes": sectors * 512,  # /sys/block/*/size is always in 512-byte sectors
        "rotational": read_attr(os.path.join(queue, "rotational")) == "1",
        "scheduler": selected_scheduler(read_attr(os.path.join(queue, "scheduler"))),
        "read_ahead_kb": read_int(os.path.join(queue, "read_ahead_kb")),
        "logical_block_size": read_int(os.path.join(queue, "logical_block_size")),
        "physical_block_size": read_int(os.path.join(queue, "physical_block_size")),
        "removable": read_attr(os.path.join(base, "removable")) == "1",
        "kind": kind,
        "dm_name": read_attr(os.path.join(base, "dm", "name")) if kind == "dm" else None,
    }


def gather_disks(collector: Collector, sys_block: str = SYS_BLOCK, udev_dir: str = UDEV_DATA) -> List[Dict]:
    disks = []
    for name in sorted(os.listdir(sys_block)):
        if name.startswith(_SKIP_PREFIXES):
            continue
        describe = functools.partial(describe_disk, collector, os.path.join(sys_block, name), name, udev_dir)
        disk = collector.guard("disks." + name, describe)
        if disk:
            disks.append(disk)
    return disks
