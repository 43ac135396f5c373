"""Where the disk test's file really goes: the resolved directory, its filesystem, and whether it may.

A test_dir in a system directory (/etc, /usr ...) or on a pseudo-filesystem (devtmpfs, proc, sysfs ...)
is refused unless the user insists with allow_system_dir=true: as root, nothing else would stop the
test from writing a 2 GiB file into /etc or measuring RAM on /dev and calling it a disk.
"""
import os
import re
from typing import Optional, Tuple

# directories that belong to the operating system, with everything below them
SYSTEM_TREES = ("/etc", "/dev", "/proc", "/sys", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                "/libx32", "/usr", "/run")
# directories that are fine to hold test directories, but not test files themselves
SYSTEM_DIRS = ("/", "/var")
# /dev/shm is tmpfs for anybody's scratch files, not a device directory
NOT_SYSTEM = ("/dev/shm",)
PSEUDO_FS = frozenset((
    "autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs", "devpts", "devtmpfs",
    "efivarfs", "fusectl", "hugetlbfs", "mqueue", "nfsd", "nsfs", "proc", "pstore", "rpc_pipefs",
    "securityfs", "selinuxfs", "sysfs", "tracefs"))
MEMORY_FS = frozenset(("tmpfs", "ramfs", "devtmpfs"))   # files there live in RAM: no disk is measured
_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    """/proc/mounts writes space, tab, newline and backslash as \\040, \\011, \\012, \\134."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def mount_of(directory: str, mounts: str = "/proc/mounts") -> Tuple[str, str]:
    """(mount point, filesystem type) holding `directory` (already resolved); ("", "") if unknown."""
    best, fstype = "", ""
    try:
        with open(mounts) as handle:
            lines = handle.read().splitlines()
    except OSError:
        return best, fstype
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        mount = _unescape(fields[1])
        inside = directory == mount or directory.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):   # the last of equal mounts is the one on top
            best, fstype = mount, fields[2]
    return best, fstype


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def system_dir_problem(directory: str, fstype: str) -> Optional[str]:
    """Why `directory` (resolved) is no place for a test file ("a system directory"), or None."""
    if fstype in PSEUDO_FS:
        return "on {}, a pseudo-filesystem, not a disk".format(fstype)
    if any(_under(directory, top) for top in NOT_SYSTEM):
        return None
    if directory in SYSTEM_DIRS or any(_under(directory, top) for top in SYSTEM_TREES):
        return "a system directory"
    return None


def resolve(test_dir: str, allow_system_dir: bool) -> Tuple[str, str, Optional[str]]:
    """(resolved directory, filesystem type, why it is a system place or None).

    Raises ValueError with what to do when the place is refused.
    """
    real = os.path.realpath(test_dir)
    fstype = mount_of(real)[1]
    problem = system_dir_problem(real, fstype)
    if problem and not allow_system_dir:
        shown = real if real == test_dir.rstrip("/") or test_dir == "/" else "{} (resolved from {})".format(
            real, test_dir)
        raise ValueError("disk: refusing test_dir {}: {}; choose a directory on the disk to test, or set "
                         "allow_system_dir=true to insist".format(shown, problem))
    return real, fstype, problem
