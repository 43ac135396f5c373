"""At start-up, the window re-attaches to runs whose Benchbay went away (app.engine.attach), in workers;
while it is open, it looks again every half minute for runs stored as "lost link" (their host stopped
answering for longer than the reconnect budget while the run went on there) and collects each once its
host answers.

Each such run is followed to its end and stored; the status bar says what happened, the Runs list is
reloaded. Closing the window cancels what is still followed, as it cancels the tests it started.
"""
from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer, Signal

from app.engine.attach import NOT_ATTACHED, AttachOutcome
from app.engine.lock import RunBusy
from app.engine.orchestrator import RunControl
from app.errors import USER_ERRORS
from app.gui.workers import Worker, WorkerPool
from app.workbench import Workbench
from storage.records import RunStatus

LOST_LINK_EVERY_MS = 30_000   # how often the open window looks for lost-link runs to collect

log = logging.getLogger(__name__)


def _attach_one(bench: Workbench, run_id: int, host: str, control: RunControl,
                lost_link: bool = False) -> AttachOutcome | None:
    """One run, in a worker; None when a live workbench drives it (not ours to take)."""
    lost = "lost its link" if lost_link else "lost its workbench"
    again = ("it is tried again every half minute while the window is open, and at the next start, before its "
             "deadline") if lost_link else "it is tried again at the next start, before its deadline"
    try:
        if bench.needs_password(host):
            return AttachOutcome(run_id, host, NOT_ATTACHED, f"run {run_id} on {host} {lost}; its "
                                 f"host needs a password: `benchbay runs attach {run_id}` asks for it")
        return bench.attach(run_id, follow=True, control=control)
    except RunBusy:
        return None
    except USER_ERRORS as exc:
        return AttachOutcome(run_id, host, NOT_ATTACHED, f"run {run_id} on {host} {lost} and could not "
                             f"be re-attached ({exc}); {again}")


class RunReattacher(QObject):
    message = Signal(str)     # one line for the status bar
    stored = Signal(object)   # AttachOutcome: the Runs list changed

    def __init__(self, workbench: Workbench, parent: QObject | None = None,
                 scan_pool: WorkerPool | None = None) -> None:
        super().__init__(parent)
        self._bench = workbench
        self.pool = WorkerPool(self)             # the runs followed, for as long as each takes
        self._scan_pool = scan_pool or self.pool  # the short look at the store: the window's own jobs
        self._controls: list[RunControl] = []
        self._following: set[int] = set()
        self._closing = False
        self.timer = QTimer(self)
        self.timer.setInterval(LOST_LINK_EVERY_MS)
        self.timer.timeout.connect(self.look_for_lost_links)

    def start(self) -> None:
        """Look for runs to take over (in a worker), then follow each in its own; later, lost-link runs."""
        worker = Worker(self._bench.orphan_candidates)
        worker.finished.connect(self._launch)
        worker.failed.connect(lambda exc: log.warning("looking for runs to re-attach failed: %s", exc))
        self._scan_pool.start(worker, key="reattach-scan")
        self.timer.start()

    def look_for_lost_links(self) -> None:
        """Only lost-link runs: a run stored as running may be one this window drives itself."""
        if self._closing:
            return

        def lost_links() -> list:
            return [run for run in self._bench.orphan_candidates() if run.status == RunStatus.LOST_LINK]

        worker = Worker(lost_links)
        worker.finished.connect(lambda runs: self._launch(runs, quiet=True))
        worker.failed.connect(lambda exc: log.info("looking for lost-link runs failed: %s", exc))
        self._scan_pool.start(worker, key="reattach-lost-links")

    def _launch(self, runs: list, quiet: bool = False) -> None:
        runs = [run for run in runs if run.id not in self._following]
        if self._closing or not runs:
            return
        if not quiet:
            self.message.emit(f"Looking again at {len(runs)} run{'s' if len(runs) != 1 else ''} still stored as "
                              "running or lost link…")
        for run in runs:
            control = RunControl()
            self._controls.append(control)
            self._following.add(run.id)
            worker = Worker(_attach_one, self._bench, run.id, run.host_name, control,
                            run.status == RunStatus.LOST_LINK)
            worker.finished.connect(lambda outcome, run_id=run.id: self._done(run_id, outcome, quiet))
            worker.failed.connect(lambda exc, run_id=run.id: self._failed(run_id, exc))
            self.pool.start(worker, key=f"reattach-{run.id}")

    def _failed(self, run_id: int, exc: BaseException) -> None:
        self._following.discard(run_id)
        self.message.emit(f"run {run_id}: re-attach failed: {exc}")

    def _done(self, run_id: int, outcome: AttachOutcome | None, quiet: bool = False) -> None:
        self._following.discard(run_id)   # tried again at the next look when it is still lost link
        if outcome is None or self._closing:
            return
        if quiet and outcome.status in (NOT_ATTACHED, RunStatus.LOST_LINK):
            return   # the host still does not answer: said once already, when the link was given up
        self.message.emit(outcome.message)
        self.stored.emit(outcome)

    def shutdown(self, timeout_ms: int) -> bool:
        """The window closes: cancel what is followed (stored as cancelled, host cleaned) and wait."""
        self._closing = True
        self.timer.stop()
        for control in self._controls:
            control.cancel()
        finished = self.pool.wait(timeout_ms)
        self.pool.cancel_all()
        return finished
