"""A shared-storage sweep from the window: run_shared in a worker, its clients' seconds drawn live.

The sweep runs in one worker (it starts one thread per client host itself, as the command line does).
Each client's per-second count arrives from a worker thread and crosses to the GUI thread through a
queued signal; the chart places it on the sweep's common time line (the step's offset + its second).
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from app.engine.orchestrator import RunControl
from app.engine.shared_run import TEST, SharedOutcome, SharedRequest, plan, run_shared
from app.gui.together_live import SweepControls
from app.gui.workers import Worker, WorkerPool
from app.workbench import Workbench
from remote.agent import benches
from widgets.shared_total_chart import SharedTotalChart


class SharedLive(QObject, SweepControls):
    """One sweep at a time; finished(SharedOutcome) or failed(exception) at its end."""

    tick = Signal(str, str, int, float)      # host, step, second, op/s (from worker threads)
    sample = Signal(str, object)             # host, TelemetrySample: each client's own telemetry
    event = Signal(str, object)              # host, agent event
    step = Signal(str)                       # the label of the step that began
    finished = Signal(object)                # SharedOutcome
    failed = Signal(object)                  # the exception: a wrong request, an unreachable host

    def __init__(self, workbench: Workbench, chart: SharedTotalChart, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bench = workbench
        self.chart = chart
        self.pool = WorkerPool(self, max_threads=1)
        self.control: RunControl | None = None
        self._offsets: dict[str, float] = {}
        queued = Qt.ConnectionType.QueuedConnection
        self.tick.connect(self._draw, queued)
        self.step.connect(self.chart.set_step, queued)

    @property
    def running(self) -> bool:
        return self.pool.active_count() > 0

    def start(self, request: SharedRequest) -> None:
        """Check the request (raises RunRequestError at once when it is wrong) and start the sweep."""
        if self.running:
            raise RuntimeError("a shared-storage sweep is already running")
        params = plan(request, "check")[0]
        self._offsets = {s["name"]: float(s["offset"]) for s in benches.load(TEST).steps(params)}
        self.chart.clear()
        self.control = RunControl()
        worker = Worker(run_shared, self._bench, request, self.control, self._event, self._tick, None,
                        self.sample.emit)
        worker.finished.connect(self._finished)
        worker.failed.connect(self.failed.emit)
        self.pool.start(worker, key="shared-storage")

    # -- from the worker threads -----------------------------------------------------------------

    def _tick(self, host: str, step: str, second: int, ops: float, _mbps: float) -> None:
        self.tick.emit(host, step, second, ops)

    def _event(self, host: str, event: dict[str, Any]) -> None:
        self.event.emit(host, event)
        if event.get("type") == "phase_start" and event.get("phase") in self._offsets:
            self.step.emit(str(event.get("label") or event.get("phase")))

    # -- in the GUI thread -----------------------------------------------------------------------

    def _draw(self, host: str, step: str, second: int, ops: float) -> None:
        if step in self._offsets:
            self.chart.add_tick(host, self._offsets[step] + second + 1.0, ops)

    def _finished(self, outcome: SharedOutcome) -> None:
        self.chart.redraw()
        self.finished.emit(outcome)
