"""`benchbay runs ...`: what has been run and stored."""
from __future__ import annotations

import argparse
from dataclasses import asdict

from app.cli_common import print_json, print_table
from app.facts_summary import facts_lines
from app.workbench import Workbench
from storage.errors import NotFound


def add_parser(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser("runs", help="list and show stored runs")
    cmds = runs.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    lst = cmds.add_parser("list", help="stored runs, newest first")
    lst.add_argument("--host")
    lst.add_argument("--test")
    lst.add_argument("--limit", type=int, default=None)
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(handler=_list)
    show = cmds.add_parser("show", help="one run: parameters, facts, results")
    show.add_argument("run_id", type=int, metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)


def _duration(run) -> str:
    if run.finished_at is None:
        return "-"
    seconds = (run.finished_at - run.started_at).total_seconds()
    return f"{seconds:.1f}s" if seconds < 120 else f"{seconds / 60:.1f}min"


def _list(bench: Workbench, args: argparse.Namespace) -> int:
    runs = bench.store.runs.list(host=args.host, test=args.test, limit=args.limit)
    if args.json:
        print_json([asdict(r) for r in runs])
        return 0
    rows = [[str(r.id), r.host_name, r.test, r.status, r.started_at.strftime("%Y-%m-%d %H:%M:%S"),
             _duration(r), r.error[:60]] for r in runs]
    print_table(["ID", "HOST", "TEST", "STATUS", "STARTED (UTC)", "TIME", "ERROR"], rows)
    return 0


def _show(bench: Workbench, args: argparse.Namespace) -> int:
    detail = bench.store.runs.get(args.run_id)
    if detail is None:
        raise NotFound(f"no run with id {args.run_id}: see `benchbay runs list`")
    if args.json:
        print_json({
            "run": asdict(detail.run),
            "facts": detail.facts,
            "results": [asdict(s) for s in detail.results],
            "series": [{"name": n, "device": d} for n, d in detail.series_names],
        })
        return 0
    run = detail.run
    print(f"run {run.id}: {run.test} on {run.host_name} — {run.status}")
    print(f"started {run.started_at.isoformat()}  finished {run.finished_at.isoformat() if run.finished_at else '-'}")
    print(f"agent {run.agent_version or '-'}  engine {run.engine or '-'} {run.engine_version or ''}".rstrip())
    if run.parameters:
        print("parameters: " + ", ".join(f"{k}={v}" for k, v in run.parameters.items()))
    if run.error:
        print(f"error: {run.error}")
    for s in detail.results:
        print(f"  {s.test:<12} {s.metric:<24} {s.value:>14.6g} {s.unit}")
    if detail.facts:
        print("facts:")
        for line in facts_lines(detail.facts):
            print("  " + line)
    return 0
