"""`benchbay run --test shared-storage HOST1 HOST2 HOST3 --dir /mnt/shared`: the clients together.

The hosts are the clients (each mounts the shared storage at --dir); --clients and --threads give the
sweep. Progress on stderr, then the sweep's totals (app.summary.shared) or JSON.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from app.cli.common import UsageError, expand_hosts, print_json
from app.cli.exits import Exit
from app.cli.monitor import ask_password, cancel_on_interrupt, check_interval, collect_lost_runs, run_workers
from app.cli.run_progress import RunProgress
from app.engine.orchestrator import RunControl, RunOutcome, RunRequestError
from app.engine.shared_run import TEST, SharedOutcome, SharedRequest, default_clients, plan, run_shared
from app.engine.shared_totals import client_bound, client_limit_text
from app.summary.shared import shared_text
from app.workbench import Workbench
from storage.records import RunStatus


def add_options(run: argparse.ArgumentParser) -> None:
    """The options only the shared-storage test reads (on `benchbay run`)."""
    run.add_argument("--dir", metavar="PATH", help=f"{TEST}: the shared directory, mounted at this path on every "
                                                   "client host")
    run.add_argument("--clients", metavar="N,N,...", help=f"{TEST}: how many clients work in each step of the "
                                                           "sweep (default 1, 2, 4 ... up to the hosts given)")
    run.add_argument("--threads", metavar="N,N,...", help=f"{TEST}: threads per client in each step (default "
                                                           "1,2,4,8,16,32)")


def uses_shared_options(args: argparse.Namespace) -> bool:
    return any(getattr(args, name, None) is not None for name in ("dir", "clients", "threads"))


def _numbers(text: str, option: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{option} takes whole numbers separated by commas, like 1,2,4; not {text!r}") from None
    if not values:
        raise UsageError(f"{option} needs at least one number")
    return values


def run_shared_command(bench: Workbench, args: argparse.Namespace, params: dict[str, Any]) -> int:
    check_interval(args.interval)
    hosts = expand_hosts(bench, args.hosts)
    if args.dir:
        if params.get("test_dir", args.dir) != args.dir:
            raise UsageError(f"--dir {args.dir} and --set test_dir={params['test_dir']} disagree")
        params["test_dir"] = args.dir
    if args.clients:
        params["clients"] = _numbers(args.clients, "--clients")
    if args.threads:
        params["threads"] = _numbers(args.threads, "--threads")
    params.setdefault("clients", default_clients(len(hosts)))
    request = SharedRequest(tuple(hosts), params, args.interval)
    result, control = run_sweep(bench, hosts, lambda: plan(request, "check"),
                                lambda control, on_event, passwords: run_shared(bench, request, control, on_event,
                                                                                None, passwords))
    if not isinstance(result, SharedOutcome):
        raise result   # a wrong request or an unreachable host: one line from main()
    rows = client_rows(result.hosts, result.outcomes)
    if args.json:
        print_json({"group": result.group, "total_run_id": result.total_run_id, "runs": rows,
                    "started_at": result.started, "seconds": result.seconds,
                    "offsets": {h: {"offset_s": o.offset, "uncertainty_s": o.uncertainty}
                                for h, o in result.offsets.items()},
                    "steps": [{"step": s.name, "clients": s.clients, "threads": s.threads, "ops": s.ops,
                               "mbps": s.mbps, "start_spread_s": s.start_spread,
                               "start_spread_uncertainty_s": s.spread_uncertainty,
                               "per_client_ops": {h: list(v) for h, v in s.per_client_ops.items()},
                               "total_ops": list(s.total_ops),
                               "busiest_client": ({"host": s.busiest[0], "cpu_share": round(s.busiest[1], 3)}
                                                  if s.busiest else None),
                               "client_limit": client_limit_text(s) if client_bound(s) else ""}
                              for s in result.steps],
                    "knee": result.knee.step if result.knee else None,
                    "knee_text": result.knee.text if result.knee else "", "error": result.error})
    else:
        print(shared_text(result))
    if control.cancelled and not result.error:
        return Exit.CANCELLED
    ok = all(row["status"] == RunStatus.DONE for row in rows) and not result.error
    return Exit.OK if ok else Exit.FAILED


class SweepProgress:
    """One progress line for the whole sweep, not one per client: every client runs the same timed steps, so
    the first client's progress is the sweep's. The others speak only when something goes wrong."""

    def __init__(self, hosts: list[str], progress: RunProgress) -> None:
        self.first = hosts[0]
        self.label = f"{len(hosts)} clients" if len(hosts) > 1 else hosts[0]
        self.progress = progress

    def event(self, host: str, event: dict) -> None:
        kind = event.get("type")
        if host == self.first:
            self.progress.event(self.label, event)
        elif kind in ("warning", "error", "disconnected", "reconnected"):
            self.progress.event(host, event)
        elif kind == "done" and str(event.get("status") or "done") != "done":
            self.progress.say(host, f"  {event.get('status')}")


def client_rows(hosts: Sequence[str], outcomes: Sequence[Any]) -> list[dict[str, Any]]:
    """Each client host's run: its id, status and error (a host that failed before its run: the exception)."""
    rows = []
    for host, outcome in zip(hosts, outcomes, strict=True):
        if isinstance(outcome, RunOutcome):
            rows.append({"host": host, "run_id": outcome.run_id, "status": outcome.status, "error": outcome.error})
        else:
            rows.append({"host": host, "run_id": None, "status": RunStatus.FAILED, "error": str(outcome)})
    return rows


def run_sweep(bench: Workbench, hosts: list[str], check: Callable[[], object],
              start: Callable[[RunControl, Callable[[str, dict], None], dict[str, str | None]], Any]
              ) -> tuple[Any, RunControl]:
    """A sweep on several client hosts from the command line: the request checked (`check` raises
    RunRequestError), each host's password asked, lost runs collected, then `start(control, on_event,
    passwords)` in a worker with one progress line and Ctrl-C as a cancel. Its result (or exception) and the
    control."""
    try:
        check()
    except RunRequestError as exc:
        raise UsageError(str(exc)) from None
    for host in hosts:
        bench.get_host(host)
    passwords = {host: ask_password(bench, host) for host in hosts}
    collect_lost_runs(bench)
    control = RunControl()
    progress = SweepProgress(hosts, RunProgress())
    [result] = run_workers([lambda: start(control, progress.event, passwords)],
                           cancel_on_interrupt(control, "the hosts clean up"))
    return result, control
