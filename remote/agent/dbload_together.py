"""Several client hosts loading one database server together (the workbench's app.engine.dbload_multi).

With wait_for_start the agent says "shared_ready" (its run directory) once it can start, and waits for a
file "go" there holding {"start_at": an instant on this host's clock}: the workbench sends every client the
same instant, each in its own clock. Step k (0-based) then starts at start_at + FIRST_STEP_S +
k * (step_seconds + step_gap) on every client, so second i of a step is the same second everywhere.
Client 0 makes and fills the scratch database (Redis: writes the keys under the shared key prefix) before it
says ready and drops it at the end, once the other clients' sessions are gone; the others load the same
database or keys (reuse) and never drop them.
"""
import json
import os
import subprocess
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

GO_FILE = "go"
FIRST_STEP_S = 2.0      # from the go instant to the first step: the other clients look the database up
POLL_S = 0.05


def ready_and_wait(ctx: Any, params: Dict[str, Any]) -> float:
    """This host's clock instant of the go signal (now, for a run on one host)."""
    if not params["wait_for_start"]:
        return time.time()
    ctx.emit("shared_ready", run_dir=ctx.run_dir, client=params["client_name"], client_index=params["client_index"])
    go = os.path.join(ctx.run_dir, GO_FILE)
    deadline = time.monotonic() + params["start_wait"]
    while time.monotonic() < deadline:
        try:
            with open(go) as handle:
                return float(json.load(handle)["start_at"])
        except (OSError, ValueError, KeyError, TypeError):
            ctx.sleep(POLL_S)
    raise RuntimeError("dbload: no start signal from the workbench within {:g} s: the other clients were not "
                       "ready; run the test again".format(params["start_wait"]))


def planned_start(params: Dict[str, Any], start_at: float, index: int) -> float:
    """Step index's (0-based) start on this host's clock."""
    return start_at + FIRST_STEP_S + index * (params["step_seconds"] + params["step_gap"])


def wait_until(ctx: Any, params: Dict[str, Any], start_at: float, index: int) -> Dict[str, Any]:
    """Sleep until the step's planned start (together only); what to store about the start."""
    if not params["wait_for_start"]:
        return {}
    planned = planned_start(params, start_at, index)
    while True:
        left = planned - time.time()
        if left <= 0:
            break
        ctx.sleep(min(left, 0.5) if left > 0.01 else left)
    began = time.time()
    if began - planned > 1.0:   # the step before ran long: this one starts late on this client
        ctx.warning("dbload: step {} began {:.1f} s after its planned start on {} (the step before ran long); "
                    "raise step_gap".format(index + 1, began - planned, params["client_name"]))
    ctx.emit("dbload_step_start", step=index + 1, planned=round(planned, 6), began=round(began, 6),
             client=params["client_name"])
    return {"planned_start": round(planned, 6), "began": round(began, 6), "client": params["client_name"],
            "client_index": params["client_index"], "group": params["group"]}


OTHERS_SQL = ("SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid() "
              "AND backend_type = 'client backend'")


def wait_for_other_clients(engine: Any, params: Dict[str, Any]) -> None:
    """Before client 0 drops the database (or deletes the keys): the other clients' last step has ended (no
    session of theirs is left), or the longest a step can take has passed (the drop then ends what is left)."""
    deadline = time.monotonic() + params["step_seconds"] + params["step_gap"] + 30.0
    while time.monotonic() < deadline:
        others = engine.other_sessions() if hasattr(engine, "other_sessions") else _pg_sessions(engine)
        if not others:   # none, or the server cannot say
            return
        time.sleep(0.2)


def _pg_sessions(engine: Any) -> Optional[int]:
    sql = OTHERS_SQL.format(engine.database.replace("'", "''"))
    argv = engine.pg.argv("psql", "postgres", "-X", "-q", "-A", "-t", "-c", sql)
    try:
        out = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env=engine.pg.env, timeout=30).stdout.decode("utf-8", "replace").strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return int(out) if out.isdigit() else None


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
