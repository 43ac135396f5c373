"""A run the workbench stops following but leaves to its host (RunControl.leave: the database server's monitor
beside a load whose link was lost again) is neither read further, nor stored, nor removed there: it stays
stored as running, to be collected with its load later."""
from __future__ import annotations

import pytest

from app.engine.orchestrator import LeftRunning, RunRequest, drive_run
from app.engine.run_control import RunControl
from remote.run_session import RunLeft, RunSession


class _Untouchable:
    """A transport the run must not use once it is left."""

    name = "db"

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def __getattr__(self, name: str):
        raise AssertionError(f"the host was asked after the run was left: {name}")


def test_a_left_session_reads_nothing_more_from_its_host() -> None:
    control = RunControl()
    control.leave()
    assert control.left and not control.stopped and not control.cancelled
    assert control.wait(5.0)                                # a worker waiting between polls wakes at once
    session = RunSession(_Untouchable(), "monitor", interval=1.0, control=control)
    with pytest.raises(RunLeft, match="left to its host"):
        session.run()


class _LeftSession:
    host = "db"
    samples: list = []

    def __init__(self) -> None:
        self.transport = _Untouchable()
        self.aborted = False

    def run(self) -> str:
        raise RunLeft("db: the run was left to its host, to be collected later")

    def abort(self) -> None:
        self.aborted = True

    def close(self) -> None:
        pass


def test_a_left_run_is_not_stored_and_says_how_to_collect_it(workbench) -> None:
    run_id = workbench.store.runs.create("db", "monitor", {"interval": 1.0, "duration": None, "params": {}})
    session = _LeftSession()
    with pytest.raises(LeftRunning, match=f"runs attach {run_id}"):
        drive_run(workbench, run_id, RunRequest("db", "monitor", {}, interval=1.0), session, RunControl(),
                  lambda: None, reattached=True)
    assert not session.aborted and session.transport.closed  # nothing removed on the host; the link closed
    assert workbench.store.runs.get(run_id).run.status == "running"
