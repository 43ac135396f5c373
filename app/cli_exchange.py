"""`benchbay export` / `benchbay import`: whole runs as one JSON file, to move them between stores."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.atomic_file import write_text_atomically
from app.cli_common import UsageError
from app.workbench import Workbench
from remote.errors import BenchbayError
from storage.records import RunRecord
from storage.run_exchange import InvalidRunDocument, export_comparison, export_runs, import_runs

STDIO = "-"


def add_parser(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="write runs (facts, results, series, events) to a JSON file")
    export.add_argument("run_ids", type=int, nargs="*", metavar="RUN_ID")
    export.add_argument("--comparison", type=int, metavar="ID",
                        help="include this saved comparison (and all its runs)")
    export.add_argument("--out", required=True, metavar="FILE", help='the JSON file; "-" writes to stdout')
    export.set_defaults(handler=_export)
    imp = sub.add_parser("import", help="add the runs of an exported JSON file to the store")
    imp.add_argument("file", metavar="FILE", help='the JSON file; "-" reads stdin')
    imp.set_defaults(handler=_import)


def _describe(run: RunRecord) -> str:
    return f"{run.host_name} {run.test}, {run.started_at.strftime('%Y-%m-%d %H:%M')}"


def _export(bench: Workbench, args: argparse.Namespace) -> int:
    if not args.run_ids and args.comparison is None:
        raise UsageError("export: name at least one RUN_ID (see `benchbay runs list`) or --comparison ID")
    if args.run_ids:
        document = export_runs(bench.store, args.run_ids, args.comparison)
    else:
        document = export_comparison(bench.store, args.comparison)
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    count = len(document["runs"])
    if args.out == STDIO:
        sys.stdout.write(text)
        return 0
    path = Path(args.out).expanduser()
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        raise BenchbayError(f"cannot write {path}: {exc.strerror or exc}") from exc
    print(f"exported {count} run{'s' if count != 1 else ''} to {path}")
    return 0


def _read_document(name: str) -> Any:
    try:
        text = sys.stdin.read() if name == STDIO else Path(name).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise BenchbayError(f"cannot read {name}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise InvalidRunDocument(f"{name} is not a Benchbay run document (not UTF-8 text); nothing was imported") \
            from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRunDocument(
            f"{name} is not a Benchbay run document (not JSON: {exc.msg} at line {exc.lineno}); nothing was imported"
        ) from None


def _import(bench: Workbench, args: argparse.Namespace) -> int:
    report = import_runs(bench.store, _read_document(args.file))
    for _uid, run_id in report.imported:
        detail = bench.store.runs.get(run_id)
        print(f"imported run {run_id} ({_describe(detail.run)})" if detail else f"imported run {run_id}")
    for _uid, run_id in report.skipped:
        detail = bench.store.runs.get(run_id)
        what = f" ({_describe(detail.run)})" if detail else ""
        print(f"skipped run{what}: already stored as run {run_id}")
    if report.comparison_id is not None and not report.comparison_note:
        print(f"saved comparison {report.comparison_id} re-created")
    elif report.comparison_note:
        print(report.comparison_note)
    if not report.imported and not report.skipped:
        print("the file holds no runs")
    return 0
