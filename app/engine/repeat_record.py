"""What repeating a test leaves in the store beyond its runs: an "until stable" that ended at its cap unsettled.

The last run of such a group gets an event of type UNTIL_STABLE_EVENT, so the comparison, the CSV and the
report can flag the figure, not only `run`'s own output.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

UNTIL_STABLE_EVENT = "until_stable_unsettled"


def unsettled_event(runs: int, rse_percent: float | None, target_percent: float, judged: str) -> dict[str, Any]:
    return {"seq": None, "t": 0.0, "type": UNTIL_STABLE_EVENT, "runs": runs, "rse_percent": rse_percent,
            "target_percent": target_percent, "judged": judged}


def until_stable_missed(events: Iterable[Mapping[str, Any]]) -> str:
    """ "until stable: RSE 18 % after 10 runs, target 2 %" from a run's events; "" when it has none."""
    for event in events:
        if event.get("type") != UNTIL_STABLE_EVENT:
            continue
        rse = event.get("rse_percent")
        shown = f"{float(rse):.2g} %" if isinstance(rse, (int, float)) else "unknown"
        return (f"until stable: not reached, RSE {shown} after {event.get('runs', '?')} runs, "
                f"target {float(event.get('target_percent') or 0):g} %")
    return ""
