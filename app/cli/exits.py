"""The command line's exit codes, in one place (scripts test them)."""
from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILED = 1        # one-line reason on stderr
    USAGE = 2         # a wrong command line
    CANCELLED = 130   # Ctrl-C, as a shell reports a process ended by SIGINT
