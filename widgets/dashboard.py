"""Live telemetry of several hosts: a grid of per-host panels, or one colour per host overlaid.

Feed it samples and events (add_sample / add_samples / add_event); it keeps every host's data in
ring buffers (HostSeries) that both views read, so switching views keeps the history. Only the
shown view spends frames. The x axes of a view are linked: seconds since each host's run start. The bar
(the views, the span shown, the time axis) and the switching between views: widgets.dashboard_views.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from widgets.dashboard_views import MODE_GRID, MODE_OVERLAY, TIME_MODES, WINDOWS, DashboardViews
from widgets.dbload_series import TICK as DBLOAD_TICK
from widgets.dns_series import TICK as DNS_TICK
from widgets.host_colours import colours_by_host
from widgets.host_panel import UTIL_HINT, Caption, HostPanel
from widgets.host_series import HostSeries
from widgets.lazy_panels import LazyPanels, PanelSlot, SlotFiller
from widgets.live_plot import DEFAULT_WINDOW, MUTED, PlotGroup
from widgets.overlay_view import OverlayView
from widgets.overview_hook import MODE_OVERVIEW, OverviewHook
from widgets.run_data import RunState
from widgets.session_clock import SessionClock
from widgets.telemetry_data import TelemetryPoint
from widgets.time_axis import CLOCK

EAGER_PANELS = 2          # up to this many hosts the grid shows every panel: built with the host
PANEL_MIN_HEIGHT = 740     # four rows of plots (PLOT_MIN_HEIGHT) and the header; more than two hosts scroll
__all__ = ["EAGER_PANELS", "MODE_GRID", "MODE_OVERLAY", "MODE_OVERVIEW", "PANEL_MIN_HEIGHT", "TIME_MODES",
           "WINDOWS", "Dashboard"]


class Dashboard(DashboardViews, QWidget):
    """Several hosts' live graphs: grid (one panel per host) or overlay (one colour per host)."""

    mode_changed = Signal(str)
    device_changed = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, window: float | None = DEFAULT_WINDOW,
                 mode: str = MODE_GRID, gradual: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("dashboard")
        self.gradual = gradual   # host panels make their charts one per event-loop pass (stored runs)
        self.grid_group = PlotGroup(self, window=window, active=mode == MODE_GRID)
        self.overlay_group = PlotGroup(self, window=window, active=mode == MODE_OVERLAY)
        self.series: dict[str, HostSeries] = {}
        # panels are built when shown (widgets.lazy_panels); panels[name] builds one on demand
        self.panels = LazyPanels(self._build_panel, lambda: self.series)
        self.slots: dict[str, PanelSlot] = {}
        self._mode = mode
        self.time_mode = CLOCK
        self._origins: dict[str, float | None] = {}     # per host: the run start its time axis shows
        self.session_clock = SessionClock()   # a live host's x = 0: its session's start, on its clock

        self._make_bar(window)

        self.grid_container = QWidget()
        self.grid_layout = QGridLayout(self.grid_container)
        self.grid_layout.setContentsMargins(0, 0, 0, 0)
        self.grid_scroll = QScrollArea()
        self.grid_scroll.setWidgetResizable(True)
        self.grid_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.grid_scroll.setWidget(self.grid_container)
        self.filler = SlotFiller(self.grid_scroll, self.slots, self.panels, lambda: self._mode == MODE_GRID)
        self.overlay = OverlayView(self.overlay_group)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.grid_scroll)
        self.stack.addWidget(self.overlay)
        self.empty_label = QLabel("No hosts yet.")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setStyleSheet(f"color: {MUTED};")
        self.stack.addWidget(self.empty_label)
        self.overview_hook = OverviewHook(self)   # many hosts: the overview page, the overlay's top N
        self.overview = self.overview_hook.overview
        self.bar.addWidget(self.overview_hook.top_label)
        # said once for every host, under the bar, while the grid shows hosts
        self.util_note = Caption(UTIL_HINT)
        self.util_note.setObjectName("utilHint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.bar)
        layout.addWidget(self.util_note)
        layout.addWidget(self.stack, 1)
        self.set_mode(mode)

    # -- hosts -----------------------------------------------------------------------------------

    def add_host(self, name: str, t0: float | None = None, host: str | None = None) -> HostSeries:
        """A host's panel and overlay curves; t0 = its run start in host seconds (None: the session's start);
        host: the host it shows, whose colour it takes (a stored run's label names more than the host)."""
        if name in self.series:
            return self.series[name]
        series = HostSeries(name, t0)
        series.host_name = host or name
        self.series[name] = series
        colours = self.colours()
        self.slots[name] = PanelSlot(name)
        self.overlay.add_host(series, colours[name]).device_chosen.connect(self.set_device)
        # a name not in the inventory takes a free colour: a host added may move such a name's colour
        for host, panel in self.panels.built.items():
            if panel.colour != colours[host]:
                panel.set_colour(colours[host])
        self.overlay.set_colours(colours)
        self._relayout()
        if self._mode == MODE_GRID and len(self.series) <= EAGER_PANELS:
            self._build_panel(name)   # a few hosts: on screen anyway, and drawn from the first frame
        self._update_time(name)
        self._update_status(name)
        return series

    def _build_panel(self, name: str) -> HostPanel:
        series = self.series[name]
        panel = HostPanel(series, self.colours()[name], self.grid_group, gradual=self.gradual)
        panel.header.device_chosen.connect(self.set_device)
        self.panels.built[name] = panel
        panel.set_time(self.time_mode)
        if series.markers:
            panel.set_markers(series.markers)
        self.slots[name].put(panel)
        self._update_status(name)
        self._netfs_update(name)
        return panel

    def colours(self) -> dict[str, str]:
        """Each host's colour, the same in Grid and Overlay (and in Compare and the report)."""
        colours = colours_by_host({name: series.host_name for name, series in self.series.items()})
        for name, series in self.series.items():
            series.colour = colours[name]
        return colours

    def set_time_mode(self, mode: str) -> None:
        """The time axes read the host's clock (CLOCK) or the time since the start (ELAPSED)."""
        index = self.time_combo.findData(mode)
        if index >= 0 and index != self.time_combo.currentIndex():
            self.time_combo.setCurrentIndex(index)   # comes back here
            return
        self.time_mode = mode
        for host in self.series:
            self._origins.pop(host, None)
            self._update_time(host)

    def _update_time(self, host: str) -> None:
        series = self.series[host]
        if host in self._origins and self._origins[host] == series.t0:
            return
        self._origins[host] = series.t0
        if host in self.panels.built:
            self.panels.built[host].set_time(self.time_mode)
        self.overlay.set_time(self.time_mode)

    def host_names(self) -> list[str]:
        return list(self.series)

    def clear(self) -> None:
        """Forget every host (a new monitoring session or another stored run)."""
        for panel in self.panels.built.values():
            for plot in panel.plots.values():
                self.grid_group.remove(plot)
        for slot in self.slots.values():
            slot.setParent(None)
            slot.deleteLater()
        self.panels.built.clear()
        self.slots.clear()
        self.series.clear()
        self._origins.clear()
        self.session_clock.reset()
        self.overlay.clear_hosts()
        for group in (self.grid_group, self.overlay_group):
            group.set_follow(True)
        self.set_mode(self._mode)

    def _relayout(self) -> None:
        count = len(self.slots)
        if count > 3:   # one column already: the new host goes below the others (no re-layout of 100 slots)
            slot = self.slots[next(reversed(self.slots))]
            slot.setMinimumHeight(PANEL_MIN_HEIGHT)
            self.grid_layout.addWidget(slot, count - 1, 0)
            slot.show()
            self.filler.schedule()
            return
        while self.grid_layout.count():
            self.grid_layout.takeAt(0)
        count = len(self.slots)
        # two hosts side by side; more in one column that scrolls: wide graphs read better than
        # many small ones, and only what is on screen is redrawn (and built: widgets.lazy_panels)
        columns = 2 if count == 2 else 1
        for index, slot in enumerate(self.slots.values()):
            slot.setMinimumHeight(PANEL_MIN_HEIGHT if count > 2 else 0)
            self.grid_layout.addWidget(slot, index // columns, index % columns)
            slot.show()   # a layout shows a new child of a visible parent only later (queued)
        self.set_mode(self._mode)
        self.filler.schedule()

    # -- data ------------------------------------------------------------------------------------

    def add_sample(self, host: str, sample: TelemetryPoint) -> None:
        series = self.series.get(host) or self.add_host(host)
        self.session_clock.place(series, sample.t, sample.interval)
        if series.add_sample(sample):
            self._device_update(host)
        self._netfs_update(host)
        self._update_time(host)
        self._update_status(host)

    def add_samples(self, host: str, samples: list[TelemetryPoint]) -> None:
        series = self.series.get(host) or self.add_host(host)
        if samples:
            self.session_clock.place(series, samples[0].t, samples[0].interval)
        if series.add_samples(samples):
            self._device_update(host)
        self._netfs_update(host)
        self._update_time(host)
        self._update_status(host)

    def add_event(self, host: str, event: dict) -> None:
        series = self.series.get(host) or self.add_host(host)
        if event.get("type") in (DBLOAD_TICK, DNS_TICK):
            self._tick(host, series, event)
            return
        if event.get("type") == "plan" and series.dbload.take_plan(event):
            self._update_dbload(host)
        if event.get("type") in ("phase_start", "phase_end", "marker") and isinstance(event.get("t"), (int, float)):
            self.session_clock.place(series, float(event["t"]), 0.0)
        disk = series.test_disk(event)
        if disk is not None:
            self.prefer_device(host, disk)
        markers, status = series.add_event(event)
        if markers:
            if host in self.panels.built:
                self.panels.built[host].set_markers(series.markers)
            self.overlay.set_markers(host, series.markers)
        if status:
            self._update_status(host)

    def _tick(self, host: str, series: HostSeries, event: dict) -> None:
        """A second of a database load or of a dns run: its charts above the host's telemetry."""
        t = event.get("t")
        if not isinstance(t, (int, float)) or isinstance(t, bool):
            return
        self.session_clock.place(series, float(t), 1.0)
        dns = event.get("type") == DNS_TICK
        (series.dns if dns else series.dbload).add_tick(event, series.x(float(t)))
        panel = self.panels.built.get(host)
        if panel is not None:
            fresh = (panel.dns if dns else panel.dbload) is None
            if dns:
                panel.show_dns()
            else:
                panel.show_dbload()
            if fresh:
                self._netfs_update(host)

    def _update_dbload(self, host: str) -> None:
        panel = self.panels.built.get(host)
        if panel is not None and panel.dbload is not None:
            panel.dbload.update_from_series()

    def set_dbload_steps(self, host: str, steps: int) -> None:
        """How many steps the host's database load runs (its clients list), for "step 4 of 6"."""
        series = self.series.get(host) or self.add_host(host)
        series.dbload.total_steps = steps

    def set_status(self, host: str, text: str, state: str = "") -> None:
        """Say what a host is doing from outside the event stream (connecting, stopped, an error)."""
        series = self.series.get(host) or self.add_host(host)
        series.state = state
        series.message = text
        self._update_status(host)

    def _update_status(self, host: str) -> None:
        series = self.series[host]
        text = series.status_text()
        if series.samples and series.state not in (RunState.ERROR, RunState.FAILED):
            text = f"{text} · {series.samples} samples" if text else f"{series.samples} samples"
        text = text or "waiting for the first sample…"
        if host in self.panels.built:
            self.panels.built[host].header.set_status(text, series.state)
        self.overlay.headers[host].set_status(text, series.state)

    def prefer_device(self, host: str, device: str) -> None:
        """Show this disk of the host (the one holding its test directory) until the user picks another."""
        series = self.series.get(host) or self.add_host(host)
        if series.prefer_device(device):
            self._device_update(host)

    def set_device(self, host: str, device: str) -> None:
        series = self.series[host]
        series.set_device(device)
        self._device_update(host)
        self.device_changed.emit(host, device)

    def _netfs_update(self, host: str) -> None:
        panel = self.panels.built.get(host)
        if panel is None:
            return
        panel.update_netfs()
        if len(self.slots) > 2:   # the table takes its own height, not the graphs'
            table = panel.nfs_table
            height = PANEL_MIN_HEIGHT + (0 if table.isHidden() else table.height())
            for extra in (panel.dbload, panel.dns):   # a load's or a dns run's row of charts comes on top
                if extra is not None:
                    height += extra.minimumSizeHint().height()
            if self.slots[host].minimumHeight() != height:
                self.slots[host].setMinimumHeight(height)

    def _device_update(self, host: str) -> None:
        if host in self.panels.built:
            self.panels.built[host].update_devices()
        self.overlay.update_device(host)

    # -- view ------------------------------------------------------------------------------------

    def frame(self) -> int:
        """Draw now (tests and benchmarks; the timer does this ~30 times a second)."""
        return self.active_group.frame()
