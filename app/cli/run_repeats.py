"""`benchbay run --repeat N|until-stable`: each host repeats the test in its own worker (app.engine.repeats)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from app.cli.monitor import run_workers
from app.engine.orchestrator import RunControl, RunOutcome, RunRequest
from app.engine.repeats import RepeatOutcome, RepeatPlan, RepeatServices, run_repeated


class Progress(Protocol):
    def say(self, host: str, text: str) -> None: ...
    def event(self, host: str, event: dict) -> None: ...


def repeat_on_hosts(requests: list[RunRequest], plan: RepeatPlan, control: RunControl, progress: Progress,
                    passwords: dict[str, str | None], interrupted: Callable[[int], None],
                    bench: RepeatServices) -> tuple[list[str], list[Any], list[RepeatOutcome]]:
    """Repeat the test on every host at once. Returns the host of each run, each run's outcome (or the
    exception a host's first run raised), and how each host's repeats went."""

    def on_event(host: str, event: dict) -> None:
        if event.get("type") == "repeat":
            progress.say(host, f"run {event['index']} of {event['of']}" if not event.get("until_stable")
                         else f"run {event['index']}, {plan.describe()}")
        else:
            progress.event(host, event)

    def on_run(host: str) -> Callable[[int, RunOutcome, float | None], None]:
        def said(index: int, outcome: RunOutcome, rse: float | None) -> None:
            spread = f", RSE so far {rse:.2g} %" if rse is not None else ""
            progress.say(host, f"run {index} {outcome.status} (run #{outcome.run_id}){spread}")
        return said

    def job(request: RunRequest) -> Callable[[], RepeatOutcome]:
        return lambda: run_repeated(bench, request, plan, control, None, on_event, passwords[request.host],
                                    on_run(request.host))

    outcomes = run_workers([job(r) for r in requests], interrupted)
    hosts: list[str] = []
    flat: list[Any] = []
    groups = []
    for request, outcome in zip(requests, outcomes, strict=True):
        if isinstance(outcome, RepeatOutcome):
            hosts += [request.host] * len(outcome.outcomes)
            flat += outcome.outcomes
            groups.append(outcome)
        else:
            hosts.append(request.host)
            flat.append(outcome)   # the exception its first run raised, or KeyboardInterrupt
    return hosts, flat, groups


def group_line(group: RepeatOutcome) -> str:
    """ "db1: 3 runs (#4, #5, #6): stable after 3 runs: multi varies by 0.8 % (RSE), below 2 %"."""
    count = len(group.outcomes)
    return (f"{group.host}: {count} run{'s' if count != 1 else ''} ({', '.join(f'#{i}' for i in group.run_ids)}): "
            f"{group.reason}")
