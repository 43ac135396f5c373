"""The overlay view of the live dashboard: the same metric of every host in one graph, one colour per host.

Each graph has a metric picker; the host strip above is the legend (colour, name, status, disk).
The phases of all hosts share one marker strip per graph: a moment several hosts share shows once.
"""
from __future__ import annotations

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QComboBox, QGridLayout, QVBoxLayout, QWidget

from widgets.host_colours import HOST_PALETTE, host_colours
from widgets.host_panel import UTIL_HINT, UTIL_SHORT, HostHeader
from widgets.host_series import MERGE_S, METRICS, METRICS_BY_KEY, HostSeries, Marker
from widgets.live_plot import LivePlot, PlotGroup
from widgets.marker_key import MarkerKey
from widgets.marker_strip import StripMarker
from widgets.time_axis import usable_origin

OVERLAY_DEFAULTS = ("disk.util", "disk.iops", "disk.MB/s", "disk.aqu-sz", "cpu.busy", "load.1")
SAME_START_S = 60.0        # overlaid runs that started further apart than this share no clock axis


def overlay_markers(by_host: dict[str, list[Marker]], colours: dict[str, str]) -> list[StripMarker]:
    """Every host's markers on one time axis: the same moment of several hosts is shown once."""
    merged: list[StripMarker] = []
    for host, markers in by_host.items():
        for marker in markers:
            twin = next((i for i, m in enumerate(merged) if m.label == marker.label and m.kind == marker.kind
                         and abs(m.x - marker.x) < MERGE_S and host not in m.hosts), None)
            if twin is None:
                merged.append(StripMarker(marker.x, marker.label, marker.kind, colours.get(host), (host,)))
            else:
                other = merged[twin]   # shared by several hosts: the ink colour, not one host's
                merged[twin] = StripMarker(min(other.x, marker.x), other.label, other.kind, None, (*other.hosts, host))
    return sorted(merged, key=lambda m: m.x)


class OverlayView(QWidget):
    """The same metrics of every host in one plot each; a metric picker above every plot."""

    def __init__(self, group: PlotGroup, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("overlayView")
        self.group = group
        self.series: dict[str, HostSeries] = {}
        self.colours: dict[str, str] = {}          # as drawn here
        self._grid_colours: dict[str, str] = {}    # every host's own colour (Grid, Compare, the report)
        self._shown: list[str] | None = None       # the hosts shown when only some are (set_shown)
        # curves are made only while the overlay is the view shown, and only for hosts not hidden: six
        # curves a host, for a hundred hosts, cost a second of the GUI thread when only 8 are ever drawn
        self._live = False
        self._hidden: set[str] = set()
        self._drawn: set[str] = set()               # hosts that have their curves
        self.headers: dict[str, HostHeader] = {}
        self._markers: dict[str, list[Marker]] = {}
        # the six plots are made when first shown or asked for: a window opens without paying for charts
        # nobody looks at yet (each is a pyqtgraph scene, a tenth of a second on a loaded machine)
        self._plots: list[LivePlot] = []
        self._pickers: list[QComboBox] = []
        self._metrics = list(OVERLAY_DEFAULTS)     # each plot's metric, also before the plots exist
        self._time: tuple[str, float | None] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self._strip = QGridLayout()
        self._strip.setSpacing(0)
        layout.addLayout(self._strip)
        self._grid = QGridLayout()
        self._grid.setSpacing(4)
        layout.addLayout(self._grid, 1)
        self.marker_key = MarkerKey()   # what the numbered marker tags stand for
        layout.addWidget(self.marker_key)

    @property
    def plots(self) -> list[LivePlot]:
        self._build()
        return self._plots

    @property
    def pickers(self) -> list[QComboBox]:
        self._build()
        return self._pickers

    def showEvent(self, event: QShowEvent) -> None:
        self._build()
        super().showEvent(event)

    def _build(self) -> None:
        if self._plots:
            return
        for index, key in enumerate(self._metrics):
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
            plot = LivePlot("", group=self.group, legend=False)
            plot.setMinimumHeight(120)
            box.addWidget(picker)
            box.addWidget(plot, 1)
            picker.currentIndexChanged.connect(lambda _i, n=index: self.set_metric(n, self._pickers[n].currentData()))
            self._plots.append(plot)
            self._pickers.append(picker)
            self._grid.addWidget(cell, index // 2, index % 2)
            if self.isVisible():   # made while shown (showEvent): the layout would show it only later
                cell.show()
        for row in range(3):
            self._grid.setRowStretch(row, 1)
        drawn, self._drawn = self._drawn, set()
        for index in range(len(self._plots)):
            self._apply_metric(index)
        for host in drawn:
            self._draw(host)
        if self._time is not None:
            for plot in self._plots:
                plot.set_time(*self._time)
        self._show_markers()

    def metric_key(self, index: int) -> str:
        return self._metrics[index]

    def set_metric(self, index: int, key: str) -> None:
        self._metrics[index] = key
        if not self._pickers:
            return   # the plot shows it when it is made
        if self._pickers[index].currentData() != key:
            self._pickers[index].setCurrentIndex(self._pickers[index].findData(key))  # comes back here
            return
        self._apply_metric(index)

    def _apply_metric(self, index: int) -> None:
        metric = METRICS_BY_KEY[self.metric_key(index)]
        plot = self._plots[index]
        plot.set_y_policy(metric.y_range, metric.min_top)
        plot.set_y_label(metric.axis)
        for host in self._drawn:
            plot.set_buffer(host, self.series[host].buffer(metric.key))
        hint = metric.key == "disk.util"
        plot.set_title(UTIL_SHORT if hint else "", "%util: not saturation" if hint else "")
        plot.setToolTip(UTIL_HINT if hint else metric.label)

    def add_host(self, series: HostSeries, colour: str) -> HostHeader:
        self.series[series.name] = series
        self.colours[series.name] = self._grid_colours[series.name] = colour
        if self._live:
            self._draw(series.name)
        header = HostHeader(series.name, colour)
        count = len(self.headers)
        self._strip.addWidget(header, count // 2, count % 2)
        header.show()
        self.headers[series.name] = header
        return header

    def _draw(self, host: str) -> None:
        """The host's curves, from its buffers: the whole history so far."""
        if host in self._drawn or host in self._hidden:
            return
        self._drawn.add(host)
        series = self.series[host]
        for index, plot in enumerate(self._plots):
            plot.add_curve(host, host, self.colours[host], series.buffer(self.metric_key(index)), width=1.0)

    def set_live(self, live: bool) -> None:
        """The overlay is the view shown (True): hosts shown get their curves."""
        self._live = live
        if live:
            self._build()
            for host in self.series:
                self._draw(host)

    def set_host_visible(self, host: str, visible: bool) -> None:
        """Show or hide a host's curves and legend entry (many hosts: only the worst are shown)."""
        self.headers[host].setVisible(visible)
        if visible:
            self._hidden.discard(host)
        else:
            self._hidden.add(host)
        if host in self._drawn:
            for plot in self._plots:
                plot.set_curve_visible(host, visible)
        elif visible and self._live:
            self._draw(host)

    def clear_hosts(self) -> None:
        for name in list(self.series):
            if name in self._drawn:
                for plot in self._plots:
                    plot.remove_curve(name)
            header = self.headers.pop(name)
            self._strip.removeWidget(header)
            header.setParent(None)
            header.deleteLater()
        self.series.clear()
        self.colours.clear()
        self._grid_colours.clear()
        self._shown = None
        self._hidden.clear()
        self._drawn.clear()
        self._markers.clear()
        for plot in self._plots:
            plot.clear_markers()

    def legend_names(self) -> list[str]:
        return list(self.headers)

    def set_colours(self, colours: dict[str, str]) -> None:
        """Every host's own colour; the overlay draws with it unless the hosts shown would share colours."""
        self._grid_colours.update({h: c for h, c in colours.items() if h in self.series})
        self._recolour()

    def set_shown(self, hosts: list[str] | None) -> None:
        """Only these hosts are shown (None: all). When the hosts outnumber the palette, own colours repeat:
        the hosts shown are then coloured by their position among themselves, so no two look alike."""
        self._shown = list(hosts) if hosts is not None else None
        self._recolour()

    def own_colours(self) -> bool:
        """True when the overlay draws every host in its own (Grid) colour."""
        return self._shown is None or len(self.series) <= len(HOST_PALETTE)

    def _recolour(self) -> None:
        colours = dict(self._grid_colours)
        if not self.own_colours():
            colours.update(host_colours([h for h in self._shown or [] if h in self.series]))
        for host, colour in colours.items():
            if host in self.series and self.colours.get(host) != colour:
                self.colours[host] = colour
                self.headers[host].set_colour(colour)
                if host in self._drawn:
                    for plot in self._plots:
                        plot.set_curve_colour(host, colour)
        self._show_markers()

    def set_time(self, mode: str) -> None:
        """One axis for every host: the clock from the earliest start, unless the runs started far apart."""
        starts = [s for s in (usable_origin(series.t0) for series in self.series.values()) if s is not None]
        together = bool(starts) and max(starts) - min(starts) <= SAME_START_S
        self._time = (mode, min(starts) if together else None)
        for plot in self._plots:
            plot.set_time(*self._time)

    def update_device(self, host: str) -> None:
        series = self.series[host]
        if host in self._drawn:
            for index, plot in enumerate(self._plots):
                plot.set_buffer(host, series.buffer(self.metric_key(index)))
        self.headers[host].set_devices(list(series.disks), series.device)

    def set_markers(self, host: str, markers: list[Marker]) -> None:
        self._markers[host] = list(markers)
        self._show_markers()

    def _show_markers(self) -> None:
        strip = overlay_markers(self._markers, self.colours)
        for plot in self._plots:
            plot.set_markers(strip)
        self.marker_key.set_markers(strip)
