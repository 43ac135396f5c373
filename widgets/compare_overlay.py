"""Telemetry of the compared runs on one chart, aligned on each test's start (t = 0).

The panel only draws: a change of the pickers emits `requested(name, test)` and whoever owns the
store loads the curves and hands them to set_overlays. Each server has its colour from
widgets.host_colours (by its name among the servers compared), so a server is the same colour
whichever telemetry is shown, and the same as in the comparison's other views and the report.
"""
from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from widgets.chart_theme import chart_colours
from widgets.compare_data import ComparisonData, OverlayChoice, SeriesView, row_colours
from widgets.host_colours import host_colour
from widgets.hover_readout import HoverReadout
from widgets.plot_items import BACKGROUND, MUTED, ElapsedAxis, escape, nice_ceiling
from widgets.time_axis import format_elapsed

PERCENT = "%"


class CompareOverlay(QWidget):
    """Pickers (telemetry, test) over one chart with a curve per server."""

    requested = Signal(str, object)     # overlay name ("disk.util"), test ("disk") or None

    def __init__(self, overlays: Sequence[OverlayChoice], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareOverlay")
        self.overlays = tuple(overlays)
        self.metric_picker = QComboBox()
        self.metric_picker.setObjectName("overlayMetric")
        for overlay in self.overlays:
            self.metric_picker.addItem(overlay.title, overlay.name)
        self.test_label = QLabel("Test:")
        self.test_picker = QComboBox()
        self.test_picker.setObjectName("overlayTest")
        self.status = QLabel("")
        self.status.setStyleSheet(f"color: {MUTED};")
        self.plot = pg.PlotWidget(background=BACKGROUND, axisItems={"bottom": ElapsedAxis("bottom")})
        self.plot.setObjectName("overlayPlot")
        self.plot.setFixedHeight(300)
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        item.showGrid(x=False, y=True, alpha=0.25)
        self.plot.setMouseEnabled(x=True, y=False)
        self.start_line = pg.InfiniteLine(pos=0.0, angle=90, movable=False)
        item.addItem(self.start_line, ignoreBounds=True)
        self.colours = chart_colours(self.palette())
        self.curves: dict[int, pg.PlotDataItem] = {}    # run id -> curve
        self.legend: list[tuple[str, str]] = []         # (server label, colour)
        self._title = ""
        self._colours: dict[int, str] = {}               # run id -> the colour of its row
        pickers = QHBoxLayout()
        pickers.addWidget(QLabel("Telemetry:"))
        pickers.addWidget(self.metric_picker)
        pickers.addSpacing(12)
        pickers.addWidget(self.test_label)
        pickers.addWidget(self.test_picker)
        pickers.addSpacing(12)
        pickers.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(pickers)
        layout.addWidget(self.plot)
        # the pointer reads every server's value at that time since its test started, as in Live and Graphs
        self.readout = HoverReadout(self.plot, self._title_html, format_elapsed, max_gap=2.5)
        self.metric_picker.currentIndexChanged.connect(lambda _i: self.request())
        self.test_picker.currentIndexChanged.connect(lambda _i: self.request())
        self._apply_theme()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        themed = event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
        if themed and hasattr(self, "_title"):   # not while __init__ builds the widget
            self._apply_theme()

    def _apply_theme(self) -> None:
        """The chart in the light or dark theme's colours (the widget's palette)."""
        self.colours = colours = chart_colours(self.palette())
        self.plot.setBackground(colours.background)
        item = self.plot.getPlotItem()
        for name in ("left", "bottom"):
            item.getAxis(name).setPen(pg.mkPen(colours.muted))
            item.getAxis(name).setTextPen(pg.mkPen(colours.muted))
        item.setLabel("bottom", "time since the test started (m:ss)", color=colours.muted)
        self.start_line.setPen(pg.mkPen(colours.muted, style=Qt.PenStyle.DashLine))
        self._show_title()

    def choice(self) -> tuple[str, str | None]:
        """The chosen overlay name and test."""
        return str(self.metric_picker.currentData()), self.test_picker.currentData()

    def request(self) -> None:
        name, test = self.choice()
        self.status.setText("Loading…")
        self.requested.emit(name, test)

    def set_comparison(self, comparison: ComparisonData) -> bool:
        """Offer the tests of the compared runs; True when the runs changed (the curves must be reloaded)."""
        tests = list(dict.fromkeys(test for row in comparison.rows for test in row.tests))
        by_server = row_colours(comparison.rows)
        colours = {run_id: by_server[row.label] for row in comparison.rows for run_id in row.run_ids}
        changed = colours != self._colours
        self._colours = colours
        current = self.test_picker.currentData()
        self.test_picker.blockSignals(True)
        self.test_picker.clear()
        for test in tests:
            self.test_picker.addItem(comparison.test_label(test), test)
        self.test_picker.setCurrentIndex(max(tests.index(current), 0) if current in tests else 0)
        self.test_picker.blockSignals(False)
        several = len(tests) > 1
        self.test_label.setVisible(several)
        self.test_picker.setVisible(several)
        if changed:
            self.set_overlays([])
        return changed

    def clear(self) -> None:
        self._colours = {}
        self.set_overlays([])
        self.status.setText("")

    def set_overlays(self, curves: Sequence[SeriesView]) -> None:
        """Draw one curve per server; x: seconds since its test started."""
        plot = self.plot.getPlotItem()
        for curve in self.curves.values():
            plot.removeItem(curve)
        self.curves.clear()
        self.legend = []
        name, _test = self.choice()
        title, unit = next(((o.title, o.unit) for o in self.overlays if o.name == name), (name, ""))
        top = 0.0
        for series in curves:
            colour = self._colours.get(series.run_id) or host_colour(series.label, [s.label for s in curves])
            device = f" ({series.device})" if series.device else ""
            item = pg.PlotDataItem(series.t, series.values, pen=pg.mkPen(colour, width=1.5), name=series.label + device)
            plot.addItem(item)
            self.curves[series.run_id] = item
            self.legend.append((series.label + device, colour))
            top = max([top, *series.values])
            unit = series.unit or unit
        self._title = title
        self._show_title()
        plot.setLabel("left", unit if unit and unit != "1/s" else ("per second" if unit else ""),
                      color=self.colours.muted)
        if curves:
            low = min(min(s.t, default=0.0) for s in curves)
            high = max(max(s.t, default=0.0) for s in curves)
            self.plot.setXRange(min(low, 0.0), max(high, 1.0), padding=0.02)
            # a little room over the top: the highest tick label and a curve at 100 % stay whole
            self.plot.setYRange(0.0, (100.0 if unit == PERCENT else nice_ceiling(top * 1.05)) * 1.04, padding=0)
            self.status.setText("")
        else:
            self.status.setText("No telemetry of this kind was stored for these runs." if self._colours else "")

    def _title_html(self) -> str:
        ink = self.colours.ink
        parts = [f"<span style='color:{ink}'>{escape(self._title)}</span>"] if self._title else []
        parts += [f"<span style='color:{colour}'>━</span>&nbsp;<span style='color:{ink}'>{escape(label)}</span>"
                  for label, colour in self.legend]
        return "&nbsp;&nbsp;&nbsp;".join(parts)

    def _show_title(self) -> None:
        self.plot.getPlotItem().setTitle(self._title_html() or None, size="9pt")

    def legend_labels(self) -> list[str]:
        return [label for label, _colour in self.legend]
