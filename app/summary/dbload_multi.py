"""A database load from several client hosts as text: the clocks, each step's total, shares and start spread,
the knee of the totals."""
from __future__ import annotations

from app.engine.dbload_multi import DbMultiOutcome, client_limit
from app.engine.dbload_watch import WatchResult
from app.summary.together import client_lines


def dbload_multi_text(result: DbMultiOutcome) -> str:
    count = len(result.hosts)
    lines = [f"dbload from {count} client hosts against one target (runs tagged dbload-{result.group})"]
    lines += client_lines(result)
    total = result.total
    if total is not None and total.steps:
        lines.append("  step                  total ops/s   start spread   per client")
        for step in total.steps:
            spread = result.spreads.get(step.step)
            shown = f"{spread * 1e3:.1f} ms" if spread is not None else "not reported"
            label = f"{step.clients} connections"
            lines.append(f"  {step.step}: {label:<18} {step.ops:>11.1f}   {shown:<13}  {step.shares_text()}")
            limit = client_limit(result, step.step)
            if limit:
                lines.append(f"    note: {limit}: this step's total may be the client's limit, not the server's")
        lines.append(f"  {total.knee_text()}")
    if result.target is not None:
        lines.append(f"  {_target_line(result.target)}")
    if result.total_run_id is not None:
        lines.append(f"  totals stored as run {result.total_run_id}")
    if result.error:
        lines.append(f"  error: {result.error}")
    return "\n".join(lines)


def _target_line(watch: WatchResult) -> str:
    if watch.run_id is not None and not watch.error:
        return (f"the database server {watch.host}'s own telemetry (iostat, CPU, load, steal): run {watch.run_id}; "
                "its figures per step are in each run (benchbay runs show)")
    return f"the database server {watch.host}'s telemetry was not recorded: {watch.error}"
