"""Several client hosts started together by the workbench (the shared-storage and dbload tests).

With wait_for_start the agent says "shared_ready" (its run directory) once it can start, and waits for a
file "go" there holding {"start_at": an instant on this host's clock}: the workbench sends every client the
same instant, each in its own clock. Each client's CPU over a step tells whether the client, not the
server, set the pace.
"""
import json
import os
import time
from typing import Any, Optional, Tuple  # noqa: F401 - some only in type comments

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


def host_cpu() -> "Optional[Tuple[int, int]]":
    """(busy, total) jiffies of all CPUs from /proc/stat's first line; idle and iowait are not busy."""
    try:
        with open("/proc/stat") as handle:
            fields = [int(v) for v in handle.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    total = sum(fields)
    return total - fields[3] - fields[4], total


def cpu_busy(before: "Optional[Tuple[int, int]]", after: "Optional[Tuple[int, int]]") -> Optional[float]:
    """This client host's CPU share busy between two host_cpu() readings (0-1): near 1, a step's total may be
    the client's limit."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return round(max(0.0, min(1.0, (after[0] - before[0]) / float(after[1] - before[1]))), 3)
