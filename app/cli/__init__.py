"""`benchbay` on the command line: the same operations as the window, for scripts and servers.

Exit codes (app.cli.exits): 0 done, 1 failed (one-line reason on stderr), 2 usage error, 130 cancelled.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from app.cli.commands import COMMANDS, command_named
from app.cli.common import EscapingStream, UsageError
from app.cli.exits import Exit
from app.engine.settings import DB_ENV, HOME_ENV
from app.errors import USER_ERRORS

if TYPE_CHECKING:
    from app.workbench import Workbench


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `commands`, only those commands get their options (the others their
    help line): a command's module, and the store or report code it imports, loads only when it runs."""
    parser = argparse.ArgumentParser(
        prog="benchbay",
        description="Benchmark servers over SSH: host inventory, facts, runs. Without a command, opens the window.",
    )
    parser.add_argument("--db", metavar="URL", help=f"store URL (SQLAlchemy); default ${DB_ENV} or SQLite "
                        "in the user data directory")
    parser.add_argument("--home", metavar="DIR", help=f"config directory (known_hosts, settings); default "
                        f"${HOME_ENV} or the user config directory")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    parser.add_argument("--version", action="version", version=f"benchbay {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("gui", help="open the window (the default)")
    wanted = {module for name, (module, _) in COMMANDS.items() if commands is None or name in commands}
    for name, (module, help_text) in COMMANDS.items():
        if module not in wanted:
            sub.add_parser(name, help=help_text)
        elif name == next(other for other, (owner, _) in COMMANDS.items() if owner == module):
            importlib.import_module(f"app.cli.{module}").add_parser(sub)   # all of the module's commands
    _one_line_errors(parser)
    return parser


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """A usage error is one line naming the help to read, not the whole usage text (still exit 2)."""
    def error(message: str) -> None:
        print(f"benchbay: {message} (see `{parser.prog} --help`)", file=sys.stderr)
        sys.exit(Exit.USAGE)

    if "error" not in vars(parser):    # a command may word its own
        parser.error = error  # type: ignore[method-assign]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _one_line_errors(child)


def main(argv: Sequence[str] | None = None) -> int:
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(stdout), EscapingStream(stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    named = command_named(words)
    parser = build_parser({named} if named else ())
    args = parser.parse_args(words)
    if args.command in COMMANDS and getattr(args, "handler", None) is None:   # the command word was misread
        parser = build_parser()
        args = parser.parse_args(words)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose:
        # paramiko logs a traceback for every failed handshake; the user gets our one-line reason instead
        logging.getLogger("paramiko").setLevel(logging.CRITICAL)
    try:
        if args.command in (None, "gui"):
            from app.gui.application import run_gui

            return run_gui(lambda: _open_workbench(args))
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.parse_args([args.command, "--help"])
            return Exit.USAGE
        bench = _open_workbench(args)
        if bench.read_only:
            print(f"benchbay: note: the store {bench.store_description()} is read-only ({bench.read_only}): runs "
                  "can be listed, shown, compared and exported; nothing can be saved", file=sys.stderr)
        try:
            return handler(bench, args)
        except KeyboardInterrupt:   # left at once (Ctrl-C twice): say what stays on the hosts and who collects it
            from app.cli.left_behind import say_left_behind

            say_left_behind(bench)
            raise
        finally:
            bench.close()
    except UsageError as exc:
        print(f"benchbay: {exc}", file=sys.stderr)
        return Exit.USAGE
    except USER_ERRORS as exc:
        print(f"benchbay: {exc}", file=sys.stderr)
        return Exit.FAILED
    except KeyboardInterrupt:
        print("benchbay: interrupted", file=sys.stderr)
        return Exit.CANCELLED
    except BrokenPipeError:
        return Exit.FAILED


def _open_workbench(args: argparse.Namespace) -> Workbench:
    from app.workbench import Workbench

    return Workbench(home=args.home, db_url=args.db)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("benchbay")
    except Exception:
        return "dev"


if __name__ == "__main__":
    sys.exit(main())
