"""Per-host progress of running tests: phase, a progress bar, time left, status and Cancel.

Fed with the run events of each host (phase_start, progress, phase_end, disconnected, reconnected,
error, done) and with the outcome once the run is stored; it never looks at anything else.
"""
from __future__ import annotations

import time

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from widgets.format import one_line
from widgets.live_plot import MUTED
from widgets.run_data import RunEnd, RunState

CONNECTING, RUNNING, RECONNECTING = RunState.CONNECTING, RunState.RUNNING, RunState.RECONNECTING
DONE, FAILED, CANCELLED = RunState.DONE, RunState.FAILED, RunState.CANCELLED
FINAL = (DONE, FAILED, CANCELLED)
_COLOURS = {FAILED: "#c0392b", CANCELLED: "#8a6d1f", RECONNECTING: "#b7791f", DONE: "#2e7d4f"}


def clock(seconds: float) -> str:
    """m:ss (h:mm:ss past an hour)."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressRow:
    """The widgets of one host's line (they live in RunProgress's grid)."""

    def __init__(self, host: str, expected: float | None) -> None:
        self.host = host
        self.expected = expected
        self.began = time.monotonic()
        self.state = CONNECTING
        self.reason = ""
        self.phase = ""
        self.fraction: float | None = None
        self.eta: float | None = None
        self.before_end: float | None = None
        self.host_label = QLabel(f"<b>{host}</b>")
        self.phase_label = QLabel("—")
        self.phase_label.setObjectName("phaseLabel")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.setMinimumWidth(160)
        self.time_label = QLabel("")
        self.time_label.setObjectName("timeLeftLabel")
        self.status_label = QLabel("")
        self.status_label.setObjectName("statusLabel")
        self.status_label.setMinimumWidth(180)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelHostButton")
        self.cancel_button.setToolTip(f"Stop the test on {host}; its files are removed, the run is stored as "
                                      "cancelled")
        self.widgets: tuple[QWidget, ...] = (self.host_label, self.phase_label, self.bar, self.time_label,
                                             self.status_label, self.cancel_button)
        self.refresh()

    def time_left(self) -> str:
        """The phase's time left (from eta_s) and, when the test said how long it takes, about how long in all."""
        if self.state in FINAL:
            return clock(time.monotonic() - self.began) + " in all" if self.state == DONE else ""
        parts = []
        if self.eta is not None:
            parts.append(f"{clock(self.eta)} left")
        if self.expected:
            overall = self.expected - (time.monotonic() - self.began)
            if overall > 0 and (self.eta is None or overall > self.eta + 1):
                parts.append(f"~{clock(overall)} in all")
        return " · ".join(parts)

    def refresh(self) -> None:
        self.phase_label.setText(self.phase or "—")
        if self.state == DONE:
            self.bar.setRange(0, 1000)
            self.bar.setValue(1000)
        elif self.fraction is None and self.state in (CONNECTING, RUNNING, RECONNECTING):
            self.bar.setRange(0, 0)    # busy indicator until a test says how far it is
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(round((self.fraction or 0.0) * 1000)))
        self.bar.setFormat("%p%" if self.fraction is not None or self.state == DONE else "")
        self.time_label.setText(self.time_left())
        text = {CONNECTING: "connecting…", RUNNING: "running", RECONNECTING: "reconnecting…", DONE: "done",
                CANCELLED: "cancelled", FAILED: "failed"}[self.state]
        if self.reason:
            text = f"{text}: {self.reason}"
        self.status_label.setText(one_line(text, 120))
        self.status_label.setToolTip(self.reason)
        colour = _COLOURS.get(self.state)
        self.status_label.setStyleSheet(f"color: {colour};" if colour else "")
        self.cancel_button.setEnabled(self.state not in FINAL)


class RunProgress(QWidget):
    """One row per host; Cancel per host and Cancel all."""

    cancel_requested = Signal(str)     # host
    cancel_all_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runProgress")
        self.rows: dict[str, ProgressRow] = {}
        self.title = QLabel("")
        self.title.setObjectName("runProgressTitle")
        self.cancel_all_button = QPushButton("Cancel all")
        self.cancel_all_button.setObjectName("cancelAllButton")
        self.cancel_all_button.setToolTip("Stop the test on every host; the runs are stored as cancelled")
        self.cancel_all_button.clicked.connect(lambda _checked=False: self.cancel_all_requested.emit())
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.cancel_all_button)
        self._grid = QGridLayout()
        self._grid.setHorizontalSpacing(10)
        self._grid.setVerticalSpacing(3)
        self._grid.setColumnStretch(2, 1)
        for column, text in enumerate(("Host", "Phase", "Progress", "Time left", "Status")):
            header = QLabel(text)
            header.setStyleSheet(f"color: {MUTED};")
            self._grid.addWidget(header, 0, column)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addLayout(top)
        layout.addLayout(self._grid)
        self._update()

    def clear(self) -> None:
        for row in self.rows.values():
            for widget in row.widgets:
                self._grid.removeWidget(widget)
                widget.deleteLater()
        self.rows.clear()
        self._update()

    def add_host(self, host: str, expected: float | None = None, test: str = "") -> ProgressRow:
        """A host's row, connecting; `expected` = the test's expected seconds (for the overall time left)."""
        if host in self.rows:
            self._grid_remove(host)
        row = ProgressRow(host, expected)
        index = len(self.rows) + 1
        for column, widget in enumerate(row.widgets):
            self._grid.addWidget(widget, index, column, Qt.AlignmentFlag.AlignVCenter)
        row.cancel_button.clicked.connect(lambda _checked=False, h=host: self.cancel_requested.emit(h))
        self.rows[host] = row
        if test:
            self.title.setText(f"<b>Test: {test}</b>")
        self._update()
        return row

    def _grid_remove(self, host: str) -> None:
        row = self.rows.pop(host)
        for widget in row.widgets:
            widget.hide()
            self._grid.removeWidget(widget)
            widget.deleteLater()

    def add_event(self, host: str, event: dict) -> None:
        row = self.rows.get(host)
        if row is None or row.state in FINAL:
            return
        kind = event.get("type")
        if kind in ("started", "start", "reconnected"):
            row.state = RUNNING
        elif kind == "phase_start":
            row.state, row.phase = RUNNING, str(event.get("label") or event.get("phase") or "")
            row.fraction, row.eta = 0.0, None
        elif kind == "progress":
            row.state = RUNNING
            fraction = event.get("fraction")
            row.fraction = min(1.0, max(0.0, float(fraction))) if isinstance(fraction, (int, float)) else None
            eta = event.get("eta_s")
            row.eta = float(eta) if isinstance(eta, (int, float)) else None
        elif kind == "phase_end":
            # a cancelled phase ends too: keep how far it got, to show that instead of 100%
            row.before_end, row.fraction, row.eta = row.fraction, 1.0, None
        elif kind == "disconnected":
            row.state = RECONNECTING
        elif kind == "error":
            row.reason = one_line(str(event.get("message") or "error"))
        elif kind == "done":
            status = str(event.get("status") or DONE)
            row.state = RunState(status) if status in FINAL else FAILED
            row.reason = one_line(str(event.get("error") or row.reason)) if row.state != DONE else ""
        else:
            return
        row.refresh()
        self._update()

    def set_outcome(self, host: str, status: str, reason: str = "", run_id: int | None = None) -> None:
        """The run is over (stored as run_id) or never started (status "failed" with the reason)."""
        row = self.rows.get(host) or self.add_host(host)
        row.state = RunState(status) if status in FINAL else FAILED
        if row.state == DONE:
            row.reason = f"stored as run #{run_id}" if run_id is not None else ""
            row.fraction = 1.0
        else:
            row.reason = one_line(reason or row.reason)
            if row.before_end is not None:
                row.fraction = row.before_end
        row.refresh()
        self._update()

    def set_stored(self, host: str, outcome: RunEnd) -> None:
        """How the run ended, as the engine reports it."""
        self.set_outcome(host, outcome.status, outcome.error, outcome.run_id)

    def set_refused(self, host: str, reason: str) -> None:
        """Nothing ran (host key not accepted, unreachable, bad parameters)."""
        self.set_outcome(host, FAILED, reason)

    def set_cancelling(self, host: str) -> None:
        row = self.rows.get(host)
        if row is not None and row.state not in FINAL:
            row.reason = "cancelling…"
            row.refresh()

    def tick(self) -> None:
        """Count the time left down between events (a timer of the owner calls this once a second)."""
        for row in self.rows.values():
            if row.state not in FINAL:
                if row.eta is not None:
                    row.eta = max(0.0, row.eta - 1.0)
                row.time_label.setText(row.time_left())

    def running(self) -> list[str]:
        return [h for h, row in self.rows.items() if row.state not in FINAL]

    def _update(self) -> None:
        running = self.running()
        self.cancel_all_button.setEnabled(bool(running))
        if self.rows and not running:
            failed = sum(row.state == FAILED for row in self.rows.values())
            cancelled = sum(row.state == CANCELLED for row in self.rows.values())
            end = f" — {failed} failed" if failed else " — cancelled" if cancelled else " — finished"
            self.title.setText(self.title.text().split(" — ")[0] + end)
