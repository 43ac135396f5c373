"""A dns run live: queries answered per second, p50 and p99 latency per second and timeouts per second, one
curve per resolver and pass (the resolver's colour; the cold pass solid, the warm pass dashed), on the host's
own time axis above its telemetry.

DnsSeries (widgets.dns_series, Qt-free) turns each "dns_tick" event into ring-buffer points; the LivePlots
read those buffers on their PlotGroup's frame timer (one setData per curve that changed). Under the title,
one line per resolver in its colour says its newest second: the key of the charts and the figures at once.
"""
from __future__ import annotations

from PySide6.QtGui import QResizeEvent, QTextDocument
from PySide6.QtWidgets import QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from widgets.dns_series import TICK, DnsSeries, key
from widgets.live_plot import MUTED, LivePlot, PlotGroup
from widgets.plot_items import escape
from widgets.resolver_colours import resolver_colours

__all__ = ["TICK", "DnsLivePanel", "DnsSeries"]

PLOT_MIN_HEIGHT = 170
ONE_ROW_PX = 900                # narrower (two hosts side by side at 1280 px): the four charts in two rows
DASHED_PASSES = ("warm",)       # the cached pass: dashed beside the cold one, as in Compare
# (figure, title, short title, y label, smallest y top)
PLOTS = (("qps", "Answered per second", "answered/s", "queries/s", 10.0),
         ("p50", "p50 latency (ms)", "p50 ms", "p50 (ms)", 1.0),
         ("p99", "p99 latency (ms)", "p99 ms", "p99 (ms)", 1.0),
         ("timeouts", "Timeouts per second", "timeouts/s", "per second", 2.0))
LOG_Y = ("p50", "p99")     # a slow resolver's latency is decades above a cached one's: both must read


class ResolverLine(QLabel):
    """● ADDR:PORT  warm: 812 q/s, p50 1.2 ms, p99 9.8 ms, 3 timeouts so far — the words at the end dropped
    (never cut) while the line is too narrow; the whole line is its tooltip."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dnsResolverLine")
        # the figures change every second: their width must never re-layout the charts
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._head = ""
        self._words: list[str] = []
        self.full_line = ""

    def set_line(self, head_html: str, pass_name: str, words: list[str]) -> None:
        self._head = head_html
        self._words = [f"{pass_name}: {words[0]}" if pass_name else words[0], *words[1:]] if words else []
        self._fit()

    def _html(self, count: int) -> str:
        return f"{self._head} <span style='color:{MUTED}'>{escape(', '.join(self._words[:count]))}</span>"

    def _fit(self) -> None:
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setDocumentMargin(0)
        room = self.contentsRect().width() - 2 * self.margin()
        count = len(self._words)
        while count > 1:
            doc.setHtml(self._html(count))
            if doc.idealWidth() <= room:
                break
            count -= 1
        self.full_line = self._html(len(self._words))
        self.setToolTip(self.full_line)
        self.setText(self._html(count))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()


class DnsLivePanel(QWidget):
    """The dns run's four charts and a line per resolver, above a host's telemetry panels."""

    def __init__(self, series: DnsSeries, group: PlotGroup, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dnsLivePanel")
        self.series = series
        self.title_label = QLabel()
        self.title_label.setObjectName("dnsLiveTitle")
        self.lines_box = QVBoxLayout()
        self.lines_box.setSpacing(0)
        self.resolver_labels: dict[str, ResolverLine] = {}
        self.plots: dict[str, LivePlot] = {}
        self.grid = QGridLayout()
        self.grid.setSpacing(4)
        self.columns = 0
        self.colours: dict[str, str] = {}
        for figure, title, short, y_label, min_top in PLOTS:
            # the resolver lines above are the key: the title line keeps its room for the title and the readout
            plot = LivePlot(title, group=group, short_title=short, y_min_top=min_top, legend=False)
            plot.set_y_label(y_label)
            if figure in LOG_Y:
                plot.set_log_y(True)
            plot.setMinimumHeight(PLOT_MIN_HEIGHT)
            self.plots[figure] = plot
        self._place(4)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title_label)
        layout.addLayout(self.lines_box)
        layout.addLayout(self.grid)
        self._known = -1
        self.update_from_series()

    def _place(self, columns: int) -> None:
        """The charts in one row of four, or two rows of two: a chart under ~220 px cuts its axes and title."""
        if columns == self.columns:
            return
        self.columns = columns
        for plot in self.plots.values():
            self.grid.removeWidget(plot)
        for index, plot in enumerate(self.plots.values()):
            self.grid.addWidget(plot, index // columns, index % columns)
        for column in range(4):
            self.grid.setColumnStretch(column, 1 if column < columns else 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place(4 if event.size().width() >= ONE_ROW_PX else 2)

    def colour_of(self, resolver: str) -> str:
        """The resolver's own colour among all the run's resolvers (widgets.resolver_colours), as in Compare and
        the PDF; once given it stays (a tick from an older agent does not name them all)."""
        if resolver not in self.colours:
            names = list(dict.fromkeys([*self.series.listed, *self.series.resolvers, resolver]))
            self.colours = resolver_colours(names, kept=self.colours)
        return self.colours[resolver]

    def update_from_series(self) -> None:
        """New lanes get their curves and resolvers their lines; the lines say each one's newest second."""
        if self._known != self.series.version:
            self._known = self.series.version
            for resolver, pass_name in self.series.lanes:
                for figure, plot in self.plots.items():
                    curve = f"{resolver}|{pass_name}"
                    if curve not in plot.curve_keys() and self.series.has(figure, resolver, pass_name):
                        plot.add_curve(curve, f"{resolver} {pass_name}".strip(), self.colour_of(resolver),
                                       self.series.buffer(key(figure, resolver, pass_name)),
                                       dashed=pass_name in DASHED_PASSES)
            # dnsperf's maximum-throughput seconds carry no latencies and no timeouts: no empty charts for them
            for figure in ("p50", "p99", "timeouts"):
                self.plots[figure].setVisible(bool(self.plots[figure].curve_keys()))
            for resolver in self.series.resolvers:
                if resolver not in self.resolver_labels:
                    label = ResolverLine()
                    self.resolver_labels[resolver] = label
                    self.lines_box.addWidget(label)
        passes = list(dict.fromkeys(pass_name for _resolver, pass_name in self.series.lanes))
        dashes = ", ".join(f"{p} {'╍ dashed' if p in DASHED_PASSES else '━ solid'}" for p in passes if p)
        self.title_label.setText(f"<b>DNS resolvers</b> <span style='color:{MUTED}'>— per second"
                                 f"{'; ' + escape(dashes) if len(passes) > 1 else ''}</span>")
        for resolver, label in self.resolver_labels.items():
            newest = [lane for lane in self.series.lanes if lane[0] == resolver][-1]   # its pass now running
            label.set_line(f"<span style='color:{self.colour_of(resolver)}; font-size:11pt'>●</span> "
                           f"<b>{escape(resolver)}</b>", newest[1], self.series.now_words(newest))

    def set_time(self, mode: str, origin: float | None) -> None:
        for plot in self.plots.values():
            plot.set_time(mode, origin)
