"""A shared-storage sweep as text: the clocks, each step's total with its clients and start spread, the knee."""
from __future__ import annotations

import time

from app.engine.shared_run import SharedOutcome
from app.engine.shared_totals import client_bound, client_limit_text
from app.summary.together import client_lines

LATE_NOTE_S = 0.05   # seconds: a client later than this after the planned start is named


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def shared_text(result: SharedOutcome) -> str:
    count = len(result.hosts)
    lines = [f"shared storage, {count} client host{'s' if count != 1 else ''} (runs tagged shared-{result.group})"]
    lines += client_lines(result)
    if result.started is not None:
        count = result.planned_steps
        lines.append(f"  sweep: started {time.strftime('%Y-%m-%d %H:%M:%S %Z', time.localtime(result.started))}, "
                     f"{count} step{'s' if count != 1 else ''} of {result.step_seconds:g} s, {result.gap:g} s apart: "
                     f"{result.seconds:g} s in all")
    if result.steps:
        lines.append("  step                      total op/s   total MB/s   start spread        per client op/s")
    for step in result.steps:
        shape = f"{step.clients} client{'s' if step.clients != 1 else ''} x {step.threads} thread" \
                f"{'s' if step.threads != 1 else ''}"
        spread = (f"{_ms(step.start_spread)} ± {_ms(step.spread_uncertainty)}" if step.start_spread is not None
                  else "not reported")
        clients = ", ".join(f"{h} {sum(v) / len(v) if v else 0:.0f}" for h, v in sorted(step.per_client_ops.items()))
        lines.append(f"  {shape:<24}  {step.ops:>10.1f}   {step.mbps:>10.3f}   {spread:<18}  {clients}")
        if step.late is not None and step.late > LATE_NOTE_S:   # its first seconds read low
            lines.append(f"    note: a client began {_ms(step.late)} after the planned start")
        if client_bound(step):
            lines.append(f"    note: {client_limit_text(step)}: this step's total may be the client's limit, "
                         "not the storage's")
    if result.knee is not None:
        lines.append(f"  {result.knee.text}")
    if result.total_run_id is not None:
        lines.append(f"  totals stored as run {result.total_run_id}")
    if result.error:
        lines.append(f"  error: {result.error}")
    return "\n".join(lines)
