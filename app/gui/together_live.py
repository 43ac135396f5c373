"""What the live controllers of a sweep from several client hosts share: one sweep at a time in their pool,
cancelled through its RunControl, waited for at shutdown (app.gui.shared_live, app.gui.dbload_multi_live)."""
from __future__ import annotations

from app.engine.orchestrator import RunControl
from app.gui.workers import WorkerPool


class SweepControls:
    """cancel() and shutdown() of a controller whose sweep runs in self.pool under self.control."""

    pool: WorkerPool
    control: RunControl | None = None

    def cancel(self) -> None:
        if self.control is not None:
            self.control.cancel()

    def shutdown(self, timeout_ms: int = 15_000) -> bool:
        """Cancel the sweep and wait up to timeout_ms for its worker; True when it ended."""
        self.cancel()
        return self.pool.wait(timeout_ms)
