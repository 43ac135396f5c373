"""A database load from several client hosts, started from the run dialog: run_dbload_multi in a worker, the
TOTAL per second drawn live above the Live tab's host panels with each client's share beside it.

The run dialog hands over its choice when the database load test has more than one host ticked: the hosts
are then clients of one target, every step started on all at one instant (app.engine.dbload_multi). Each
client's own load charts and telemetry, and the database server's when it is a host of the inventory, are
the Live tab's host panels as for any run. Each client's second arrives from a worker thread and crosses to
the GUI thread through a queued signal; LiveShares (Qt-free) sums them on the steps' common time line.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QBoxLayout, QTabWidget

from app.engine.dbload_multi import (
    TEST,
    DbMultiOutcome,
    DbMultiRequest,
    limit_note,
    plan,
    run_dbload_multi,
    tool_busy,
    tool_wait,
)
from app.engine.dbload_watch import target_host
from app.engine.orchestrator import RunControl, RunRequestError
from app.gui.together_live import SweepControls
from app.gui.workers import Worker, WorkerPool
from app.workbench import Workbench
from remote.agent import benches
from widgets.dashboard import Dashboard
from widgets.dbload_total_panel import DbLoadTotalPanel, ShareRow

PANEL_HEIGHT = 300


def tick_ops(event: Mapping[str, Any]) -> float:
    """A second's operations as the step's figures count them: the transactions where the tool counts them
    (pgbench, sysbench), else the operations' sum (Redis get + set)."""
    ops = event.get("ops") if isinstance(event.get("ops"), dict) else {}
    if "txn" in ops:   # rounded as the agent stores the step's seconds (remote.agent.dbload_stats)
        return round(float(ops["txn"] or 0.0), 3)
    return round(math.fsum(float(v) for v in ops.values() if isinstance(v, (int, float))), 3)


class LiveShares:
    """The clients' seconds on the sweep's time line: per step, the per-second totals and each client's share."""

    def __init__(self, params: Mapping[str, Any], hosts: tuple[str, ...]) -> None:
        self.hosts = hosts
        self.period = float(params["step_seconds"] + params["step_gap"])   # step k starts k periods in
        self.seconds: dict[int, dict[str, dict[int, float]]] = {}          # step -> host -> second -> ops
        self.clients: dict[int, dict[str, int]] = {}
        self.busy: dict[int, dict[str, float]] = {}
        self.waits: dict[int, dict[str, float]] = {}

    def tick(self, host: str, event: Mapping[str, Any]) -> tuple[float, float] | None:
        """(x, ops) of one client's second: x in seconds since the first step began."""
        step, second = event.get("step"), event.get("second")
        if not isinstance(step, int) or not isinstance(second, int):
            return None
        ops = tick_ops(event)
        self.seconds.setdefault(step, {}).setdefault(host, {})[second] = ops
        if isinstance(event.get("clients"), int):
            self.clients.setdefault(step, {})[host] = event["clients"]
        return (step - 1) * self.period + second, ops

    def result(self, host: str, event: Mapping[str, Any]) -> bool:
        """A client's stored step figure: its CPU share busy over the step; True when it was one."""
        meta = event.get("metadata") if isinstance(event.get("metadata"), dict) else {}
        busy, waited, step = tool_busy(meta), tool_wait(meta), meta.get("step")
        if event.get("metric") != "ops_per_s" or not isinstance(step, int) or (busy is None and waited is None):
            return False
        if busy is not None:
            self.busy.setdefault(step, {})[host] = busy
        if waited is not None:
            self.waits.setdefault(step, {})[host] = waited
        return True

    def totals(self, step: int) -> list[float]:
        """The step's per-second totals: the sum of the clients' seconds (a second not reported counts 0)."""
        own = self.seconds.get(step, {})
        last = max((max(s) for s in own.values() if s), default=0)
        return [math.fsum(s.get(i, 0.0) for s in own.values()) for i in range(1, last + 1)]

    def shares(self, step: int) -> dict[str, float]:
        own = self.seconds.get(step, {})
        sums = {host: math.fsum(own.get(host, {}).values()) for host in self.hosts}
        whole = math.fsum(sums.values())
        return {host: (n / whole if whole > 0 else 0.0) for host, n in sums.items()}

    def note(self, step: int) -> str:
        # of equals the first in host order, as the stored TOTAL names it
        busy, waits = self.busy.get(step, {}), self.waits.get(step, {})
        text = limit_note({h: busy[h] for h in self.hosts if h in busy},
                          {h: waits[h] for h in self.hosts if h in waits})
        return f"{text}: this step's total may be the client's limit, not the server's" if text else ""

    def rows(self) -> list[ShareRow]:
        out = []
        for step in sorted(self.seconds):
            totals = self.totals(step)
            connections = sum(self.clients.get(step, {}).values())
            median = statistics.median(totals) if totals else 0.0
            shares = ", ".join(f"{host} {share * 100:.0f} %" for host, share in self.shares(step).items())
            out.append(ShareRow(f"step {step} · {connections} connections",
                                f"{median:,.0f} ops/s in all (median of {len(totals)} s)", shares, self.note(step)))
        return out


class LiveView(Protocol):
    """What this uses of the Live tab: a widget with a layout and its host panels."""

    dashboard: Dashboard

    def layout(self) -> QBoxLayout: ...
    def busy_hosts(self) -> set[str]: ...


class DbMultiLive(QObject, SweepControls):
    """One several-client load at a time; finished(DbMultiOutcome) or failed(exception) at its end."""

    tick = Signal(str, object)      # host, agent event (from worker threads)
    sample = Signal(str, object)    # host, TelemetrySample: each client's and the server's
    event = Signal(str, object)     # host, agent event: the Live tab's host panels
    finished = Signal(object)       # DbMultiOutcome
    failed = Signal(object)         # the exception: a wrong request, an unreachable host

    def __init__(self, bench: Workbench, live: LiveView, tabs: QTabWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bench = bench
        self.live = live
        self.tabs = tabs
        self.panel = DbLoadTotalPanel(live)   # type: ignore[arg-type]  # the Live tab is a QWidget
        self.panel.setMinimumHeight(PANEL_HEIGHT)
        self.panel.hide()
        live.layout().insertWidget(1, self.panel)   # under the progress, above the host panels
        self.pool = WorkerPool(self, max_threads=1)
        self.control: RunControl | None = None
        self.shares: LiveShares | None = None
        queued = Qt.ConnectionType.QueuedConnection
        self.tick.connect(self._draw, queued)
        self.sample.connect(live.dashboard.add_sample, queued)
        self.event.connect(live.dashboard.add_event, queued)

    @property
    def running(self) -> bool:
        return self.pool.active_count() > 0

    def problem(self, hosts: list[str], params: Mapping[str, Any]) -> str:
        """Why these hosts cannot load one target together now, or ""."""
        if self.running:
            return "A database load from several client hosts is running: wait for it or cancel it"
        try:
            plan(DbMultiRequest(tuple(hosts), dict(params)), "check")
            target_host(self.bench, params, hosts)
        except RunRequestError as exc:
            return str(exc)
        return ""

    def start(self, hosts: list[str], params: Mapping[str, Any], interval: float = 1.0) -> str:
        """Start the load ("" ) or say why not."""
        problem = self.problem(hosts, params)
        if problem:
            return problem
        request = DbMultiRequest(tuple(hosts), dict(params), interval)
        validated = benches.validate(TEST, plan(request, "check")[0])
        self.shares = LiveShares(validated, request.hosts)
        server = target_host(self.bench, params, hosts)
        self.panel.clear()
        self.panel.set_server(f"The database server {server}: its own CPU, disks, load and steal in its panel "
                              "below, stored with the runs" if server else
                              "The database server is not a host of the inventory: only the clients' telemetry is "
                              "shown (add it, or set target_host, to record the server's too)")
        if not self.live.busy_hosts():
            self.live.dashboard.clear()
        for host in [*hosts, *([server] if server else [])]:
            self.live.dashboard.add_host(host)
        self.panel.show()
        self.control = RunControl()
        worker = Worker(run_dbload_multi, self.bench, request, self.control, self._event, None, self.sample.emit)
        worker.finished.connect(self._finished)
        worker.failed.connect(self.failed.emit)
        self.pool.start(worker, key="dbload-multi")
        self.tabs.setCurrentWidget(self.live)   # type: ignore[arg-type]
        return ""

    # -- from the worker threads -----------------------------------------------------------------

    def _event(self, host: str, event: dict[str, Any]) -> None:
        self.event.emit(host, event)
        if event.get("type") in ("dbload_tick", "result", "phase_start"):
            self.tick.emit(host, event)

    # -- in the GUI thread -----------------------------------------------------------------------

    def _draw(self, host: str, event: dict[str, Any]) -> None:
        shares = self.shares
        if shares is None:
            return
        kind = event.get("type")
        if kind == "phase_start" and str(event.get("phase") or "").startswith("step") and host == shares.hosts[0]:
            self.panel.chart.set_step(f"{event.get('label')} on each of {len(shares.hosts)} client hosts")
        elif kind == "dbload_tick":
            point = shares.tick(host, event)
            if point is not None:
                self.panel.chart.add_tick(host, *point)
                self.panel.set_rows(shares.rows())
        elif kind == "result" and shares.result(host, event):
            self.panel.set_rows(shares.rows())

    def _finished(self, outcome: DbMultiOutcome) -> None:
        self.panel.chart.redraw()
        total = outcome.total
        knee = total.knee_text() if total is not None else "no step was run by every client"
        stored = f"TOTAL stored as run #{outcome.total_run_id}" if outcome.total_run_id else "nothing stored"
        self.panel.set_outcome(f"<b>{knee}</b>; {stored}" + (f" — {outcome.error}" if outcome.error else ""))
        self.finished.emit(outcome)
