"""`benchbay run HOST [HOST...] --test T [--preset P]`: one test on several hosts at once, one worker per host.

Progress on stderr (one line per host per second at most), a readable summary per host on stdout
(app.summary.text), or the runs and their results as JSON.
"""
from __future__ import annotations

import argparse
import getpass
import sys
import threading
import time
from dataclasses import asdict
from typing import Any

from app.catalogue import CATALOGUE
from app.cli.common import UsageError, print_json, setting_value
from app.cli.exits import Exit
from app.cli.monitor import (
    add_interval_option,
    ask_password,
    cancel_on_interrupt,
    check_interval,
    collect_lost_runs,
    run_workers,
)
from app.engine.orchestrator import RunControl, RunOutcome, RunRequest, RunRequestError, validate_request
from app.summary.base import warning_messages
from app.summary.disk_cpu import version_differences
from app.summary.text import summary_text
from app.workbench import Workbench
from storage.records import RunStatus

PROGRESS_EVERY = 1.0   # seconds between progress lines per host on stderr
# every preset of any test; each test accepts only its own (the agent refuses a preset elsewhere)
PRESETS = tuple(dict.fromkeys(name for test in CATALOGUE.runnable() for name in test.preset_names))


def add_parser(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="run a test on one or more hosts in parallel and store the runs")
    run.add_argument("hosts", nargs="+", metavar="HOST")
    run.add_argument("--test", required=True, choices=CATALOGUE.names())
    with_presets = " and ".join(test.name for test in CATALOGUE.runnable() if test.has_presets)
    run.add_argument("--preset", choices=PRESETS, help=f"the test's preset (default: quick; {with_presets} only)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                     help="a test parameter (the value is read as JSON when it parses, else as text)")
    run.add_argument("--pg-password", action="store_true",
                     help="restore with a DSN: ask for the PostgreSQL password (read from stdin when it is not a "
                          "terminal); it is sent to the agent over SSH, never written to disk or stored")
    add_interval_option(run)
    run.add_argument("--json", action="store_true", help="print the runs and their results as JSON")
    run.set_defaults(handler=_run)
    run.error = _one_line_error   # type: ignore[method-assign]  # a wrong test name: one line, not the usage


def _read_secret(prompt: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    return sys.stdin.readline().rstrip("\r\n")


def _one_line_error(message: str) -> None:
    print(f"benchbay: {message}", file=sys.stderr)
    sys.exit(2)


def parse_settings(items: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set needs KEY=VALUE, not {item!r}")
        params[key.strip()] = setting_value(key.strip(), value)
    return params


class _Progress:
    """Per-host progress lines on stderr, written whole from the worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._labels: dict[tuple[str, str], str] = {}

    def say(self, host: str, text: str) -> None:
        with self._lock:
            sys.stderr.write(f"{host}: {text}\n")
            sys.stderr.flush()

    def event(self, host: str, event: dict) -> None:
        kind = event.get("type")
        if kind == "phase_start":
            label = str(event.get("label") or event.get("phase"))
            self._labels[(host, str(event.get("phase")))] = label
            self.say(host, f"{label} ...")
        elif kind == "progress":
            now = time.monotonic()
            if now - self._last.get(host, 0.0) >= PROGRESS_EVERY:
                self._last[host] = now
                eta = event.get("eta_s")
                label = self._labels.get((host, str(event.get("phase"))), event.get("phase"))
                self.say(host, f"  {label} {100 * float(event.get('fraction') or 0):.0f}%"
                               + (f", {eta:.1f} s left" if isinstance(eta, (int, float)) else ""))
        elif kind in ("warning", "error", "disconnected"):
            self.say(host, f"  {kind}: {event.get('message', '')}")
        elif kind == "reconnected":
            self.say(host, f"  reconnected after {event.get('outage_s', 0):.1f} s")


def _run(bench: Workbench, args: argparse.Namespace) -> int:
    check_interval(args.interval)
    params = parse_settings(args.settings)
    if args.preset and not CATALOGUE.test(args.test).has_presets:   # before anything asks or connects
        raise UsageError(f"the {args.test} test has no presets")
    if any(key in params for key in CATALOGUE.secret_params()):
        raise UsageError("a password does not go on the command line (ps shows it to everyone): use --pg-password")
    if args.pg_password:
        params["password"] = _read_secret("PostgreSQL password: ")
    if args.preset:
        if params.get("preset", args.preset) != args.preset:
            raise UsageError(f"--preset {args.preset} and --set preset={params['preset']} disagree")
        params["preset"] = args.preset
    requests = [RunRequest(host=host, test=args.test, params=params, interval=args.interval) for host in args.hosts]
    try:
        validate_request(requests[0])
    except RunRequestError as exc:
        raise UsageError(str(exc)) from None
    for host in args.hosts:
        bench.get_host(host)   # an unknown name is a usage error before anything starts
    passwords = {host: ask_password(bench, host) for host in args.hosts}
    collect_lost_runs(bench)
    control = RunControl()
    progress = _Progress()

    interrupted = cancel_on_interrupt(control, "the hosts clean up")

    def job(request: RunRequest):
        return lambda: bench.run(request, control, None, progress.event, passwords[request.host])

    outcomes = run_workers([job(r) for r in requests], interrupted)
    return _summary(bench, args, outcomes)


def _summary(bench: Workbench, args: argparse.Namespace, outcomes: list[Any]) -> int:
    rows = []
    for host, outcome in zip(args.hosts, outcomes, strict=True):
        if isinstance(outcome, RunOutcome):
            detail = bench.find_run(outcome.run_id)
            results = [asdict(s) for s in detail.results] if detail else []
            rows.append({"run_id": outcome.run_id, "host": outcome.host, "status": outcome.status,
                         "error": outcome.error, "results": results})
        elif isinstance(outcome, Exception):
            rows.append({"run_id": None, "host": host, "status": RunStatus.FAILED, "error": str(outcome),
                         "results": []})
        else:
            raise outcome   # KeyboardInterrupt, SystemExit: not a per-host failure
    if args.json:
        print_json({"runs": rows})
    else:
        for row in rows:
            events = bench.run_events(row["run_id"]) if row["run_id"] is not None else []
            warnings = warning_messages(events)
            print(summary_text(row["host"], row["status"], row["results"], warnings, row["run_id"], row["error"]))
        for line in version_differences([(row["host"], row["results"]) for row in rows]):
            print(f"note: {line}")
        sys.stdout.flush()
    if all(row["status"] == RunStatus.DONE for row in rows):
        return Exit.OK
    return Exit.CANCELLED if any(row["status"] == RunStatus.CANCELLED for row in rows) else Exit.FAILED
