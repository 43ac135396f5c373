"""The key to a chart's marker tags: "Markers: 1 Write file · 2 Rand read 4 K · …" under the charts.

Where ticks are too close for names, a tag shows the markers' numbers in the run ("3", "4–6"); this line
says what each number is, without hovering. It wraps (never cut) and is as tall as its lines.
"""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from widgets.marker_strip import StripMarker, label_forms
from widgets.plot_items import MUTED

SEPARATOR = "  ·  "


def key_text(markers: Sequence[StripMarker]) -> str:
    """Each marker's number as its tags count (the run's order, markers.x) and its short name."""
    ordered = sorted(markers, key=lambda m: m.x)
    names = [f"{number} {label_forms(m.label)[:2][-1]}" for number, m in enumerate(ordered, start=1)]
    return "Markers: " + SEPARATOR.join(names)


class MarkerKey(QLabel):
    """One wrapped line of numbered marker names; hidden while a chart has fewer than two markers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("markerKey")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setStyleSheet(f"color: {MUTED}; font-size: 8pt;")
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
        self.setToolTip("The numbers the marker tags show where the names do not fit")
        self.hide()

    def set_markers(self, markers: Sequence[StripMarker]) -> None:
        if len(markers) < 2:
            self.setText("")
            self.hide()
            return
        text = key_text(markers)
        if text != self.text():
            self.setText(text)
            self.setToolTip("\n".join(f"{n}. {m.label}" for n, m in
                                      enumerate(sorted(markers, key=lambda m: m.x), start=1)))
            self._fit_height()
        self.show()

    # wrapped, but not height-for-width: such a label would stop a scroll area from fitting the charts
    # into the window; its height follows its width here instead
    def hasHeightForWidth(self) -> bool:
        return False

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        if self.width() <= 0:
            return
        height = max(self.heightForWidth(self.width()), self.fontMetrics().height())
        if height != self.minimumHeight():
            self.setMinimumHeight(height)
