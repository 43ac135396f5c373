"""Live telemetry of several hosts: a grid of per-host panels, or one colour per host overlaid.

Feed it samples and events (add_sample / add_samples / add_event); it keeps every host's data in
ring buffers (HostSeries) that both views read, so switching views keeps the history. Only the
shown view spends frames. The x axes of a view are linked: seconds since each host's run start.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from widgets.host_panel import UTIL_HINT, UTIL_SHORT, HostHeader, HostPanel, host_colour
from widgets.host_series import METRICS, METRICS_BY_KEY, HostSeries, Marker
from widgets.live_plot import DEFAULT_WINDOW, MUTED, LivePlot, PlotGroup
from widgets.run_data import RunState
from widgets.telemetry_data import TelemetryPoint

MODE_GRID = "grid"
MODE_OVERLAY = "overlay"
OVERLAY_DEFAULTS = ("disk.util", "disk.iops", "disk.MB/s", "disk.aqu-sz", "cpu.busy", "load.1")
WINDOWS: tuple[tuple[str, float | None], ...] = (("Last minute", 60.0), ("Last 5 minutes", 300.0),
                                                 ("Last 15 minutes", 900.0), ("Last hour", 3600.0),
                                                 ("Whole run", None))
PANEL_MIN_HEIGHT = 640     # with more than two hosts the grid scrolls rather than squashing graphs


class OverlayView(QWidget):
    """The same metrics of every host in one plot each; a metric picker above every plot."""

    def __init__(self, group: PlotGroup, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("overlayView")
        self.group = group
        self.series: dict[str, HostSeries] = {}
        self.colours: dict[str, str] = {}
        self.headers: dict[str, HostHeader] = {}
        self._markers: dict[str, list[Marker]] = {}
        self.plots: list[LivePlot] = []
        self.pickers: list[QComboBox] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self._strip = QGridLayout()
        self._strip.setSpacing(0)
        layout.addLayout(self._strip)
        grid = QGridLayout()
        grid.setSpacing(4)
        layout.addLayout(grid, 1)
        for index, key in enumerate(OVERLAY_DEFAULTS):
            cell = QWidget()
            box = QVBoxLayout(cell)
            box.setContentsMargins(0, 0, 0, 0)
            box.setSpacing(1)
            picker = QComboBox()
            picker.setObjectName("metricPicker")
            for metric in METRICS:
                picker.addItem(metric.label, metric.key)
            picker.setCurrentIndex(picker.findData(key))
            picker.setToolTip("The metric this graph shows for every host")
            # the legend is the host strip above: colour, name, status and disk of every host
            plot = LivePlot("", group=group, legend=False, x_axis=index >= len(OVERLAY_DEFAULTS) - 2)
            plot.setMinimumHeight(120)
            box.addWidget(picker)
            box.addWidget(plot, 1)
            picker.currentIndexChanged.connect(lambda _i, n=index: self.set_metric(n, self.pickers[n].currentData()))
            self.plots.append(plot)
            self.pickers.append(picker)
            grid.addWidget(cell, index // 2, index % 2)
            self._apply_metric(index)
        for row in range(3):
            grid.setRowStretch(row, 1)

    def metric_key(self, index: int) -> str:
        return str(self.pickers[index].currentData())

    def set_metric(self, index: int, key: str) -> None:
        if self.pickers[index].currentData() != key:
            self.pickers[index].setCurrentIndex(self.pickers[index].findData(key))  # comes back here
            return
        self._apply_metric(index)

    def _apply_metric(self, index: int) -> None:
        metric = METRICS_BY_KEY[self.metric_key(index)]
        plot = self.plots[index]
        plot.set_y_policy(metric.y_range, metric.min_top)
        for host, series in self.series.items():
            plot.set_buffer(host, series.buffer(metric.key))
        hint = metric.key == "disk.util"
        plot.set_title(UTIL_SHORT if hint else "")   # the caption, where the graph has room for it
        plot.setToolTip(UTIL_HINT if hint else metric.label)

    def add_host(self, series: HostSeries, colour: str) -> HostHeader:
        self.series[series.name] = series
        self.colours[series.name] = colour
        for index, plot in enumerate(self.plots):
            plot.add_curve(series.name, series.name, colour, series.buffer(self.metric_key(index)), width=1.0)
        header = HostHeader(series.name, colour)
        count = len(self.headers)
        self._strip.addWidget(header, count // 2, count % 2)
        header.show()
        self.headers[series.name] = header
        return header

    def clear_hosts(self) -> None:
        for name in list(self.series):
            for plot in self.plots:
                plot.remove_curve(name)
            header = self.headers.pop(name)
            self._strip.removeWidget(header)
            header.setParent(None)
            header.deleteLater()
        self.series.clear()
        self.colours.clear()
        self._markers.clear()
        for plot in self.plots:
            plot.clear_markers()

    def legend_names(self) -> list[str]:
        return list(self.headers)

    def update_device(self, host: str) -> None:
        series = self.series[host]
        for index, plot in enumerate(self.plots):
            plot.set_buffer(host, series.buffer(self.metric_key(index)))
        self.headers[host].set_devices(list(series.disks), series.device)

    def set_markers(self, host: str, markers: list[Marker]) -> None:
        self._markers[host] = list(markers)
        for plot in self.plots:
            plot.clear_markers()
            for name, host_markers in self._markers.items():
                for marker in host_markers:
                    plot.add_marker(marker.x, marker.label, self.colours[name], dashed=marker.kind == "end")


class Dashboard(QWidget):
    """Several hosts' live graphs: grid (one panel per host) or overlay (one colour per host)."""

    mode_changed = Signal(str)
    device_changed = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, window: float | None = DEFAULT_WINDOW,
                 mode: str = MODE_GRID) -> None:
        super().__init__(parent)
        self.setObjectName("dashboard")
        self.grid_group = PlotGroup(self, window=window, active=mode == MODE_GRID)
        self.overlay_group = PlotGroup(self, window=window, active=mode == MODE_OVERLAY)
        self.series: dict[str, HostSeries] = {}
        self.panels: dict[str, HostPanel] = {}
        self._mode = mode

        self.bar = QHBoxLayout()
        self.bar.setContentsMargins(4, 2, 4, 2)
        self.grid_button = self._mode_button("Grid", "One panel of graphs per host", MODE_GRID)
        self.overlay_button = self._mode_button("Overlay", "The same metric of every host in one graph, one "
                                                "colour per host", MODE_OVERLAY)
        self._modes = QButtonGroup(self)
        self._modes.setExclusive(True)
        for button in (self.grid_button, self.overlay_button):
            self._modes.addButton(button)
            self.bar.addWidget(button)
        self.window_combo = QComboBox()
        self.window_combo.setObjectName("windowCombo")
        for text, seconds in WINDOWS:
            self.window_combo.addItem(text, seconds)
        self.window_combo.setCurrentIndex(next(i for i, (_t, s) in enumerate(WINDOWS) if s == window))
        self.window_combo.currentIndexChanged.connect(lambda _i: self.set_window(self.window_combo.currentData()))
        self.follow_box = QCheckBox("Follow newest")
        self.follow_box.setToolTip("Keep the newest samples in view. Dragging or zooming a graph stops "
                                   "following; tick this to come back.")
        self.follow_box.setChecked(True)
        self.follow_box.toggled.connect(self._follow_toggled)
        for group in (self.grid_group, self.overlay_group):
            group.follow_changed.connect(self._group_follow_changed)
        self.bar.addSpacing(12)
        self.bar.addWidget(QLabel("Show:"))
        self.bar.addWidget(self.window_combo)
        self.bar.addWidget(self.follow_box)
        self.bar.addStretch(1)

        self.grid_container = QWidget()
        self.grid_layout = QGridLayout(self.grid_container)
        self.grid_layout.setContentsMargins(0, 0, 0, 0)
        self.grid_scroll = QScrollArea()
        self.grid_scroll.setWidgetResizable(True)
        self.grid_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.grid_scroll.setWidget(self.grid_container)
        self.overlay = OverlayView(self.overlay_group)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.grid_scroll)
        self.stack.addWidget(self.overlay)
        self.empty_label = QLabel("No hosts yet.")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setStyleSheet(f"color: {MUTED};")
        self.stack.addWidget(self.empty_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self.bar)
        layout.addWidget(self.stack, 1)
        self.set_mode(mode)

    def _mode_button(self, text: str, tip: str, mode: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setCheckable(True)
        button.setObjectName(f"{mode}ModeButton")
        button.clicked.connect(lambda _checked=False: self.set_mode(mode))
        return button

    # -- hosts -----------------------------------------------------------------------------------

    def add_host(self, name: str, t0: float | None = None) -> HostSeries:
        """A host's panel and overlay curves; t0 = its run start in host seconds (None: the first sample's)."""
        if name in self.series:
            return self.series[name]
        series = HostSeries(name, t0)
        colour = host_colour(len(self.series))
        self.series[name] = series
        panel = HostPanel(series, colour, self.grid_group)
        panel.header.device_chosen.connect(self.set_device)
        self.panels[name] = panel
        self.overlay.add_host(series, colour).device_chosen.connect(self.set_device)
        self._relayout()
        self._update_status(name)
        return series

    def host_names(self) -> list[str]:
        return list(self.series)

    def clear(self) -> None:
        """Forget every host (a new monitoring session or another stored run)."""
        for panel in self.panels.values():
            for plot in panel.plots.values():
                self.grid_group.remove(plot)
            panel.setParent(None)
            panel.deleteLater()
        self.panels.clear()
        self.series.clear()
        self.overlay.clear_hosts()
        for group in (self.grid_group, self.overlay_group):
            group.set_follow(True)
        self.set_mode(self._mode)

    def _relayout(self) -> None:
        while self.grid_layout.count():
            self.grid_layout.takeAt(0)
        count = len(self.panels)
        # two hosts side by side; more in one column that scrolls: wide graphs read better than
        # many small ones, and only what is on screen is redrawn
        columns = 2 if count == 2 else 1
        for index, panel in enumerate(self.panels.values()):
            panel.setMinimumHeight(PANEL_MIN_HEIGHT if count > 2 else 0)
            self.grid_layout.addWidget(panel, index // columns, index % columns)
            panel.show()   # a layout shows a new child of a visible parent only later (queued)
        self.set_mode(self._mode)

    # -- data ------------------------------------------------------------------------------------

    def add_sample(self, host: str, sample: TelemetryPoint) -> None:
        series = self.series.get(host) or self.add_host(host)
        if series.add_sample(sample):
            self._device_update(host)
        self._update_status(host)

    def add_samples(self, host: str, samples: list[TelemetryPoint]) -> None:
        series = self.series.get(host) or self.add_host(host)
        if series.add_samples(samples):
            self._device_update(host)
        self._update_status(host)

    def add_event(self, host: str, event: dict) -> None:
        series = self.series.get(host) or self.add_host(host)
        markers, status = series.add_event(event)
        if markers:
            self.panels[host].set_markers(series.markers)
            self.overlay.set_markers(host, series.markers)
        if status:
            self._update_status(host)

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
        self.panels[host].header.set_status(text, series.state)
        self.overlay.headers[host].set_status(text, series.state)

    def set_device(self, host: str, device: str) -> None:
        series = self.series[host]
        series.set_device(device)
        self._device_update(host)
        self.device_changed.emit(host, device)

    def _device_update(self, host: str) -> None:
        self.panels[host].update_devices()
        self.overlay.update_device(host)

    # -- view ------------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str) -> None:
        if mode not in (MODE_GRID, MODE_OVERLAY):
            raise ValueError(f"unknown dashboard mode {mode!r}")
        changed = mode != self._mode
        self._mode = mode
        self.grid_button.setChecked(mode == MODE_GRID)
        self.overlay_button.setChecked(mode == MODE_OVERLAY)
        if not self.series:
            self.stack.setCurrentWidget(self.empty_label)
        else:
            self.stack.setCurrentWidget(self.grid_scroll if mode == MODE_GRID else self.overlay)
        shown, hidden = ((self.grid_group, self.overlay_group) if mode == MODE_GRID
                         else (self.overlay_group, self.grid_group))
        hidden.set_active(False)
        if changed:
            shown.follow = hidden.follow
            if not hidden.follow and hidden.plots and shown.plots:
                shown.plots[0].setXRange(*hidden.plots[0].view_box.viewRange()[0], padding=0)
        shown.set_active(True)
        if changed:
            self.mode_changed.emit(mode)

    @property
    def active_group(self) -> PlotGroup:
        return self.grid_group if self._mode == MODE_GRID else self.overlay_group

    def set_window(self, seconds: float | None) -> None:
        """The span shown while following (None: the whole run); follows the newest data again."""
        index = next((i for i in range(self.window_combo.count()) if self.window_combo.itemData(i) == seconds), -1)
        if index >= 0 and index != self.window_combo.currentIndex():
            self.window_combo.setCurrentIndex(index)   # comes back here
            return
        for group in (self.grid_group, self.overlay_group):
            group.set_window(seconds)

    def _follow_toggled(self, follow: bool) -> None:
        self.active_group.set_follow(follow)

    def _group_follow_changed(self, follow: bool) -> None:
        self.follow_box.blockSignals(True)
        self.follow_box.setChecked(follow)
        self.follow_box.blockSignals(False)

    def frame(self) -> int:
        """Draw now (tests and benchmarks; the timer does this ~30 times a second)."""
        return self.active_group.frame()
