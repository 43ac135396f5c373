"""The stored total of a shared-storage sweep is dated by the sweep: its start and the end of its last step."""
from __future__ import annotations

from datetime import datetime, timezone

from tests.fixtures.shared_sweeps import START, store_sweep


def test_the_total_runs_from_the_first_step_to_the_end_of_the_last(workbench) -> None:
    outcome = store_sweep(workbench, "/mnt/efs", 900.0)
    total = workbench.find_run(outcome.total_run_id)
    assert total.run.host_name == "TOTAL /mnt/efs (2 clients)" and total.run.status == "done"
    assert total.run.started_at == datetime.fromtimestamp(START, timezone.utc)
    # 8 steps of 10 s, 2 s apart: the last one ends 7 x 12 + 10 s after the first began
    assert (total.run.finished_at - total.run.started_at).total_seconds() == 94.0
    best = next(r for r in total.results if r.metric == "sweep.best_ops")
    assert best.metadata["flags"] == ["O_WRONLY|O_DIRECT|O_SYNC"] and best.metadata["knee"] == "c2t8"
    assert [r.value for r in total.results if r.metric == "c2t8.ops"] == [900.0]
