"""One host's graphs (disk, CPU, load, memory) and its header line (name, status, disk picker)."""
from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from widgets.dbload_live import DbLoadPanel
from widgets.dns_live import DnsLivePanel
from widgets.host_series import CPU_STACK, HostSeries, Marker
from widgets.live_plot import MUTED, LivePlot, PlotGroup
from widgets.marker_key import MarkerKey
from widgets.marker_strip import StripMarker
from widgets.nfs_table import NetworkFsTable
from widgets.run_data import RunState
from widgets.time_axis import CLOCK

HOST = "host"              # a curve in the host's colour (widgets.host_colours)
COMPANION = "companion"    # the host's second shade, beside a HOST curve in the same chart
UTIL_HINT = ("%util is the share of time the device was busy — not saturation on SSDs, NVMe or RAID, "
             "which serve many requests at once")
UTIL_SHORT = "%util: busy time, not saturation on SSD, NVMe or RAID"
# what each chart shows, with its unit, along its y axis: it stays when a narrow title line drops the title
Y_LABELS = {"util": "%util", "queue": "aqu-sz", "iops": "IOPS", "mbs": "MB/s", "await": "Latency (ms)",
            "cpu": "CPU %", "load": "Load", "mem": "MB"}
CPU_COLOURS = {"user": "#4c9f70", "system": "#d0453a", "iowait": "#e5a823", "steal": "#8e6bbf"}
_STATE_COLOURS = {RunState.ERROR: "#d0453a", RunState.FAILED: "#d0453a", RunState.RECONNECTING: "#b7791f",
                  RunState.CANCELLED: "#8a6d1f"}

# (plot key, title, short title, y range, smallest y top, curves: (curve key, legend name, buffer key, colour))
# the disk and memory curves take the host's colour: a host looks the same in Grid and Overlay
PANEL_PLOTS: tuple[tuple[str, str, str, tuple[float, float] | None, float,
                         tuple[tuple[str, str, str, str], ...]], ...] = (
    ("util", "Disk busy — %util", "%util", (0.0, 100.0), 1.0, (("util", "%util", "disk.util", HOST),)),
    ("queue", "Queue length — aqu-sz", "aqu-sz", None, 1.0, (("aqu", "aqu-sz", "disk.aqu-sz", HOST),)),
    ("iops", "IOPS", "", None, 10.0, (("r", "r/s", "disk.r/s", HOST), ("w", "w/s", "disk.w/s", COMPANION))),
    ("mbs", "MB/s", "", None, 1.0, (("r", "read", "disk.rMB/s", HOST), ("w", "write", "disk.wMB/s", COMPANION))),
    ("await", "Latency — await ms", "Latency ms", None, 1.0, (("r", "r_await", "disk.r_await", HOST),
                                                             ("w", "w_await", "disk.w_await", COMPANION))),
    ("cpu", "CPU %", "CPU %", (0.0, 100.0), 1.0, ()),
    ("load", "Load average", "Load", None, 1.0, (("1", "1 min", "load.1", HOST), ("5", "5 min", "load.5", COMPANION),
                                                  ("15", "15 min", "load.15", "#8c96a3"))),
    ("mem", "Dirty / Writeback MB", "MB", None, 1.0, (("dirty", "Dirty", "mem.dirty", HOST),
                                                       ("wb", "Writeback", "mem.writeback", COMPANION))),
)


class ElidedLabel(QLabel):
    """One line that ends in "…" when it does not fit (the full text is its tooltip), rather than being
    cut mid-word at the widget's edge."""

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        text = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, self.contentsRect().width())
        painter.drawText(self.contentsRect(), int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), text)


PLOT_MIN_HEIGHT = 170   # a plot area of ~100 px under the title and marker strip; the grid scrolls below that


class Caption(QLabel):
    """A small wrapped note that does not make its layout height-for-width (which would stop a
    QScrollArea from fitting the graphs into the window)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self.setStyleSheet(f"color: {MUTED}; font-size: 8pt;")
        self.setMinimumHeight(2 * self.fontMetrics().height() + 2)

    def hasHeightForWidth(self) -> bool:
        return False


def state_colour(state: str) -> str:
    return _STATE_COLOURS.get(state, MUTED)


class HostHeader(QWidget):
    """● name — status … Disk: [vda ▾]. The picker lists whole disks (dm volumes by their names)."""

    device_chosen = Signal(str, str)    # host, device

    def __init__(self, host: str, colour: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.setObjectName("hostHeader")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        self.colour = colour
        # in the overlay these headers are the legend: the mark has the colour of the host's curves
        self.name_label = QLabel()
        self.set_colour(colour)
        self.status_label = ElidedLabel("")
        self.status_label.setObjectName("hostStatus")
        self.status_label.setStyleSheet(f"color: {MUTED};")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # the line changes with every sample: its width must never re-layout the graphs below
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._state = ""
        self.device_combo = QComboBox()
        self.device_combo.setObjectName("deviceCombo")
        self.device_combo.setMinimumContentsLength(8)
        self.device_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.device_combo.setToolTip("The disk shown in the disk graphs (whole disks; device-mapper volumes "
                                     "by their names). Until you pick one, the busiest disk is shown.")
        self.device_combo.activated.connect(self._chosen)
        layout.addWidget(self.name_label)
        layout.addWidget(self.status_label, 1)
        layout.addWidget(QLabel("Disk:"))
        layout.addWidget(self.device_combo)

    def set_colour(self, colour: str) -> None:
        self.colour = colour
        self.name_label.setText(f"<span style='color:{colour}; font-size:13pt'>●</span> <b>{_escape(self.host)}</b>")

    def set_devices(self, devices: list[str], current: str | None) -> None:
        self.device_combo.blockSignals(True)
        if [self.device_combo.itemText(i) for i in range(self.device_combo.count())] != devices:
            self.device_combo.clear()
            self.device_combo.addItems(devices)
        if current is not None:
            self.device_combo.setCurrentText(current)
        self.device_combo.blockSignals(False)

    def set_status(self, text: str, state: str = "") -> None:
        if text != self.status_label.text():
            self.status_label.setText(text)
            self.status_label.setToolTip(text)
        if state_colour(state) != state_colour(self._state):
            self.status_label.setStyleSheet(f"color: {state_colour(state)};")
        self._state = state

    def _chosen(self, index: int) -> None:
        self.device_chosen.emit(self.host, self.device_combo.itemText(index))


class HostPanel(QWidget):
    """The graphs of one host: %util, aqu-sz, IOPS, MB/s, await, CPU stacked, load, Dirty/Writeback.

    gradual: the charts are made one per event-loop pass (each says "loading…" until then), so opening a
    stored run never freezes the window: eight charts cost seconds on a loaded machine."""

    charts_built = Signal()   # every chart is made

    def __init__(self, series: HostSeries, colour: str, group: PlotGroup, parent: QWidget | None = None,
                 gradual: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("hostPanel")
        self.series = series
        self.colour = colour
        self.header = HostHeader(series.name, colour)
        self.plots: dict[str, LivePlot] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addWidget(self.header)
        # NFS per mount (what nfsiostat prints) beside the block devices; only while one is mounted
        self.nfs_table = NetworkFsTable()
        self.nfs_table.setToolTip("Network filesystems mounted on this host: NFS figures per mount, as nfsiostat "
                                  "prints them, over the newest interval")
        self.nfs_table.hide()
        layout.addWidget(self.nfs_table)
        self.group = group
        self.dbload: DbLoadPanel | None = None     # a database load's charts, above the telemetry
        self.dns: DnsLivePanel | None = None       # a dns run's charts, likewise
        self._layout = layout
        grid = QGridLayout()
        grid.setSpacing(4)
        layout.addLayout(grid, 1)
        self._grid = grid
        self._time_mode = CLOCK
        self._strip: list[StripMarker] = []
        self._pending = list(range(len(PANEL_PLOTS)))   # charts not made yet (gradual: one per pass)
        self.placeholders: dict[str, QLabel] = {}
        if gradual:
            for index, (key, title, *_rest) in enumerate(PANEL_PLOTS):
                note = QLabel(f"{title}: loading…")
                note.setObjectName("chartLoading")
                note.setAlignment(Qt.AlignmentFlag.AlignCenter)
                note.setStyleSheet(f"color: {MUTED};")
                note.setMinimumHeight(PLOT_MIN_HEIGHT)
                self.placeholders[key] = note
                grid.addWidget(note, index // 2, index % 2)
                grid.setRowStretch(index // 2, 1)
            chart_queue().add(self)
        else:
            while self._pending:
                self._build_plot()
        self.marker_key = MarkerKey()   # what the numbered marker tags stand for
        layout.addWidget(self.marker_key)
        # what %util means is said once above all hosts (Dashboard.util_note), not per host nor over the chart
        self.update_devices()
        self.update_netfs()
        self.show_dbload()
        self.show_dns()

    @property
    def complete(self) -> bool:
        """Whether every chart is made (a gradual panel makes one per event-loop pass)."""
        return not self._pending

    def build_next(self) -> None:
        """Make the next chart not made yet (the chart queue calls this once per pass)."""
        if self._pending:
            self._build_plot()
            if not self._pending:
                self.charts_built.emit()

    def _build_plot(self) -> None:
        index = self._pending.pop(0)
        key, title, short, y_range, min_top, curves = PANEL_PLOTS[index]
        # every chart has its time axis: with two hosts side by side the top ones are far from the bottom
        plot = LivePlot(title, group=self.group, y_range=y_range, y_min_top=min_top,
                        legend=len(curves) > 1 or key == "cpu", short_title=short)
        plot.setMinimumHeight(PLOT_MIN_HEIGHT)
        plot.set_y_label(Y_LABELS[key])
        for curve_key, name, buffer_key, role in curves:
            # the second curve of a pair (w/s beside r/s) is dashed: a shade of the host's colour alone
            # is too close to tell apart, and another hue would belong to another host
            plot.add_curve(curve_key, name, self._colour_of(role, plot), self.series.buffer(buffer_key),
                           dashed=role == COMPANION)
        if key == "cpu":
            plot.add_stack([(k, k, CPU_COLOURS[k]) for k in CPU_STACK],
                           [self.series.host[f"stack.{k}"] for k in CPU_STACK])
        plot.set_time(self._time_mode, self.series.t0)
        if self._strip:
            plot.set_markers(self._strip)
        self.plots[key] = plot
        row = index // 2
        note = self.placeholders.pop(key, None)
        if note is not None:
            self._grid.removeWidget(note)
            note.deleteLater()
        self._grid.addWidget(plot, row, index % 2)
        self._grid.setRowStretch(row, 1)
        if key == "util":
            self.show_device()

    def show_dbload(self) -> None:
        """The load's charts from its first second on (built once), then its step line kept current."""
        if not self.series.dbload.active:
            return
        if self.dbload is None:
            self.dbload = DbLoadPanel(self.series.dbload, self.group, self.colour)
            self._layout.insertWidget(self._layout.indexOf(self.nfs_table) + 1, self.dbload, 1)
            for key, plot in self.dbload.plots.items():
                self.plots[f"dbload.{key}"] = plot
                plot.set_time(self._time_mode, self.series.t0)
        self.dbload.update_from_series()

    def show_dns(self) -> None:
        """The dns run's charts from its first second on (built once), then its resolver lines kept current."""
        if not self.series.dns.active:
            return
        if self.dns is None:
            self.dns = DnsLivePanel(self.series.dns, self.group)
            self._layout.insertWidget(self._layout.indexOf(self.nfs_table) + 1, self.dns, 1)
            for key, plot in self.dns.plots.items():
                self.plots[f"dns.{key}"] = plot
                plot.set_time(self._time_mode, self.series.t0)
        self.dns.update_from_series()

    def update_netfs(self) -> None:
        """Show the network filesystems of the newest interval (the table hides while none is mounted)."""
        if not self.series.has_netfs:
            if not self.nfs_table.isHidden():
                self.nfs_table.show_point(None)
                self.nfs_table.hide()
            return
        before = self.nfs_table.mounts()
        self.nfs_table.show_point(self.series)
        if self.nfs_table.isHidden() or self.nfs_table.mounts() != before:
            table = self.nfs_table   # exactly as tall as its rows: the graphs keep the rest
            height = table.horizontalHeader().height() + sum(table.rowHeight(r) for r in range(table.rowCount()))
            table.setFixedHeight(height + 2 * table.frameWidth())
            table.show()

    def _colour_of(self, role: str, plot: LivePlot) -> str:
        if role == HOST:
            return self.colour
        if role == COMPANION:
            return plot.colours.companion(self.colour)
        return role

    def set_colour(self, colour: str) -> None:
        """The host's colour (it changes when hosts are added: colours follow the sorted names)."""
        self.colour = colour
        self.header.set_colour(colour)
        self._recolour()
        if self.dbload is not None:
            self.dbload.set_colour(colour)

    def _recolour(self) -> None:
        for key, _title, _short, _y, _top, curves in PANEL_PLOTS:
            plot = self.plots.get(key)
            if plot is None:   # not made yet: made in the new colour
                continue
            for curve_key, _name, _buffer, role in curves:
                colour = self._colour_of(role, plot)
                if plot.curve_colour(curve_key) != colour:
                    plot.set_curve_colour(curve_key, colour)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and self.plots:
            for plot in self.plots.values():
                plot.apply_theme()
            self._recolour()     # the second shade leans towards the theme's text colour

    def set_time(self, mode: str) -> None:
        self._time_mode = mode
        for plot in self.plots.values():
            plot.set_time(mode, self.series.t0)

    def show_device(self) -> None:
        """Point the disk curves at the chosen device's buffers."""
        for key, _title, _short, _y, _top, curves in PANEL_PLOTS:
            for curve_key, _name, buffer_key, _colour in curves:
                if buffer_key.startswith("disk.") and key in self.plots:
                    self.plots[key].set_buffer(curve_key, self.series.buffer(buffer_key))
        device = self.series.device or "no disk yet"
        if "util" in self.plots:
            self.plots["util"].set_title(f"Disk busy — %util ({device})", f"%util ({device})")

    def update_devices(self) -> None:
        self.header.set_devices(list(self.series.disks), self.series.device)
        self.show_device()

    def set_markers(self, markers: list[Marker]) -> None:
        strip = [StripMarker(m.x, m.label, m.kind) for m in markers]
        self._strip = strip
        for plot in self.plots.values():
            plot.set_markers(strip)
        self.marker_key.set_markers(strip)

    def update_status(self) -> None:
        self.header.set_status(self.series.status_text(), self.series.state)


class ChartQueue(QObject):
    """Makes the charts of gradual panels one per event-loop pass, whichever panel they belong to: two hosts'
    panels opened together take turns, not two charts a pass."""

    def __init__(self) -> None:
        super().__init__()
        self.panels: list[HostPanel] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._next)

    def add(self, panel: HostPanel) -> None:
        self.panels.append(panel)
        self._timer.start()

    def _next(self) -> None:
        self.panels = [p for p in self.panels if shiboken6.isValid(p) and not p.complete]
        if self.panels:
            self.panels[0].build_next()
        if any(not p.complete for p in self.panels if shiboken6.isValid(p)):
            self._timer.start()


_QUEUE: list[ChartQueue] = []


def chart_queue() -> ChartQueue:
    """The application's one chart queue (made with the first gradual panel)."""
    if not _QUEUE:
        _QUEUE.append(ChartQueue())
    return _QUEUE[0]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
