"""`benchbay run HOST [HOST...] --test T [--preset P]`: one test on several hosts at once, one worker per host.

Progress on stderr (app.cli.run_progress: the run's overall % and time left, one line per host per second
at most; above a few hosts app.cli.run_fleet_progress: one overall line every few seconds),
a readable summary per host on stdout (app.summary.text), or the runs and their results as JSON.
"""
from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from typing import Any

from app.catalogue import CATALOGUE
from app.cli.commands import command_help
from app.cli.common import UsageError, expand_hosts, print_json, setting_value
from app.cli.exits import Exit
from app.cli.monitor import (
    add_interval_option,
    ask_password,
    cancel_on_interrupt,
    check_interval,
    collect_lost_runs,
    run_workers,
)
from app.cli.run_dbload_multi import run_dbload_multi_command
from app.cli.run_fleet_progress import run_progress_for
from app.cli.run_repeats import group_line, repeat_on_hosts
from app.cli.run_shared import add_options as add_shared_options
from app.cli.run_shared import run_shared_command, uses_shared_options
from app.engine.orchestrator import RunControl, RunOutcome, RunRequest, RunRequestError, validate_request
from app.engine.repeats import (
    DEFAULT_MAX_REPEATS,
    DEFAULT_TARGET_RSE,
    MAX_REPEATS,
    MIN_REPEATS,
    UNTIL_STABLE,
    RepeatOutcome,
    RepeatPlanError,
    outcome_summary,
    parse_repeat,
)
from app.engine.run_files import FilesError, with_files
from app.summary.base import warning_messages
from app.summary.disk_cpu import version_differences
from app.summary.many_hosts import outcome_lines
from app.summary.text import summary_text
from app.workbench import Workbench
from storage.records import RunStatus

# every preset of any test; each test accepts only its own (the agent refuses a preset elsewhere)
PRESETS = tuple(dict.fromkeys(name for test in CATALOGUE.runnable() for name in test.preset_names))


def add_parser(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help=command_help("run"))
    run.add_argument("hosts", nargs="+", metavar="HOST", help="a host, or @TAG for every host with that tag")
    run.add_argument("--test", required=True, choices=CATALOGUE.names())
    with_presets = " and ".join(test.name for test in CATALOGUE.runnable() if test.has_presets)
    run.add_argument("--preset", choices=PRESETS, help=f"the test's preset (default: quick; {with_presets} only)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                     help="a test parameter (the value is read as JSON when it parses, else as text)")
    run.add_argument("--pg-password", "--db-password", action="store_true", dest="pg_password",
                     help="restore with a DSN, or dbload: ask for the database password (read from stdin when it "
                          "is not a terminal); it is sent to the agent over SSH, never written to disk or stored")
    add_interval_option(run)
    add_shared_options(run)
    run.add_argument("--repeat", default="1", metavar="N|until-stable",
                     help=f"run the test N times on each host (1-{MAX_REPEATS}), or '{UNTIL_STABLE}': again until "
                          "the relative standard error of the mean of its headline figure is below --rse, at least "
                          f"{MIN_REPEATS} and at most --max-repeats runs; the runs of a host form a group that "
                          "comparisons show as its median with its spread")
    run.add_argument("--max-repeats", type=int, default=DEFAULT_MAX_REPEATS, metavar="N",
                     help=f"with --repeat {UNTIL_STABLE}: the most runs per host (default {DEFAULT_MAX_REPEATS})")
    run.add_argument("--rse", type=float, default=DEFAULT_TARGET_RSE, metavar="PERCENT",
                     help=f"with --repeat {UNTIL_STABLE}: the relative standard error to reach, in %% of the mean "
                          f"(default {DEFAULT_TARGET_RSE:g})")
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


def _run(bench: Workbench, args: argparse.Namespace) -> int:
    check_interval(args.interval)
    try:
        plan = parse_repeat(args.repeat, args.max_repeats, args.rse)
    except RepeatPlanError as exc:
        raise UsageError(str(exc)) from None
    if not plan.until_stable and (args.max_repeats != DEFAULT_MAX_REPEATS or args.rse != DEFAULT_TARGET_RSE):
        raise UsageError(f"--max-repeats and --rse go with --repeat {UNTIL_STABLE}")
    args.hosts = expand_hosts(bench, args.hosts)   # @rack3: every host tagged rack3
    params = parse_settings(args.settings)
    if args.preset and not CATALOGUE.test(args.test).has_presets:   # before anything asks or connects
        raise UsageError(f"the {args.test} test has no presets")
    if args.test == "shared-storage":   # the hosts run together against one directory: its own engine
        if plan.repeats:
            raise UsageError("--repeat does not go with --test shared-storage (its sweep is the repetition)")
        return run_shared_command(bench, args, params)
    if uses_shared_options(args):
        raise UsageError("--dir, --clients and --threads go with --test shared-storage")
    if any(key in params for key in CATALOGUE.secret_params()):
        raise UsageError("a password does not go on the command line (ps shows it to everyone): use "
                         + ("--db-password" if args.test == "dbload" else "--pg-password"))
    if args.pg_password:
        params["password"] = _read_secret("Database password: " if args.test == "dbload" else "PostgreSQL password: ")
    if args.test == "dbload" and len(args.hosts) > 1:   # the hosts are clients of one target, started together
        if plan.repeats:
            raise UsageError("--repeat does not go with --test dbload on several hosts (its sweep is the repetition)")
        return run_dbload_multi_command(bench, args, params)
    if args.preset:
        if params.get("preset", args.preset) != args.preset:
            raise UsageError(f"--preset {args.preset} and --set preset={params['preset']} disagree")
        params["preset"] = args.preset
    try:   # a local query list is read once, here, and uploaded to every host
        template = with_files(RunRequest(host="", test=args.test, params=params, interval=args.interval))
        validate_request(template)
    except (RunRequestError, FilesError) as exc:
        raise UsageError(str(exc)) from None
    requests = [replace(template, host=host) for host in args.hosts]
    for host in args.hosts:
        bench.get_host(host)   # an unknown name is a usage error before anything starts
    passwords = {host: ask_password(bench, host) for host in args.hosts}
    collect_lost_runs(bench)
    control = RunControl()
    # overall % and time left per host, from the agent's plan: the same estimate as the window's
    # (above a few hosts, one overall line every few seconds instead of a line per host per second)
    progress = run_progress_for(len(requests), _expected_seconds(requests[0]))

    interrupted = cancel_on_interrupt(control, "the hosts clean up")

    if plan.repeats:
        hosts, outcomes, groups = repeat_on_hosts(requests, plan, control, progress, passwords, interrupted,
                                                  bench)
        return _summary(bench, args, outcomes, hosts, groups)

    def job(request: RunRequest) -> Callable[[], RunOutcome]:
        def work() -> RunOutcome:
            try:
                outcome = bench.run(request, control, None, progress.event, passwords[request.host])
            except Exception as exc:
                progress.host_ended(request.host, RunStatus.FAILED, str(exc))
                raise
            progress.host_ended(request.host, outcome.status, outcome.error or "")
            return outcome
        return work

    outcomes = run_workers([job(r) for r in requests], interrupted)
    return _summary(bench, args, outcomes)


def _expected_seconds(request: RunRequest) -> float | None:
    """The test's upper bound: the progress estimate's yardstick when the agent sends no plan."""
    try:
        return CATALOGUE.test(request.test).expected_seconds(request.params)
    except (KeyError, ValueError, TypeError):
        return None


def _summary(bench: Workbench, args: argparse.Namespace, outcomes: list[Any], hosts: list[str] | None = None,
             groups: Sequence[RepeatOutcome] = ()) -> int:
    """hosts: the host of each outcome (args.hosts when each ran once); groups: how each host's repeats went."""
    rows = run_rows(bench, args.hosts if hosts is None else hosts, outcomes)
    if args.json:
        print_json({"runs": rows, **({"repeats": [outcome_summary(g) for g in groups]} if groups else {})})
    else:
        print_run_rows(bench, rows)
        for line in map(group_line, groups):
            print(line)
        sys.stdout.flush()
    return exit_code(rows)


def run_rows(bench: Workbench, hosts: list[str], outcomes: list[Any]) -> list[dict[str, Any]]:
    """One row per run: id, host, status, error and results; an exception a host's job raised is its failure."""
    rows = []
    for host, outcome in zip(hosts, outcomes, strict=True):
        if isinstance(outcome, RunOutcome):
            detail = bench.find_run(outcome.run_id)
            results = [asdict(s) for s in detail.results] if detail else []
            rows.append({"run_id": outcome.run_id, "host": outcome.host, "status": outcome.status,
                         "error": outcome.error, "results": results})
            if detail is not None and detail.run.repeat_group:
                rows[-1].update(repeat_group=detail.run.repeat_group, repeat_index=detail.run.repeat_index)
        elif isinstance(outcome, Exception):
            rows.append({"run_id": None, "host": host, "status": RunStatus.FAILED, "error": str(outcome),
                         "results": []})
        else:
            raise outcome   # KeyboardInterrupt, SystemExit: not a per-host failure
    return rows


def print_run_rows(bench: Workbench, rows: list[dict[str, Any]]) -> None:
    for row in rows:
        events = bench.run_events(row["run_id"]) if row["run_id"] is not None else []
        warnings = warning_messages(events)
        print(summary_text(row["host"], row["status"], row["results"], warnings, row["run_id"], row["error"]))
    for line in version_differences([(row["host"], row["results"]) for row in rows]):
        print(f"note: {line}")
    last = {row["host"]: row for row in rows}   # a host's repeats end with their last run
    if len(last) > 1:   # the last lines say which hosts need a look, also with a hundred of them
        print("\n".join(outcome_lines(list(last.values()))))
    sys.stdout.flush()


def exit_code(rows: list[dict[str, Any]]) -> int:
    if all(row["status"] == RunStatus.DONE for row in rows):
        return Exit.OK
    return Exit.CANCELLED if any(row["status"] == RunStatus.CANCELLED for row in rows) else Exit.FAILED
