"""The worker of a repeated test in the window: the runs of app.engine.repeats, one after the other, in
the worker thread a single run would have (RunController picks it for a RepeatedRequest)."""
from __future__ import annotations

from app.engine.orchestrator import EventCallback, RunControl, RunOutcome, SampleCallback
from app.engine.repeats import RepeatedRequest, run_repeated
from app.workbench import Workbench
from remote.errors import UnknownHostKey

REPEATS_DONE = "repeats_done"   # the event after the last run: how the repeats went, in a sentence


def repeat_job(bench: Workbench, request: RepeatedRequest, control: RunControl, on_sample: SampleCallback | None,
               on_event: EventCallback | None, password: str | None, remember: bool,
               trust: UnknownHostKey | None) -> RunOutcome:
    """As app.gui.monitor_controller.run_job, for every run of the request's plan; returns the last run's
    outcome, with the status of the whole group (done only when every run is)."""
    if trust is not None:
        bench.trust_key(trust)
    group = run_repeated(bench, request, request.plan, control, on_sample, on_event, password)
    if remember and password:
        bench.remember_password(request.host, password)   # it connected: the password was right
    if on_event is not None:
        on_event(request.host, {"type": REPEATS_DONE, "group": group.group, "run_ids": list(group.run_ids),
                                "message": f"{len(group.run_ids)} runs: {group.reason}"})
    last = group.outcomes[-1]
    return RunOutcome(last.run_id, last.host, group.status, last.error, last.samples)
