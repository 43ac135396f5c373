"""Several client hosts started together by the workbench (the shared-storage and dbload tests).

With wait_for_start the agent says "shared_ready" (its run directory) once it can start, and waits for a
file "go" there holding {"start_at": an instant on this host's clock}: the workbench sends every client the
same instant, each in its own clock. Each client's CPU over a step tells whether the client, not the
server, set the pace.
"""
import json
import os
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

GO_FILE = "go"
POLL_S = 0.05


def wait_for_go(ctx: Any, start_wait: float, what: str, **ready: Any) -> float:
    """Say "shared_ready" (with `ready`), then the go instant on this host's clock; RuntimeError (its text
    begins with `what`) when none comes within start_wait seconds."""
    ctx.emit("shared_ready", run_dir=ctx.run_dir, **ready)
    go = os.path.join(ctx.run_dir, GO_FILE)
    deadline = time.monotonic() + start_wait
    while time.monotonic() < deadline:
        try:
            with open(go) as handle:
                return float(json.load(handle)["start_at"])
        except (OSError, ValueError, KeyError, TypeError):
            ctx.sleep(POLL_S)
    raise RuntimeError("{}no start signal from the workbench within {:g} s: the other clients were not ready; "
                       "run the test again".format(what, start_wait))


CGROUP_ROOT = "/sys/fs/cgroup"


def host_cpu(proc: str = "/proc", cgroup_root: str = CGROUP_ROOT) -> "Optional[Tuple[int, ...]]":
    """(busy, total) jiffies of all CPUs from /proc/stat's first line (idle and iowait are not busy), then the
    CPU periods and throttled periods of the cgroup holding this process to a CPU quota, when one does."""
    try:
        with open(os.path.join(proc, "stat")) as handle:
            fields = [int(v) for v in handle.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    total = sum(fields)
    return (total - fields[3] - fields[4], total) + quota_periods(proc, cgroup_root)


def _quota_dir(proc: str, root: str) -> Optional[str]:
    """The nearest cgroup directory above this process with a CPU quota (cgroup v1 cpu or v2), or None."""
    try:
        with open(os.path.join(proc, "self", "cgroup")) as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    found = []   # type: List[Tuple[str, str, str]]
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1].split(","), parts[2]
        if "cpu" in controllers:   # v1: first
            found.insert(0, (os.path.join(root, parts[1]), path, "cpu.cfs_quota_us"))
            found.insert(1, (os.path.join(root, "cpu"), path, "cpu.cfs_quota_us"))
        elif parts[1] == "":
            found += [(root, path, "cpu.max"), (os.path.join(root, "unified"), path, "cpu.max")]
    for base, path, quota_file in found:
        here = os.path.normpath(base + "/" + path.strip("/")) if path.strip("/") else base
        while here.startswith(base) and os.path.isdir(here):
            try:
                with open(os.path.join(here, quota_file)) as handle:
                    quota = handle.read().split()
            except OSError:
                quota = []
            if quota and quota[0] not in ("max", "-1"):
                return here
            if here == base:
                break
            here = os.path.dirname(here)
    return None


def quota_periods(proc: str = "/proc", cgroup_root: str = CGROUP_ROOT) -> "Tuple[int, ...]":
    """(periods, throttled periods) of this process's CPU quota so far (cpu.stat), or () without a quota."""
    where = _quota_dir(proc, cgroup_root)
    if where is None:
        return ()
    stats = {}   # type: Dict[str, int]
    try:
        with open(os.path.join(where, "cpu.stat")) as handle:
            for line in handle:
                name, _, value = line.partition(" ")
                if value.strip().isdigit():
                    stats[name] = int(value)
    except OSError:
        return ()
    if "nr_periods" not in stats or "nr_throttled" not in stats:
        return ()
    return stats["nr_periods"], stats["nr_throttled"]


def cpu_busy(before: "Optional[Tuple[int, ...]]", after: "Optional[Tuple[int, ...]]") -> Optional[float]:
    """This client host's CPU share busy over a step (0-1): near 1, the step's total may be the client's limit.
    A client held to a CPU quota (a container, a cgroup) is as busy as the share of its quota's periods in
    which it was throttled, when that is more: it had used all the CPU it may."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    share = max(0.0, min(1.0, (after[0] - before[0]) / float(after[1] - before[1])))
    if len(before) == 4 and len(after) == 4 and after[2] > before[2]:
        share = max(share, min(1.0, (after[3] - before[3]) / float(after[2] - before[2])))
    return round(share, 3)
