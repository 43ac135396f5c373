"""What a command left on its hosts when the user left at once (Ctrl-C again while it cancelled)."""
from __future__ import annotations

import contextlib
import os
import sys

from app.engine.dbload_reattach import is_watch, loads_of
from app.engine.lock import this_machine
from app.workbench import Workbench


def left_behind_lines(bench: Workbench) -> list[str]:
    """One line per run this process drove and left stored as running: the host still has its run (the agent,
    the telemetry sampler) until it is collected or its deadline passes. A database server's monitor is
    collected with its load runs, and said so."""
    here, pid = this_machine(), os.getpid()
    lines = []
    for run in bench.running_runs():
        if run.owner is None or run.owner.machine != here or run.owner.pid != pid:
            continue
        if is_watch(run):
            loads = ", ".join(str(load.id) for load in loads_of(bench, run)) or "?"
            lines.append(f"run {run.id} on {run.host_name} (the database server's telemetry during load run(s) "
                         f"{loads}) may still be on the host: it is collected and removed there with them; "
                         "otherwise the host removes it by itself at its deadline")
            continue
        # a cancel sent before the second Ctrl-C may or may not have reached the host: say what may be there
        lines.append(f"run {run.id} on {run.host_name} may still be on the host (its run directory, and its "
                     "telemetry sampler and test unless the cancel reached them): "
                     f"`benchbay runs attach {run.id}` collects it and removes it there, "
                     "as does the next start of Benchbay once the test is over; otherwise the host removes it by "
                     "itself at its deadline")
    return lines


def say_left_behind(bench: Workbench) -> None:
    with contextlib.suppress(Exception):   # leaving must never fail for what is only a hint
        for line in left_behind_lines(bench):
            print(f"benchbay: {line}", file=sys.stderr, flush=True)
