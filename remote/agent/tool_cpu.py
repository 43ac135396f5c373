"""How much of the CPU it could use the load tool itself used over a step (the dbload test's clients).

A busy machine is not a busy client: other work on the host says nothing of whether the load tool ran out of
CPU. The tool is this agent and every process under it (pgbench, sysbench, redis-benchmark, the built-in
generator's workers): their utime+stime from /proc/<pid>/stat, the ones already reaped through their parent's
cutime+cstime, so each tick is counted once, whether the process lives or has ended. The CPUs they could use
are this process's affinity, held lower by a CPU quota (cgroup v1 cfs_quota_us, v2 cpu.max) where one is set.
"""
import math
import os
import time
from typing import Callable, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

from . import client_sync

UTIME, CUTIME = 11, 13    # fields after the command's ")": state ppid ... utime stime cutime cstime


def _stat(proc: str, pid: str) -> "Optional[Tuple[int, int]]":
    """(parent pid, utime+stime+cutime+cstime ticks) of one process, or None when it is gone."""
    try:
        with open(os.path.join(proc, pid, "stat")) as handle:
            text = handle.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    try:
        return int(fields[1]), sum(int(v) for v in fields[UTIME:CUTIME + 2])
    except (IndexError, ValueError):
        return None


def _tree(pid: int, proc: str) -> "Optional[Dict[int, int]]":
    """Process `pid` and its live descendants: pid -> its CPU ticks (its reaped children's included), or None
    when /proc cannot tell."""
    stats = {}   # type: Dict[int, Tuple[int, int]]
    try:
        names = os.listdir(proc)
    except OSError:
        return None
    for name in names:
        if name.isdigit():
            found = _stat(proc, name)
            if found is not None:
                stats[int(name)] = found
    if pid not in stats:
        return None
    children = {}   # type: Dict[int, List[int]]
    for child, (parent, _ticks) in stats.items():
        children.setdefault(parent, []).append(child)
    tree, todo = {}, [pid]   # type: Dict[int, int], List[int]
    while todo:
        here = todo.pop()
        if here in tree:
            continue
        tree[here] = stats[here][1]
        todo.extend(children.get(here, ()))
    return tree


def tree_ticks(pid: int, proc: str = "/proc") -> Optional[int]:
    """CPU ticks of process `pid` and all its descendants so far (live ones, and the reaped through their
    parents), or None when /proc cannot tell."""
    tree = _tree(pid, proc)
    return sum(tree.values()) if tree is not None else None


class ReadyWait:
    """How long the load tool's threads waited for a CPU while they had work (the scheduler's run delay,
    /proc/<pid>/task/<tid>/schedstat): a tool starved by other work on its host uses little CPU and yet is the
    client's limit, which its CPU share alone would not tell.

    A thread's figures are gone once it ends, so the tree is sampled every second of a step (sample()) and
    the growth of each thread's figures is summed; a thread's last part-second before it ends is not counted.
    """

    def __init__(self, pid: Optional[int] = None, proc: str = "/proc", enabled: bool = True,
                 clock: "Callable[[], float]" = time.monotonic) -> None:
        self.enabled = enabled
        self.pid = os.getpid() if pid is None else pid
        self.proc = proc
        self.clock = clock
        self.last = {}   # type: Dict[Tuple[int, int], int]
        self.waited_ns = 0
        self.first = None   # type: Optional[float]
        self.latest = None   # type: Optional[float]

    def sample(self) -> None:
        tree = _tree(self.pid, self.proc) if self.enabled else None
        if tree is None:
            return
        now = {}   # type: Dict[Tuple[int, int], int]   # (pid, tid) -> ns it waited on a run queue so far
        for pid in tree:
            task_dir = os.path.join(self.proc, str(pid), "task")
            try:
                tids = os.listdir(task_dir)
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(os.path.join(task_dir, tid, "schedstat")) as handle:
                        waited = int(handle.read().split()[1])   # ns on the CPU, ns waiting for it, slices
                except (OSError, ValueError, IndexError):
                    continue
                now[(pid, int(tid))] = waited
        if not now:
            return
        at = self.clock()
        if self.first is None:
            self.first = at   # what the threads waited before the step does not count
        else:
            for key, waited in now.items():
                self.waited_ns += max(0, waited - self.last.get(key, 0))   # a new thread: all its life
        self.last, self.latest = now, at

    def share(self, parallel: Optional[int] = None) -> Optional[float]:
        """The share (0-1) of the time since the first sample that the tool's threads waited for a CPU, per
        thread it runs at once (`parallel`, else 1): near 0 on a host whose CPUs the tool gets when it asks;
        None when /proc could not tell. Per wall time, not per time it had work: a tool that mostly waits for
        replies and is woken a moment late each time has waited little in all."""
        if self.first is None or self.latest is None or self.latest <= self.first:
            return None
        wall = (self.latest - self.first) * max(1, parallel or 1)
        return round(min(1.0, self.waited_ns / 1e9 / wall), 3)


def _quota(where: str) -> Optional[float]:
    """CPUs' worth of a cgroup's quota (v2 cpu.max, else v1 cfs_quota_us / cfs_period_us), or None."""
    for files in (("cpu.max",), ("cpu.cfs_quota_us", "cpu.cfs_period_us")):
        values = []   # type: List[str]
        try:
            for name in files:
                with open(os.path.join(where, name)) as handle:
                    values += handle.read().split()
            limit, period = float(values[0]), float(values[1])
        except (OSError, ValueError, IndexError):
            continue
        return limit / period if limit > 0 and period > 0 else None
    return None


def usable_cpus(proc: str = "/proc", cgroup_root: str = client_sync.CGROUP_ROOT) -> float:
    """The CPUs this process (and what it starts) may use: its affinity, or less under a CPU quota."""
    try:
        cpus = float(len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        cpus = float(os.cpu_count() or 1)
    where = client_sync._quota_dir(proc, cgroup_root)
    quota = _quota(where) if where is not None else None
    return min(cpus, quota) if quota is not None else cpus


def whole_cpus() -> int:
    """usable_cpus() rounded up: how many of this process's workers can run at once. A load generator that forks
    a worker per CPU of the machine where it may use one only competes with itself."""
    return max(1, int(math.ceil(usable_cpus())))


def snapshot(pid: Optional[int] = None, proc: str = "/proc",
             cgroup_root: str = client_sync.CGROUP_ROOT) -> "Optional[Tuple[float, float, float]]":
    """(CPU seconds of the tool's processes, a monotonic instant, usable CPUs), or None when /proc cannot tell."""
    ticks = tree_ticks(os.getpid() if pid is None else pid, proc)
    if ticks is None:
        return None
    try:
        per_second = float(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        per_second = 100.0
    return ticks / per_second, time.monotonic(), usable_cpus(proc, cgroup_root)


def busy(before: "Optional[Tuple[float, float, float]]",
         after: "Optional[Tuple[float, float, float]]", parallel: Optional[int] = None) -> Optional[float]:
    """The share (0-1) of the CPU it could use the load tool used between two snapshots: near 1, the tool
    itself was out of CPU and the step's total may be the client's limit. `parallel`: how many threads or
    processes the tool runs at once, when fewer than the usable CPUs (a single-threaded tool is out of CPU
    at one CPU's worth)."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    usable = min(before[2], after[2])
    if parallel:
        usable = min(usable, float(parallel))
    if usable <= 0:
        return None
    return round(max(0.0, min(1.0, (after[0] - before[0]) / ((after[1] - before[1]) * usable))), 3)
