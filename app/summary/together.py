"""What every sweep from several client hosts says of each client first: its clock and how its run ended."""
from __future__ import annotations

from app.engine.clients_together import TogetherOutcome
from app.engine.orchestrator import RunOutcome


def client_lines(result: TogetherOutcome) -> list[str]:
    """ "  c1: clock +0.3 ms ± 0.1 ms; run 12 done" per client host, in the order they were named."""
    lines = []
    for host, outcome in zip(result.hosts, result.outcomes, strict=True):
        clock = result.offsets.get(host)
        where = (f"clock {clock.offset * 1e3:+.1f} ms ± {clock.uncertainty * 1e3:.1f} ms" if clock
                 else "clock not measured")
        if isinstance(outcome, RunOutcome):
            state = f"run {outcome.run_id} {outcome.status}" + (f": {outcome.error}" if outcome.error else "")
        else:
            state = f"failed (not stored): {outcome}"
        lines.append(f"  {host}: {where}; {state}")
    return lines
