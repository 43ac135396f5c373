"""The run dialog's Repeat field: run the test N times on each host, or until its figure is stable."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QSpinBox, QWidget

MAX_COUNT = 100
STABLE_HINT = ("Run again until the test's headline figure is stable: the relative standard error of the mean of "
               "its runs below the target (at least 3 runs, at most the count)")


class RepeatField(QWidget):
    """A count and an "until stable" box; with the box ticked the count is the most runs."""

    def __init__(self, stable_hint: str = STABLE_HINT, parent: QWidget | None = None) -> None:
        """stable_hint: what "until stable" means, for its tooltip (the application knows the rule)."""
        super().__init__(parent)
        self.count_spin = QSpinBox()
        self.count_spin.setObjectName("repeatSpin")
        self.count_spin.setRange(1, MAX_COUNT)
        self.count_spin.setValue(1)
        self.count_spin.setSuffix(" run")
        self.count_spin.setToolTip("How many times the test runs on each host; the runs of a host form a group "
                                   "that comparisons show as its median with its spread")
        self.stable_box = QCheckBox("until stable")
        self.stable_box.setObjectName("repeatUntilStable")
        self.stable_box.setToolTip(stable_hint)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.count_spin)
        layout.addWidget(self.stable_box)
        layout.addStretch(1)
        self.count_spin.valueChanged.connect(lambda _v: self._sync())
        self.stable_box.toggled.connect(lambda _c: self._sync())
        self._sync()

    def count(self) -> int:
        return self.count_spin.value()

    def until_stable(self) -> bool:
        return self.stable_box.isChecked()

    def _sync(self) -> None:
        stable = self.stable_box.isChecked()
        if stable and self.count_spin.value() < 3:
            self.count_spin.setValue(10)   # "until stable" judges by three runs at least; ten at most by default
        self.count_spin.setMinimum(3 if stable else 1)
        self.count_spin.setPrefix("at most " if stable else "")
        self.count_spin.setSuffix(" run" if self.count_spin.value() == 1 else " runs")
