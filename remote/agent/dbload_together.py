"""Several client hosts loading one database server together (the workbench's app.engine.dbload_multi).

With wait_for_start the agent says "shared_ready" (its run directory) once it can start, and waits for a
file "go" there holding {"start_at": an instant on this host's clock}: the workbench sends every client the
same instant, each in its own clock. Step k (0-based) then starts at start_at + FIRST_STEP_S +
k * (step_seconds + step_gap) on every client, so second i of a step is the same second everywhere.
Client 0 makes and fills the scratch database (Redis: writes the keys under the shared key prefix) before it
says ready and drops it at the end, once the other clients' sessions are gone; the others load the same
database or keys (reuse) and never drop them.
"""
import subprocess
import time
from typing import Any, Dict, Optional  # noqa: F401 - some only in type comments

from . import client_sync

GO_FILE = client_sync.GO_FILE
FIRST_STEP_S = 2.0      # from the go instant to the first step: the other clients look the database up


def ready_and_wait(ctx: Any, params: Dict[str, Any]) -> float:
    """This host's clock instant of the go signal (now, for a run on one host)."""
    if not params["wait_for_start"]:
        return time.time()
    return client_sync.wait_for_go(ctx, params["start_wait"], "dbload: ", client=params["client_name"],
                                   client_index=params["client_index"])


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

