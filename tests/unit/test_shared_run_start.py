"""The start of a shared-storage sweep with a client that fails before it is ready: the others are stopped,
the reason names the client, and no step runs with fewer clients than it says (a stand-in workbench)."""
from __future__ import annotations

import time

from app.engine.orchestrator import RunControl
from app.engine.shared_run import SharedRequest, run_shared
from remote.errors import RemoteCommandError
from remote.local_transport import LocalTransport


class _Host:
    def __init__(self, name: str) -> None:
        self.name = name


class _Bench:
    """Two clients: "good" gets ready and then waits for its start; "bad" fails while it prepares."""

    def __init__(self) -> None:
        self.cancelled_seen = False

    def get_host(self, name: str) -> _Host:
        return _Host(name)

    def connect(self, name: str, _password=None) -> LocalTransport:
        return LocalTransport(name=name)

    def run(self, request, control: RunControl, _on_sample, on_event, _password):
        if request.host == "bad":
            time.sleep(0.2)
            raise RemoteCommandError("bad: shared-storage: test_dir /mnt/shared is not a directory on this host")
        on_event(request.host, {"type": "shared_ready", "run_dir": "/nonexistent"})
        deadline = time.monotonic() + 10
        while not control.cancelled and time.monotonic() < deadline:
            time.sleep(0.02)
        self.cancelled_seen = control.cancelled
        raise RemoteCommandError("good: cancelled")


def test_a_client_failing_before_it_is_ready_stops_the_others() -> None:
    bench = _Bench()
    outcome = run_shared(bench, SharedRequest(("good", "bad"), {"test_dir": "/mnt/shared", "clients": [1, 2],
                                                               "threads": [1]}))
    assert bench.cancelled_seen
    assert outcome.error == "bad ended before it was ready to start: the other clients were stopped too, no step ran"
    assert outcome.steps == [] and outcome.knee is None and outcome.total_run_id is None
    assert set(outcome.offsets) == {"good", "bad"}
