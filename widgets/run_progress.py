"""Per-host progress of running tests: phase, a progress bar, time left, status, Cancel (Results once done).

Fed with the run events of each host (plan, phase_start, progress, phase_end, disconnected,
reconnected, error, done) and with the outcome once the run is stored; it never looks at anything
else. Progress and time left come from RunEstimate. Every column has a fixed width, so a row's
Cancel stays where it is while other rows and texts change; Cancel asks before it stops a test.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from widgets.chart_theme import MUTED
from widgets.format import one_line
from widgets.progress_row import (
    BAR_W,
    CANCELLING,
    DONE,
    FAILED,
    FINAL,
    HEADERS,
    HOST_W,
    MAX_ROWS_SHOWN,
    PHASE_W,
    RECONNECTING,
    RUNNING,
    STATUS_W,
    TIME_W,
    ProgressRow,
    overall_line,
)
from widgets.run_data import RunEnd, RunState


def dns_second(event: dict) -> str:
    """ "10.0.0.2:53 cold: 1,234 answered, p50 1.23 ms, p99 40.2 ms, 2 timeouts" from a dns_tick event."""
    lat = event.get("lat_ms") if isinstance(event.get("lat_ms"), dict) else {}
    parts = [f"{int(event.get('answered') or 0):,} answered"]
    parts += [f"{key} {lat[key]:.3g} ms" for key in ("p50", "p99") if isinstance(lat.get(key), (int, float))]
    if event.get("timeouts"):
        parts.append(f"{int(event['timeouts']):,} timeouts")
    return f"{event.get('resolver', '?')} {event.get('pass', '')}: " + ", ".join(parts)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class RunProgress(QWidget):
    """One row per host; Cancel per host and Cancel all (both ask first); Results once a host is done."""

    cancel_requested = Signal(str)     # host (confirmed)
    cancel_all_requested = Signal()    # confirmed
    results_requested = Signal(str, int)   # host, run id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runProgress")
        self.rows: dict[str, ProgressRow] = {}
        self.confirm_box: QMessageBox | None = None
        self.title = QLabel("")
        self.title.setObjectName("runProgressTitle")
        self.title.setStyleSheet("font-weight: bold;")
        self.cancel_all_button = QPushButton("Cancel all")
        self.cancel_all_button.setObjectName("cancelAllButton")
        self.cancel_all_button.setToolTip("Stop the test on every host (asks first); the runs are stored as "
                                          "cancelled")
        self.cancel_all_button.clicked.connect(lambda _checked=False: self._confirm(None))
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.cancel_all_button)
        self.rows_widget = QWidget()
        self._grid = QGridLayout(self.rows_widget)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(10)
        self._grid.setVerticalSpacing(3)
        # every column has a fixed width and the spare width is after the last: Cancel never moves,
        # whether or not the scroll bar shows
        self._grid.setColumnStretch(len(HEADERS) + 1, 1)
        self._grid.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.scroll = QScrollArea()
        self.scroll.setObjectName("runProgressScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.rows_widget)
        # the column titles stay above the rows that scroll; fixed widths keep them over their columns
        titles = QHBoxLayout()
        titles.setContentsMargins(0, 0, 0, 0)
        titles.setSpacing(self._grid.horizontalSpacing())
        for text, width in zip(HEADERS, (HOST_W, PHASE_W, BAR_W, TIME_W, STATUS_W), strict=True):
            header = QLabel(text)
            header.setStyleSheet(f"color: {MUTED};")
            header.setFixedWidth(width)
            titles.addWidget(header)
        titles.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addLayout(top)
        layout.addLayout(titles)
        layout.addWidget(self.scroll)
        layout.addStretch(1)   # spare height goes below the rows: a row never moves down as others come
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._next_row = 0
        self._row_height = 0
        self._update()

    def clear(self) -> None:
        for host in list(self.rows):
            self._grid_remove(host)
        self._next_row = 0
        self._update()

    def add_host(self, host: str, expected: float | None = None, test: str = "") -> ProgressRow:
        """A host's row, connecting; `expected` = the test's upper bound in seconds (used without a plan)."""
        if host in self.rows:
            self._grid_remove(host)
        row = ProgressRow(host, expected, test)
        # a new row goes below the others: the rows above, and their buttons, stay where they are
        for column, widget in enumerate(row.widgets):   # Results shares Cancel's cell: one shows at a time
            self._grid.addWidget(widget, self._next_row, min(column, len(HEADERS)), Qt.AlignmentFlag.AlignVCenter)
        self._next_row += 1
        self._row_height = max(self._row_height, row.bar.sizeHint().height(), row.cancel_button.sizeHint().height())
        row.cancel_button.clicked.connect(lambda _checked=False, h=host: self._confirm(h))
        row.results_button.clicked.connect(lambda _checked=False, r=row: self._results(r))
        self.rows[host] = row
        self._update()
        return row

    def _grid_remove(self, host: str) -> None:
        row = self.rows.pop(host)
        for widget in row.widgets:
            widget.hide()
            self._grid.removeWidget(widget)
            widget.deleteLater()

    def _results(self, row: ProgressRow) -> None:
        if row.run_id is not None:
            self.results_requested.emit(row.host, row.run_id)

    # -- cancel, confirmed -----------------------------------------------------------------------

    def _confirm(self, host: str | None) -> QMessageBox | None:
        """Ask before stopping (one host, or all when host is None); the answer comes back later."""
        hosts = [host] if host is not None else self.running()
        hosts = [h for h in hosts if h in self.rows and self.rows[h].state not in FINAL]
        if not hosts:
            return None
        if self.confirm_box is not None:
            self.confirm_box.close()
        which = hosts[0] if host is not None else ", ".join(hosts)
        tests = sorted({self.rows[h].test for h in hosts if self.rows[h].test})
        what = f"the {tests[0]} test" if len(tests) == 1 else "the test"
        box = QMessageBox(QMessageBox.Icon.Question, "Cancel the test?",
                          f"Stop {what} on {which}?\n\nWhat it measured so far is stored as a cancelled run; "
                          "its files on the host are removed.",
                          QMessageBox.StandardButton.NoButton, self)
        box.setObjectName("confirmCancelBox")
        box.addButton("Stop the test", QMessageBox.ButtonRole.AcceptRole)
        keep = box.addButton("Keep running", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.accepted.connect(lambda: self._confirmed(host, hosts))
        box.finished.connect(lambda _result: self._forget_box(box))
        self.confirm_box = box
        box.open()   # window-modal, no nested event loop
        return box

    def _forget_box(self, box: QMessageBox) -> None:
        if self.confirm_box is box:
            self.confirm_box = None

    def _confirmed(self, host: str | None, hosts: list[str]) -> None:
        for name in hosts:
            self.set_cancelling(name)
        if host is None:
            self.cancel_all_requested.emit()
        else:
            self.cancel_requested.emit(host)

    # -- what happens ----------------------------------------------------------------------------

    def add_event(self, host: str, event: dict) -> None:
        row = self.rows.get(host)
        if row is not None and event.get("type") == "repeat":   # the next run of the group, in the same row
            of = None if event.get("until_stable") else _count(event.get("of"))
            row.start_repeat(_count(event.get("index")) or 1, of)
            row.refresh()
            self._update()
            return
        if row is None or row.state in FINAL:
            return
        kind = event.get("type")
        if kind in ("plan", "phase_start", "progress", "phase_end"):
            row.estimate.add_event(event)
        if kind in ("started", "start", "reconnected", "plan", "progress"):
            row.state = RUNNING
        elif kind == "phase_start":
            row.state, row.phase = RUNNING, str(event.get("label") or event.get("phase") or "")
        elif kind == "dns_tick":   # the resolver's last second beside the phase, in place of a live chart
            row.live = dns_second(event)
        elif kind == "handover":
            row.note = one_line(str(event.get("message") or ""))
        elif kind == "disconnected":
            row.state = RECONNECTING
        elif kind == "error":
            row.reason = one_line(str(event.get("message") or "error"))
        elif kind == "done":
            status = str(event.get("status") or DONE)
            row.state = RunState(status) if status in FINAL else FAILED
            row.estimate.finish(str(row.state))
            row.reason = one_line(str(event.get("error") or row.reason)) if row.state != DONE else ""
        elif kind != "phase_end":
            return
        row.refresh()
        self._update()

    def set_outcome(self, host: str, status: str, reason: str = "", run_id: int | None = None) -> None:
        """The run is over (stored as run_id) or never started (status "failed" with the reason)."""
        row = self.rows.get(host) or self.add_host(host)
        row.over = True
        row.state = RunState(status) if status in FINAL else FAILED
        row.estimate.finish(str(row.state))
        row.run_id = run_id
        if row.state == DONE:
            row.reason = f"stored as run #{run_id}" if run_id is not None else ""
        else:
            row.reason = one_line(reason or row.reason)
            if row.reason == CANCELLING:
                row.reason = ""
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
            row.reason = CANCELLING
            row.refresh()

    def set_note(self, host: str, note: str) -> None:
        """A word on a host that is not running yet (e.g. waiting for its monitor to hand over)."""
        row = self.rows.get(host)
        if row is not None and row.state not in FINAL:
            row.reason = note
            row.refresh()

    def tick(self) -> None:
        """Count the time left down between events (a timer of the owner calls this once a second)."""
        for row in self.rows.values():
            if row.state not in FINAL:
                row.refresh()

    def running(self) -> list[str]:
        return [h for h, row in self.rows.items() if row.state not in FINAL]

    def _fit_height(self) -> None:
        """As tall as the rows, up to MAX_ROWS_SHOWN of them; past that the rows scroll."""
        grid = self._grid
        rows = max(1, min(len(self.rows), MAX_ROWS_SHOWN))
        line = max(self.rows_widget.fontMetrics().height() + 8, self._row_height)
        height = rows * line + (rows - 1) * grid.verticalSpacing() + 2
        if len(self.rows) <= MAX_ROWS_SHOWN:   # all rows shown: as tall as the laid-out rows (styled buttons too)
            grid.activate()
            height = max(height, self.rows_widget.sizeHint().height() + 2)
        self.scroll.setFixedHeight(height)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._fit_height()   # rows added while hidden were measured before the style sheet applied to them

    def _update(self) -> None:
        self._fit_height()
        self.cancel_all_button.setEnabled(bool(self.running()))
        self.title.setText(overall_line(list(self.rows.values())))
