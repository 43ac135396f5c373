"""After a killed workbench, a load run finds its database server's monitor by the monitor's own tag (the
clients it watched, the several-client group): the right one of several, the monitor waits for its load runs
before it is collected, and the tie is made once."""
from __future__ import annotations

from app.engine.dbload_reattach import loads_of, monitor_of, tie, waits_for_its_load
from storage.records import RunStatus


def _load(store, host: str, group: str = "solo", together: bool = False) -> int:
    params = {"engine": "postgresql", "target": "10.0.0.5:5432", "group": group, "wait_for_start": together}
    return store.runs.create(host, "dbload", {"interval": 1.0, "params": params}, agent_version="0.4.1")


def _monitor(store, host: str, params: dict) -> int:
    return store.runs.create(host, "monitor", {"interval": 1.0, "duration": None, "params": params},
                             agent_version="0.4.1")


def _run(store, run_id: int):
    return store.runs.get(run_id).run


def test_each_load_finds_its_own_servers_monitor_and_the_monitor_waits_for_them(workbench) -> None:
    store = workbench.store
    unrelated = _monitor(store, "db", {})
    one = _monitor(store, "db", {"watching": "dbload", "clients": ["c1"], "group": ""})
    solo = _load(store, "c1")
    both = _monitor(store, "db", {"watching": "dbload", "clients": ["c1", "c2"], "group": "g7"})
    members = [_load(store, "c1", "g7", True), _load(store, "c2", "g7", True)]
    assert monitor_of(workbench, _run(store, solo)).id == one
    assert [monitor_of(workbench, _run(store, m)).id for m in members] == [both, both]
    assert sorted(r.id for r in loads_of(workbench, _run(store, both))) == members
    assert loads_of(workbench, _run(store, unrelated)) == []
    running = {run.id: run for run in store.runs.running()}
    assert waits_for_its_load(workbench, running[both]) and not waits_for_its_load(workbench, running[unrelated])
    for run_id in members:
        store.runs.finish(run_id, RunStatus.DONE)
    assert tie(workbench, both) == []            # the monitor is not collected yet: nothing to tie
    store.runs.finish(both, RunStatus.DONE)
    assert not waits_for_its_load(workbench, _run(store, both))
    assert tie(workbench, both) == members
    assert tie(workbench, both) == []            # tied once
    for run_id in members:
        [event] = [e for e in workbench.run_events(run_id) if e["type"] == "target_telemetry"]
        assert (event["host"], event["run_id"]) == ("db", both)
    assert all(e["type"] != "target_telemetry" for e in workbench.run_events(solo))


def test_a_load_whose_host_does_not_answer_leaves_its_servers_monitor_running(workbench) -> None:
    """The server's monitor is followed only once the load run's host answers: were it collected while the
    load run cannot be reached, it would end before the load it watches does."""
    from app.engine.dbload_reattach import ServerAlongside

    store = workbench.store
    monitor = _monitor(store, "db", {"watching": "dbload", "clients": ["c1"], "group": ""})
    load = _load(store, "c1")
    attached: list[tuple[int, bool]] = []
    controls = []

    def attach(run_id, control, keep_open):
        attached.append((run_id, keep_open))
        controls.append(control)

    unreachable = ServerAlongside(workbench, _run(store, load), True, attach)
    unreachable.done(False)                      # the load's host did not answer: nothing collected
    assert attached == [] and _run(store, monitor).status == "running"
    lost_again = ServerAlongside(workbench, _run(store, load), True, attach)
    lost_again.connected()
    lost_again.done(False)                       # answered, then its link was lost again: the load goes on
    assert attached == [(monitor, True)]
    # the monitor was followed and is left running beside the load, not stopped (which would collect it now)
    assert controls[0].left and not controls[0].stopped and not controls[0].cancelled
    assert _run(store, monitor).status == "running" and all(
        e["type"] != "target_telemetry" for e in workbench.run_events(load))
    stored = ServerAlongside(workbench, _run(store, load), True, attach)
    stored.connected()
    stored.done(True)                            # the load is stored: the monitor is collected now
    assert controls[1].stopped and not controls[1].left


def test_leaving_at_once_names_the_servers_monitor_left_beside_its_load(workbench) -> None:
    """Ctrl-C twice during a load whose server was watched: both runs stay on their hosts, and both are said."""
    import os

    from app.cli.left_behind import left_behind_lines
    from app.engine.lock import this_machine
    from storage.records import RunOwner

    store = workbench.store
    monitor = _monitor(store, "db", {"watching": "dbload", "clients": ["c1"], "group": ""})
    load = _load(store, "c1")
    for run_id in (monitor, load):
        store.runs.set_owner(run_id, RunOwner(this_machine(), os.getpid(), "lock"))
    lines = left_behind_lines(workbench)
    assert len(lines) == 2
    assert lines[0].startswith(f"run {monitor} on db (the database server's telemetry during load run(s) {load})")
    assert "collected and removed there with them" in lines[0]
    assert lines[1].startswith(f"run {load} on c1 may still be on the host")
