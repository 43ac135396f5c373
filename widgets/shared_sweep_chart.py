"""The sweep curve of a shared-storage test: the total of each step, ordered by streams (clients x threads),
with the knee — where adding clients or threads stopped raising the total — marked on its point and
named above the plot (never on it, so no label covers the curve).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from widgets.chart_theme import chart_colours

KNEE_COLOUR = "#d9483b"


@dataclass(frozen=True)
class SweepPoint:
    label: str          # "2x4": clients x threads
    clients: int
    threads: int
    total: float        # mean total op/s of the step


class SharedSweepChart(QWidget):
    def __init__(self, unit: str = "op/s", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sharedSweepChart")
        colours = chart_colours(self.palette())
        self.caption = QLabel()
        self.caption.setObjectName("sharedSweepCaption")
        self.caption.setWordWrap(True)
        self.plot = pg.PlotWidget(background=colours.background)
        self.plot.showGrid(y=True, alpha=0.25)
        self.plot.setLabel("left", f"total {unit}")
        self.plot.setLabel("bottom", "clients x threads per client")
        self.plot.setMouseEnabled(x=False, y=False)
        self._curve = pg.PlotDataItem([], [], pen=pg.mkPen(colours.ink, width=2), symbol="o", symbolSize=7,
                                      symbolBrush=colours.ink)
        self._knee = pg.ScatterPlotItem([], [], size=15, symbol="o", pen=pg.mkPen(KNEE_COLOUR, width=3),
                                        brush=None)
        self.plot.addItem(self._curve)
        self.plot.addItem(self._knee)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.caption)
        layout.addWidget(self.plot, 1)
        self.points: list[SweepPoint] = []
        self.knee: str | None = None

    def set_sweep(self, points: Sequence[SweepPoint], knee: str | None, knee_text: str) -> None:
        """The steps (any order: shown by streams, as the knee rule reads them) and the knee's label or None."""
        self.points = sorted(points, key=lambda p: (p.clients * p.threads, p.clients))
        self.knee = knee
        xs = list(range(len(self.points)))
        self._curve.setData(xs, [p.total for p in self.points])
        self.plot.getAxis("bottom").setTicks([[(i, p.label) for i, p in enumerate(self.points)]])
        at = [i for i, p in enumerate(self.points) if p.label == knee]
        self._knee.setData(at, [self.points[i].total for i in at])
        self.caption.setText(f"<b>Sweep</b> — {knee_text}" if knee_text else "<b>Sweep</b>")

    def knee_index(self) -> int | None:
        return next((i for i, p in enumerate(self.points) if p.label == self.knee), None)
