"""A stored mail storm over time: messages accepted per second, and the MTA's queue depth as it was polled.

app reads both from the results' metadata (MailSeries); this only draws them.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QHBoxLayout, QWidget

from widgets.chart_theme import chart_colours
from widgets.hover_readout import HoverReadout
from widgets.plot_items import MUTED, ThousandsAxis, escape, small_plot
from widgets.results_data import MailSeries

ACCEPTS = "#2f6db5"
QUEUE = "#d9822b"
HEIGHT_PX = 200


def _plot(title: str, x_label: str) -> pg.PlotWidget:
    plot = small_plot(title, HEIGHT_PX, {"left": ThousandsAxis("left")})
    plot.getPlotItem().setLabel("bottom", x_label, color=MUTED)
    return plot


class MailCharts(QWidget):
    """Accepts per second and queue depth of one stored mail storm; hidden for other runs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mailCharts")
        self.accepts_plot = _plot("Messages accepted per second", "seconds since the first attempt")
        self.accepts_curve = self.accepts_plot.plot([], [], stepMode="center", fillLevel=0, name="accepted/s",
                                                    brush=pg.mkBrush(47, 109, 181, 60), pen=pg.mkPen(ACCEPTS, width=2))
        self.queue_plot = _plot("Queue depth (messages, as polled)", "seconds since the storm started")
        self.queue_curve = self.queue_plot.plot([], [], pen=pg.mkPen(QUEUE, width=2), symbol="o", symbolSize=6,
                                                name="in queue",
                                                symbolBrush=QUEUE, symbolPen=None)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.accepts_plot)
        layout.addWidget(self.queue_plot)
        self.setVisible(False)
        self._titles = {self.accepts_plot: ("Messages accepted per second", "seconds since the first attempt"),
                        self.queue_plot: ("Queue depth (messages, as polled)", "seconds since the storm started")}
        self._apply_theme()
        # hover: the second and the value under the pointer, in the title line
        self.readouts = [HoverReadout(plot, lambda title=title: escape(title), lambda x: f"{x:.0f} s")
                         for plot, (title, _x_label) in self._titles.items()]

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        themed = event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        if themed and hasattr(self, "_titles"):   # not while __init__ builds the widget
            self._apply_theme()

    def _apply_theme(self) -> None:
        """Background, axes and titles in the light or dark theme's colours (the widget's palette)."""
        colours = chart_colours(self.palette())
        for plot, (title, x_label) in self._titles.items():
            plot.setBackground(colours.background)
            item = plot.getPlotItem()
            for name in ("left", "bottom"):
                item.getAxis(name).setPen(pg.mkPen(colours.muted))
                item.getAxis(name).setTextPen(pg.mkPen(colours.muted))
            plot.setTitle(f"<span style='color:{colours.ink}; font-size:9pt'>{escape(title)}</span>")
            item.setLabel("bottom", x_label, color=colours.muted)

    def set_series(self, series: MailSeries | None) -> None:
        series = series or MailSeries()
        seconds, accepts, polled_at, depths = series.seconds, series.accepts, series.polled_at, series.depths
        self.setVisible(bool(accepts))
        # step mode draws each second as a flat bar from t to t + 1: one more edge than values
        self.accepts_curve.setData(seconds + [float(len(accepts))] if accepts else [], accepts)
        self.queue_curve.setData(polled_at, depths)
        self.queue_plot.setVisible(bool(depths))
        if accepts:
            self.accepts_plot.setXRange(0, len(accepts), padding=0.02)
            self.accepts_plot.setYRange(0, max(accepts) * 1.1 or 1.0, padding=0)
        if depths:
            self.queue_plot.setXRange(0, max(polled_at) or 1.0, padding=0.05)
            self.queue_plot.setYRange(0, max(depths) * 1.1 or 1.0, padding=0)

    def curves(self) -> tuple[tuple[list[float], list[float]], tuple[list[float], list[float]]]:
        """What is drawn: (accepts x, y), (queue x, y)."""
        ax, ay = self.accepts_curve.getData()
        qx, qy = self.queue_curve.getData()
        return (([] if ax is None else list(ax), [] if ay is None else list(ay)),
                ([] if qx is None else list(qx), [] if qy is None else list(qy)))
