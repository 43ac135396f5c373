"""`benchbay runs ...`: what has been run and stored."""
from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from datetime import datetime, timezone

from app.cli.commands import command_help
from app.cli.common import UsageError, expand_hosts, positive_count, print_json, print_table, stored_id
from app.cli.exits import Exit
from app.summary.dns import dns_text
from app.summary.facts import facts_lines
from app.summary.spread_text import SD_LEGEND, result_line, spread_of_result
from app.workbench import Workbench
from storage.records import RunRecord, RunStatus


def add_parser(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser("runs", help=command_help("runs"))
    cmds = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    lst = cmds.add_parser("list", help="stored runs, newest first")
    lst.add_argument("--host", action="append", default=[], metavar="NAME",
                     help="runs of this host, or of every host with a tag (@TAG); repeatable")
    lst.add_argument("--test")
    lst.add_argument("--tag")
    lst.add_argument("--since", metavar="DATE", help="started on or after (YYYY-MM-DD or ISO time; UTC if no zone)")
    lst.add_argument("--until", metavar="DATE", help="started before (YYYY-MM-DD or ISO time; UTC if no zone)")
    lst.add_argument("--limit", type=positive_count, default=None, metavar="N", help="at most N runs")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(handler=_list)
    show = cmds.add_parser("show", help="one run: parameters, facts, results")
    show.add_argument("run_id", type=stored_id, metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)
    note = cmds.add_parser("note", help="set a run's notes (\"\" clears them)")
    note.add_argument("run_id", type=stored_id, metavar="ID")
    note.add_argument("text", metavar="TEXT")
    note.set_defaults(handler=_note)
    tag = cmds.add_parser("tag", help="add tags to a run (or remove them with --remove)")
    tag.add_argument("run_id", type=stored_id, metavar="ID")
    tag.add_argument("tags", nargs="+", metavar="TAG")
    tag.add_argument("--remove", action="store_true", help="remove the tags given instead")
    tag.set_defaults(handler=_tag)
    attach = cmds.add_parser("attach", help="re-attach to a run whose Benchbay went away (killed, crashed) and "
                             "store it when it ends")
    attach.add_argument("run_id", type=stored_id, metavar="ID")
    attach.add_argument("--force", action="store_true",
                        help="also when the run was started from another computer (whose Benchbay must be gone)")
    attach.set_defaults(handler=_attach)


def _when(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{option} {text!r}: expected YYYY-MM-DD or an ISO 8601 time") from None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=timezone.utc)


def _duration(run: RunRecord) -> str:
    if run.finished_at is None:
        return "-"
    seconds = (run.finished_at - run.started_at).total_seconds()
    return f"{seconds:.1f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


def _list(bench: Workbench, args: argparse.Namespace) -> int:
    since, until = _when(args.since, "--since"), _when(args.until, "--until")
    hosts = expand_hosts(bench, args.host) if args.host else [None]
    runs = [run for host in hosts
            for run in bench.list_runs(host=host, test=args.test, limit=args.limit, tag=args.tag, since=since,
                                       until=until)]
    if len(hosts) > 1:   # newest first across the hosts, as for one
        runs = sorted(runs, key=lambda r: (r.started_at, r.id), reverse=True)[:args.limit]
    if args.json:
        print_json([asdict(r) for r in runs])
        return Exit.OK
    rows = [[str(r.id), r.host_name, r.test, r.status, r.started_at.strftime("%Y-%m-%d %H:%M:%S"),
             _duration(r), r.error[:60]] for r in runs]
    print_table(["ID", "HOST", "TEST", "STATUS", "STARTED (UTC)", "TIME", "ERROR"], rows)
    return Exit.OK


def _show(bench: Workbench, args: argparse.Namespace) -> int:
    detail = bench.run_detail(args.run_id)
    if args.json:
        print_json({
            "run": asdict(detail.run),
            "facts": detail.facts,
            "results": [asdict(s) for s in detail.results],
            "series": [{"name": n, "device": d} for n, d in detail.series_names],
        })
        return Exit.OK
    run = detail.run
    print(f"run {run.id}: {run.test} on {run.host_name} — {run.status}")
    print(f"started {run.started_at.isoformat()}  finished {run.finished_at.isoformat() if run.finished_at else '-'}")
    print(f"agent {run.agent_version or '-'}  engine {run.engine or '-'} {run.engine_version or ''}".rstrip())
    if run.tags:
        print("tags: " + ", ".join(run.tags))
    if run.notes:
        print(f"notes: {run.notes}")
    if run.parameters:
        print("parameters: " + ", ".join(f"{k}={v}" for k, v in run.parameters.items()))
    if run.error:
        print(f"error: {run.error}")
    shown = dns_text(detail.results, indent="")   # a dns run's figures are per resolver and pass: its table
    for line in shown:
        print(line)
    for s in ([] if shown else detail.results):
        print(result_line(s))   # with "±x % (min–max ...)" when the figure has a spread
    if any(spread_of_result(s) is not None for s in detail.results):
        print(SD_LEGEND)
    if detail.facts:
        print("facts:")
        for line in facts_lines(detail.facts):
            print("  " + line)
    return Exit.OK


def _note(bench: Workbench, args: argparse.Namespace) -> int:
    bench.set_run_notes(args.run_id, args.text)
    print(f"run {args.run_id}: notes {'set' if args.text else 'cleared'}")
    return Exit.OK


def _tag(bench: Workbench, args: argparse.Namespace) -> int:
    detail = bench.run_detail(args.run_id)
    given = [t.strip() for t in args.tags]
    tags = [t for t in detail.run.tags if t not in given] if args.remove else [*detail.run.tags, *given]
    stored = bench.set_run_tags(args.run_id, tags)
    print(f"run {args.run_id}: tags {', '.join(stored) if stored else '(none)'}")
    return Exit.OK


def _attach(bench: Workbench, args: argparse.Namespace) -> int:
    from app.cli.monitor import ask_password, cancel_on_interrupt, run_workers
    from app.engine.orchestrator import RunControl

    detail = bench.run_detail(args.run_id)
    password = ask_password(bench, detail.run.host_name)
    control = RunControl()

    interrupted = cancel_on_interrupt(control, "the host cleans up")

    print(f"benchbay: re-attaching to run {args.run_id} on {detail.run.host_name} ...", file=sys.stderr, flush=True)
    [outcome] = run_workers([lambda: bench.attach(args.run_id, follow=True, force=args.force,
                                                  control=control, password=password)], interrupted)
    if isinstance(outcome, BaseException):
        raise outcome
    print(f"benchbay: {outcome.message}", file=sys.stderr, flush=True)
    if outcome.status == RunStatus.DONE:
        return Exit.OK
    return Exit.CANCELLED if outcome.status == RunStatus.CANCELLED else Exit.FAILED
