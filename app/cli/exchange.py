"""`benchbay export` / `benchbay import`: whole runs as one JSON file, to move them between stores."""
from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from app.cli.commands import command_help
from app.cli.common import UsageError, stored_id
from app.cli.exits import Exit
from app.errors import AppError
from app.util.atomic_file import atomic_text
from app.workbench import Workbench
from storage.records import RunRecord
from storage.run_exchange import ImportReport

STDIO = "-"


def add_parser(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help=command_help("export"))
    export.add_argument("run_ids", type=stored_id, nargs="*", metavar="RUN_ID")
    export.add_argument("--comparison", type=stored_id, metavar="ID",
                        help="include this saved comparison (and all its runs)")
    export.add_argument("--out", required=True, metavar="FILE", help='the JSON file; "-" writes to stdout')
    export.set_defaults(handler=_export)
    imp = sub.add_parser("import", help=command_help("import"))
    imp.add_argument("file", metavar="FILE", help='the JSON file; "-" reads stdin')
    imp.set_defaults(handler=_import)


def _describe(run: RunRecord) -> str:
    return f"{run.host_name} {run.test}, {run.started_at.strftime('%Y-%m-%d %H:%M')}"


def _export(bench: Workbench, args: argparse.Namespace) -> int:
    if not args.run_ids and args.comparison is None:
        raise UsageError("export: name at least one RUN_ID (see `benchbay runs list`) or --comparison ID")
    run_ids = args.run_ids or bench.comparison_run_ids(args.comparison)
    if args.out == STDIO:
        bench.export_runs(run_ids, sys.stdout, args.comparison)
        return Exit.OK
    path = Path(args.out).expanduser()
    try:
        with atomic_text(path) as out:
            count = bench.export_runs(run_ids, out, args.comparison)
    except OSError as exc:
        raise AppError(f"cannot write {path}: {exc.strerror or exc}") from exc
    print(f"exported {count} run{'s' if count != 1 else ''} to {path}")
    return Exit.OK


def _read(bench: Workbench, name: str) -> ImportReport:
    if name == STDIO:
        raw = getattr(sys.stdin, "buffer", None)   # an export is UTF-8 whatever the locale says
        stream = io.TextIOWrapper(raw, encoding="utf-8") if raw is not None else sys.stdin
        return bench.import_runs(stream, "stdin")
    path = Path(name).expanduser()
    if path.is_dir():
        raise AppError(f"cannot read {name}: it is a directory; name an exported JSON file")
    try:
        with open(path, encoding="utf-8") as handle:
            return bench.import_runs(handle, name)
    except OSError as exc:
        raise AppError(f"cannot read {name}: {exc.strerror or exc}") from exc


def _import(bench: Workbench, args: argparse.Namespace) -> int:
    report = _read(bench, args.file)
    for _uid, run_id in report.imported:
        detail = bench.find_run(run_id)
        print(f"imported run {run_id} ({_describe(detail.run)})" if detail else f"imported run {run_id}")
    for _uid, run_id in report.skipped:
        detail = bench.find_run(run_id)
        what = f" ({_describe(detail.run)})" if detail else ""
        print(f"skipped run{what}: already stored as run {run_id}")
    for uid, run_id in report.differing:
        print(f"not imported: run {uid} in the file differs from run {run_id}, stored with the same uid; the "
              f"stored run was kept (see `benchbay runs show {run_id}`; the file's copy cannot be stored beside it)")
    if report.comparison_id is not None and not report.comparison_note:
        print(f"saved comparison {report.comparison_id} re-created")
    elif report.comparison_note:
        print(report.comparison_note)
    if not report.imported and not report.skipped and not report.differing:
        print("the file holds no runs")
    return Exit.OK
