"""A database load's "during the test" telemetry is the database server's, when it was recorded.

The load comes from client hosts; the storyline is the server's disks and CPU under it. A load run whose server
is an inventory host names the server's monitor run in its "target_telemetry" event (app.engine.dbload_watch).
Its curves are drawn on the load run's axis (t = 0: the first step began), labelled "database server NAME";
the client's own stay available under the names "client.<overlay>", labelled "load client NAME". A run
without the server's telemetry shows its client's curve, labelled as the client's.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.compare.overlay import AlignedSeries, aligned, overlay_runs, pick
from app.compare.source import RunSource

DBLOAD = "dbload"
CLIENT = "client."                 # an overlay name's prefix: the load client's curve
SERVER_OVERLAYS = ("cpu.busy", "cpu.steal", "disk.util", "load.1")   # iostat, CPU, steal, load of the server
CLIENT_OVERLAYS = ("cpu.busy", "load.1")


def server_of(events: Sequence[Mapping[str, Any]]) -> tuple[str, int] | None:
    """(server host, its monitor run id) from a load run's events, when its telemetry was recorded."""
    tie = next((e for e in events if e.get("type") == "target_telemetry"), None)
    if tie is None or tie.get("error") or not isinstance(tie.get("run_id"), int):
        return None
    return str(tie.get("host") or ""), int(tie["run_id"])


def _first_step(events: Sequence[Mapping[str, Any]]) -> float | None:
    """The load's test start on the workbench's clock (the clock the server's monitor counts on)."""
    return next((float(e["t"]) for e in events if e.get("type") == "phase_start"
                 and isinstance(e.get("t"), (int, float))), None)


def _t0(events: Sequence[Mapping[str, Any]]) -> float | None:
    found = [e.get("t0") for e in events if e.get("type") == "telemetry" and isinstance(e.get("t0"), (int, float))]
    return float(found[-1]) if found else None


def server_label(label: str, host: str) -> str:
    return f"{label}: database server {host}"


def client_label(label: str, host: str) -> str:
    return f"{label}: load client {host}" if host and host != label else f"{label}: load client"


def server_curve(source: RunSource, label: str, run_id: int, name: str) -> AlignedSeries | None:
    """The server's named curve for load run `run_id`, shifted so the load's first step starts at t = 0."""
    events = source.run_events(run_id)
    tie = server_of(events)
    start = _first_step(events)
    if tie is None or start is None:
        return None
    host, monitor = tie
    t0 = _t0(source.run_events(monitor))
    curve = pick(source.run_series(monitor), name)
    if t0 is None or curve is None:
        return None
    shift = t0 - start   # the monitor's t = 0 is t0; the load's test start is `start`, both workbench time
    return AlignedSeries(server_label(label, host), run_id, name, curve.device, curve.unit,
                         [t + shift for t in curve.t], list(curve.values))


def dbload_aligned(source: RunSource, labelled_runs: Sequence[tuple[str, int]], name: str,
                   hosts: Mapping[int, str] | None = None) -> list[AlignedSeries]:
    """The named curve per load run: the database server's where recorded, else the client's (labelled so);
    "client.<name>": the client's curve of every run. hosts: run id -> client host (for the labels)."""
    hosts = hosts or {}
    wanted = name.removeprefix(CLIENT)
    out = []
    for label, run_id in labelled_runs:
        server = None if name.startswith(CLIENT) else server_curve(source, label, run_id, wanted)
        if server is not None:
            out.append(server)
            continue
        for curve in aligned(source, [(label, run_id)], wanted):
            out.append(AlignedSeries(client_label(label, hosts.get(run_id, "")), curve.run_id, name, curve.device,
                                     curve.unit, curve.t, curve.values))
    return out


def overlay_curves(source: RunSource, comparison: Any, name: str, test: str | None = None) -> list[AlignedSeries]:
    """The chosen overlay of each row (its run of `test`, or its first): a database load's as above, other
    tests' their host's own curve (a "client." name is their host's curve too)."""
    runs = {run.id: run for row in comparison.rows for run in row.runs}
    out = []
    for label, run_id in overlay_runs(comparison, test):
        run = runs.get(run_id)
        if run is not None and run.test == DBLOAD:
            out += dbload_aligned(source, [(label, run_id)], name, {run_id: str(getattr(run, "host_name", ""))})
        else:
            out += aligned(source, [(label, run_id)], name.removeprefix(CLIENT))
    return out
