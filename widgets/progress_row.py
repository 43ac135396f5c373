"""One host's line of the run progress: its labels, bar, time left and buttons, and what they say.

A repeated test keeps one line for its group: the bar goes on from run to run and never back.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QWidget

from widgets.format import one_line
from widgets.run_data import RunState
from widgets.run_estimate import BEFORE_END, RunEstimate

CONNECTING, RUNNING, RECONNECTING = RunState.CONNECTING, RunState.RUNNING, RunState.RECONNECTING
DONE, FAILED, CANCELLED = RunState.DONE, RunState.FAILED, RunState.CANCELLED
FINAL = (DONE, FAILED, CANCELLED)
CANCELLING = "cancelling…"
_COLOURS = {FAILED: "#c0392b", CANCELLED: "#8a6d1f", RECONNECTING: "#b7791f", DONE: "#2e7d4f"}
_WORDS = {CONNECTING: "connecting…", RUNNING: "running", RECONNECTING: "reconnecting…", DONE: "done",
          CANCELLED: "cancelled", FAILED: "failed"}
# column widths in px: fixed, so the buttons at the end of a row never move
HOST_W, PHASE_W, BAR_W, TIME_W, STATUS_W = 150, 180, 180, 90, 250
MIN_GROUP = 3          # "until stable" runs at least this many times (the engine's MIN_REPEATS)
MAX_ROWS_SHOWN = 8     # more hosts scroll: the graphs below keep the window's height
HEADERS = ("Host", "Phase", "Progress", "Time left", "Status")


def clock(seconds: float) -> str:
    """m:ss (h:mm:ss past an hour)."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ElidedLabel(QLabel):
    """A label of fixed width that ends its text with … when it does not fit; the full text is its tip."""

    def __init__(self, width: int, text: str = "") -> None:
        super().__init__()
        self.setFixedWidth(width)
        self.full_text = ""
        self.set_full_text(text)

    def set_full_text(self, text: str, tip: str | None = None) -> None:
        self.full_text = text
        shown = self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, self.width() - 2)
        self.setText(shown)
        self.setToolTip(tip if tip is not None else (text if shown != text else ""))


class ProgressRow:
    """The widgets of one host's line (they live in RunProgress's grid)."""

    def __init__(self, host: str, expected: float | None, test: str = "") -> None:
        self.host = host
        self.test = test
        self.expected = expected
        self.estimate = RunEstimate(expected)
        self.state = CONNECTING
        self.reason = ""
        self.note = ""          # what happens before the test connects (its monitor stops first)
        self.phase = ""
        self.live = ""       # the test's last second in words (the dns test's answers and latency)
        self.run_id: int | None = None
        # a repeated test: (this run's index, how many; None while "until stable" decides) and the
        # highest fraction shown so far, so the group's one bar never goes back
        self.group: tuple[int, int | None] | None = None
        self.shown_fraction = 0.0
        self.over = False   # the outcome came: the whole group is over
        self.host_label = ElidedLabel(HOST_W)
        self.host_label.setStyleSheet("font-weight: bold;")
        self.host_label.set_full_text(host)
        self.phase_label = ElidedLabel(PHASE_W, "—")
        self.phase_label.setObjectName("phaseLabel")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.setFixedWidth(BAR_W)
        self.time_label = ElidedLabel(TIME_W)
        self.time_label.setObjectName("timeLeftLabel")
        self.status_label = ElidedLabel(STATUS_W)
        self.status_label.setObjectName("statusLabel")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelHostButton")
        self.cancel_button.setToolTip(f"Stop the test on {host} (asks first); its files are removed, the run is "
                                      "stored as cancelled")
        self.results_button = QPushButton("Results")
        self.results_button.setObjectName("resultsHostButton")
        self.results_button.setToolTip(f"Show the results of {host}'s run")
        self.results_button.hide()   # it takes Cancel's place once the run is done and stored
        self.widgets: tuple[QWidget, ...] = (self.host_label, self.phase_label, self.bar, self.time_label,
                                             self.status_label, self.cancel_button, self.results_button)
        self.refresh()

    @property
    def fraction(self) -> float | None:
        run = self.estimate.fraction()
        if self.group is None:
            return run
        index, of = self.group
        # until stable: at least MIN_GROUP runs; the bar waits below 100 % while more are needed
        total = of if of else max(index, MIN_GROUP)
        part = (index - 1 + (run or 0.0)) / total
        # until stable may add a run after any: only the outcome says the group is over
        if not self.over and (self.state not in FINAL or index < total or of is None):
            part = min(part, BEFORE_END)
        self.shown_fraction = max(self.shown_fraction, part)
        return self.shown_fraction

    def start_repeat(self, index: int, of: int | None) -> None:
        """The next run of the group begins in this row: the bar goes on from where it is."""
        if self.group is not None:   # the run that just ended counts whole
            self.shown_fraction = max(self.shown_fraction, min(self.group[0] / (self.group[1] or max(
                self.group[0], MIN_GROUP)), BEFORE_END))
        self.group = (index, of)
        self.over = False
        self.estimate, self.state, self.reason, self.phase = RunEstimate(self.expected), CONNECTING, "", ""
        self.live = ""
        count = f" of {of}" if of else ""
        self.host_label.set_full_text(f"{self.host} · run {index}{count}", f"{self.host}: run {index}{count}")

    def time_left(self) -> str:
        """What is left ("~" when part of it is a guess); nothing once the run is over."""
        if self.state in FINAL:
            return "—"
        left = self.estimate.seconds_left()
        if left is None:
            return ""
        seconds, guess = left
        if seconds < 1.0:
            return "finishing…"
        return f"{'~' if guess else ''}{clock(seconds)} left"

    def status_text(self) -> str:
        text = _WORDS[self.state]
        if self.state not in FINAL and self.reason == CANCELLING:
            return CANCELLING
        if self.state == CONNECTING and self.note and not self.reason:
            return self.note
        if self.state == RUNNING and self.live and not self.reason:
            return f"{text} · {self.live}"
        if self.state in (DONE, CANCELLED) and self.estimate.ended is not None:
            text = f"{text} in {clock(self.estimate.elapsed)}"
        return f"{text}: {self.reason}" if self.reason else text

    def refresh(self) -> None:
        self.phase_label.set_full_text(self.phase or "—")
        fraction = self.fraction
        if fraction is None and self.state not in FINAL:
            self.bar.setRange(0, 0)    # busy indicator until the test says how far it is
            self.bar.setFormat("")
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int((fraction or 0.0) * 1000))   # truncated: 99.9 % never reads 100 %
            self.bar.setFormat("%p%")
        self.time_label.set_full_text(self.time_left())
        text = one_line(self.status_text(), 200)
        self.status_label.set_full_text(text, text if self.reason or self.live else None)
        colour = _COLOURS.get(self.state)
        self.status_label.setStyleSheet(f"color: {colour};" if colour else "")
        self.cancel_button.setEnabled(self.state not in FINAL)
        stored = self.state == DONE and self.run_id is not None
        self.cancel_button.setVisible(not stored)
        self.results_button.setVisible(stored)


def overall_line(rows: list[ProgressRow]) -> str:
    """The header: the test(s) and every host's state, e.g. "Test: disk — db1 done · db2 cancelled"."""
    if not rows:
        return ""
    tests = list(dict.fromkeys(row.test for row in rows if row.test))
    head = f"Test: {tests[0]}" if len(tests) == 1 else "Tests" if tests else "Test"
    if len(rows) <= 4:
        states = " · ".join(f"{row.host} {_WORDS[row.state].rstrip('…')}" for row in rows)
    else:   # many hosts: how many are in each state, in the order states come
        counts: dict[str, int] = {}
        for row in rows:
            word = _WORDS[row.state].rstrip("…")
            counts[word] = counts.get(word, 0) + 1
        states = f"{len(rows)} hosts: " + " · ".join(f"{count} {word}" for word, count in counts.items())
    return f"{head} — {states}"
