"""The commands `benchbay` knows, the module that builds each one's options, and its one-line help.

Kept apart from the modules themselves so that `benchbay --help` and each command load only what they use:
a command's module (and the store, SSH and report code behind it) is imported when that command runs.
"""
from __future__ import annotations

# name -> (module under app.cli, help); in the order `benchbay --help` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "host": ("hosts", "add, list, trust and inspect hosts"),
    "runs": ("runs", "list and show stored runs"),
    "monitor": ("monitor", "live CPU, load and disk figures of a host (as iostat -x), stored as a run"),
    "run": ("run", "run a test on one or more hosts in parallel and store the runs"),
    "export": ("exchange", "write runs (facts, results, series, events) to a JSON file"),
    "import": ("exchange", "add the runs of an exported JSON file to the store"),
    "compare": ("compare", "compare stored runs: table, JSON, CSV, PDF report"),
}
GLOBAL_OPTIONS_WITH_VALUE = ("--db", "--home")


def command_help(name: str) -> str:
    return COMMANDS[name][1]


def command_named(argv: list[str]) -> str | None:
    """The command word of a command line (the first word that is no global option nor its value)."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in GLOBAL_OPTIONS_WITH_VALUE:
            skip = True
        elif word == "--":
            continue
        elif not word.startswith("-"):
            return word
    return None
