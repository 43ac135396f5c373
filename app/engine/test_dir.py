"""Which directory a test that writes files uses: the run's own test_dir, else the host's (host add/edit
--test-dir, the host editor's test directory), else the run directory; and the event that says so."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from remote.hostspec import HostSpec

# its directory must be the same shared one on every client: the run names it, never a host's default
SHARED_ONLY = ("shared-storage",)
FROM_RUN, FROM_HOST, FROM_RUN_DIR = "set for this run", "the host's test directory", "the run directory"


@dataclass(frozen=True)
class TestDirChoice:
    directory: str    # "" = the run directory (known once the run has started)
    source: str       # FROM_RUN, FROM_HOST or FROM_RUN_DIR

    def event(self, run_dir: str) -> dict[str, Any]:
        """The fields of the run's "test_dir" event: where the files went and why there."""
        return {"directory": self.directory or run_dir, "source": self.source}


def choose_test_dir(test: str, asked: Mapping[str, Any], validated: Mapping[str, Any],
                    spec: HostSpec) -> TestDirChoice | None:
    """None for a test that takes no test directory (cpu, idle, a monitor) or one that must be given it."""
    if "test_dir" not in validated or test in SHARED_ONLY:
        return None
    given = str(asked.get("test_dir") or "")
    if given:
        return TestDirChoice(given, FROM_RUN)
    if spec.test_dir:
        return TestDirChoice(spec.test_dir, FROM_HOST)
    return TestDirChoice("", FROM_RUN_DIR)

