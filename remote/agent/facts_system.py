"""Identity of the machine: OS, kernel, DMI vendor/product/serial, virtualization."""
import os
import platform
import socket
from typing import Dict, Optional

from .common import Collector, read_attr, read_private, read_text, run_command, which

DMI = "/sys/class/dmi/id"


def parse_os_release(text: str) -> Dict[str, str]:
    values = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            values[key] = value
    return values


def os_pretty_name() -> Optional[str]:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        text = read_text(path)
        if text:
            release = parse_os_release(text)
            return release.get("PRETTY_NAME") or release.get("NAME")
    return None


def gather_identity(collector: Collector) -> Dict[str, object]:
    uname = os.uname()
    return {
        "hostname": socket.gethostname() or uname.nodename,
        "kernel": uname.release,
        "kernel_version": uname.version,
        "arch": uname.machine,
        "os": collector.guard("os", os_pretty_name),
        "python": platform.python_version(),
        "is_root": collector.is_root,
    }


def gather_system(collector: Collector, dmi: str = DMI) -> Dict[str, object]:
    """DMI data; the serial numbers are root-only files on most distributions."""
    serial = None  # type: Optional[str]
    for name in ("product_serial", "board_serial"):
        path = os.path.join(dmi, name)
        if os.path.exists(path):
            serial = read_private(collector, path, "system.serial")
            if serial:
                break
    bios_parts = [read_attr(os.path.join(dmi, n)) for n in ("bios_vendor", "bios_version", "bios_date")]
    bios = " ".join(p for p in bios_parts if p) or None
    return {
        "vendor": read_attr(os.path.join(dmi, "sys_vendor")),
        "product": read_attr(os.path.join(dmi, "product_name")),
        "serial": serial,
        "bios": bios,
    }


# (substring of DMI vendor + product, lowercase) -> systemd-detect-virt's name
_DMI_HYPERVISORS = (
    ("qemu", "qemu"), ("kvm", "kvm"), ("vmware", "vmware"), ("virtualbox", "oracle"),
    ("innotek", "oracle"), ("xen", "xen"), ("bochs", "bochs"), ("parallels", "parallels"),
    ("amazon ec2", "amazon"), ("google compute engine", "google"), ("openstack", "kvm"),
    ("microsoft corporation virtual machine", "microsoft"),
)


def classify_virtualization(dockerenv: bool = False, containerenv: bool = False,
                            cgroup: str = "", osrelease: str = "", cpu_hypervisor: bool = False,
                            dmi_vendor: str = "", dmi_product: str = "",
                            xen_type: str = "") -> str:
    """The fallback when systemd-detect-virt is absent: containers first, then hypervisors."""
    if containerenv:
        return "podman"
    if dockerenv or "docker" in cgroup:
        return "docker"
    if "lxc" in cgroup:
        return "lxc"
    if "kubepods" in cgroup:
        return "container-other"
    lowered = osrelease.lower()
    if "microsoft" in lowered or "wsl" in lowered:
        return "wsl"
    dmi = "{} {}".format(dmi_vendor, dmi_product).lower()
    for needle, name in _DMI_HYPERVISORS:
        if needle in dmi:
            return name
    if xen_type.strip() == "xen":
        return "xen"
    if cpu_hypervisor:
        return "vm-other"
    return "none"


def gather_virtualization(collector: Collector) -> str:
    tool = which("systemd-detect-virt")
    if tool:
        try:
            _status, out, _err = run_command([tool])
            answer = out.strip()
            if answer:  # prints "none" (and exits 1) on bare metal
                return answer
        except Exception as exc:
            collector.error("virtualization", exc)

    def safe(path: str) -> str:
        try:
            return read_text(path) or ""
        except OSError:
            return ""

    return classify_virtualization(
        dockerenv=os.path.exists("/.dockerenv"),
        containerenv=os.path.exists("/run/.containerenv"),
        cgroup=safe("/proc/1/cgroup"),
        osrelease=safe("/proc/sys/kernel/osrelease"),
        cpu_hypervisor=any(line.startswith("flags") and "hypervisor" in line.split()
                           for line in safe("/proc/cpuinfo").splitlines()),
        dmi_vendor=read_attr(os.path.join(DMI, "sys_vendor")) or "",
        dmi_product=read_attr(os.path.join(DMI, "product_name")) or "",
        xen_type=safe("/sys/hypervisor/type"),
    )
