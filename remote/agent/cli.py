"""Command line of the agent: `agent.pyz facts [--test-dir DIR] [--run-dir DIR]`,
`agent.pyz run --run-dir DIR` (a detached test run: see run_main).

Exit status: 0 with one JSON document on stdout; 2 for a bad command line; 1 for an unexpected
failure. Messages on stderr are one line, so the workbench can show them as they are.
"""
import argparse
import json
import os
import sys
from typing import List, Optional

from . import AGENT_VERSION
from .common import one_line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write("benchbay-agent: {}\n".format(one_line(message)))
        sys.exit(2)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: given before or after the command, the value is not reset by the other parser
    common.add_argument("--run-dir", default=argparse.SUPPRESS,
                        help="the private run directory the workbench created")
    parser = _Parser(prog="benchbay-agent", description="Benchbay agent " + AGENT_VERSION,
                     parents=[common])
    parser.add_argument("--version", action="version", version=AGENT_VERSION)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    facts = commands.add_parser("facts", parents=[common], help="print the host's facts as JSON")
    facts.add_argument("--test-dir", help="describe the filesystem of this directory")
    commands.add_parser("run", parents=[common], help="run RUN_DIR/spec.json, events to RUN_DIR/events.jsonl")
    return parser


def _facts(args: argparse.Namespace) -> int:
    from .facts import collect_facts

    # Without --test-dir, disk tests use a run directory like this one: describe where such
    # directories live (the run directory itself is gone once the facts are read).
    run_dir = getattr(args, "run_dir", None)
    default_dir = os.path.dirname(run_dir.rstrip("/")) if run_dir else None
    document = collect_facts(test_dir=args.test_dir or default_dir)
    sys.stdout.write(json.dumps(document, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.command:
        parser.error("a command is required (facts, run)")
    try:
        if args.command == "facts":
            return _facts(args)
        if args.command == "run":
            if not getattr(args, "run_dir", None):
                parser.error("run needs --run-dir")
            from .run_main import run

            return run(args.run_dir)
        parser.error("unknown command {!r}".format(args.command))
    except KeyboardInterrupt:
        sys.stderr.write("benchbay-agent: interrupted\n")
        return 1
    except Exception as exc:
        sys.stderr.write("benchbay-agent: {}: {}\n".format(type(exc).__name__, one_line(str(exc))))
        return 1
    return 1
