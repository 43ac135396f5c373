"""One summary of a test on many hosts: how many ended how, and every host that did not finish with its reason.

Printed after the per-host summaries, so that with a hundred hosts the last lines on the screen say
what needs a look, not the results of the last host.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

DONE = "done"
ORDER = ("done", "failed", "cancelled", "interrupted")   # how the counts are listed; other statuses follow


def outcome_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """rows: {"host", "status", "error", "run_id"} per host. A count line, then one line per host not done."""
    statuses = [_word(row["status"]) for row in rows]
    counts = Counter(statuses)
    order = [s for s in ORDER if s in counts] + sorted(s for s in counts if s not in ORDER)
    lines = [f"{len(rows)} hosts: " + ", ".join(f"{counts[s]} {s}" for s in order)]
    width = max((len(str(row["host"])) for row, s in zip(rows, statuses, strict=True) if s != DONE), default=0)
    for row, status in zip(rows, statuses, strict=True):
        if status == DONE:
            continue
        stored = f"run {row['run_id']}" if row.get("run_id") is not None else "not stored"
        reason = str(row.get("error") or "no reason given").strip().splitlines()
        lines.append(f"  {str(row['host']).ljust(width)}  {status} ({stored}): {reason[0] if reason else ''}")
    return lines


def _word(status: Any) -> str:
    """A status enum's value, or the text itself ("done", not "RunStatus.DONE")."""
    return str(getattr(status, "value", status))
