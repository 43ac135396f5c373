"""A stored run's graphs: all at once, or replayed at 1x-60x with play/pause and a position slider.

Loading (series and events from the store) runs in a worker; the replay itself is a QTimer that
feeds the dashboard every sample whose time has come, so the graphs grow as they did live, with the
phase markers appearing at their times.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from app.errors import AppError
from app.workbench import Workbench
from remote.telemetry.sample import TelemetrySample, series_to_samples
from storage.errors import NotFound
from storage.records import RunRecord
from widgets.dashboard import Dashboard
from widgets.format import local_time
from widgets.host_series import HostSeries
from widgets.live_plot import MUTED, format_elapsed

SPEEDS = (1, 2, 5, 10, 30, 60)
TICK_MS = 20
SLIDER_STEPS = 1000
TITLE_MARGIN = 4   # the bar's own margin: the title's text starts where the Play button does


@dataclass(frozen=True)
class StoredRun:
    """What a replay needs, loaded in a worker: plain data."""

    run: RunRecord
    t0: float                       # host seconds at the series' t = 0
    samples: list[TelemetrySample]  # t in host seconds
    events: list[dict]
    disk: str | None = None         # the disk holding the run's test directory (its facts say)

    @property
    def label(self) -> str:
        return f"{self.run.host_name} #{self.run.id}"

    @property
    def duration(self) -> float:
        return self.samples[-1].t - self.t0 if self.samples else 0.0


def load_stored_run(bench: Workbench, run_id: int) -> StoredRun:
    """Runs in a worker: the run's series back as samples, and its events."""
    detail = bench.find_run(run_id)
    if detail is None:
        raise NotFound(f"no run with id {run_id}")
    series = bench.run_series(run_id)
    events = bench.run_events(run_id)
    if not series:
        raise AppError(f"run #{run_id} ({detail.run.test} on {detail.run.host_name}) has no telemetry to show")
    # the engine records where the series' t = 0 lies in host time; without it, events cannot be placed
    t0s = [e.get("t0") for e in events if e.get("type") == "telemetry" and isinstance(e.get("t0"), (int, float))]
    t0 = float(t0s[-1]) if t0s else 0.0
    if not t0s:
        events = [e for e in events if e.get("type") not in ("phase_start", "phase_end", "marker")]
    disk = HostSeries.test_disk({"type": "facts", "facts": detail.facts}) if isinstance(detail.facts, dict) else None
    return StoredRun(detail.run, t0, series_to_samples(series, t0), events, disk)


def load_stored_runs(bench: Workbench, run_ids: list[int]) -> list[StoredRun]:
    return [load_stored_run(bench, run_id) for run_id in run_ids]


class ReplayClock(QObject):
    """Feeds stored runs to a Dashboard by their timestamps, `speed` seconds of run per second."""

    position_changed = Signal(float)
    playing_changed = Signal(bool)
    finished = Signal()

    def __init__(self, dashboard: Dashboard, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.dashboard = dashboard
        self.runs: list[StoredRun] = []
        self.speed = 1.0
        self.position = 0.0
        self._next_sample: list[int] = []
        self._next_event: list[int] = []
        self._base: tuple[float, float] = (0.0, 0.0)    # (position, monotonic time) when play started
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)

    @property
    def duration(self) -> float:
        return max((run.duration for run in self.runs), default=0.0)

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def load(self, runs: list[StoredRun]) -> None:
        self.pause()
        self.runs = list(runs)
        self._restart()

    def _restart(self) -> None:
        self.dashboard.clear()
        for run in self.runs:
            self.dashboard.add_host(run.label, run.t0, run.run.host_name)
            if run.disk:
                self.dashboard.prefer_device(run.label, run.disk)
        self._next_sample = [0] * len(self.runs)
        self._next_event = [0] * len(self.runs)
        self.position = 0.0
        self._feed(0.0)

    def play(self) -> None:
        if not self.runs:
            return
        if self.position >= self.duration:
            self._restart()
        self._base = (self.position, time.monotonic())
        self._timer.start()
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.playing_changed.emit(False)

    def set_speed(self, speed: float) -> None:
        self.speed = float(speed)
        self._base = (self.position, time.monotonic())

    def seek(self, position: float) -> None:
        """Jump there: forward feeds what lies between, backward starts the graphs again."""
        position = min(max(0.0, position), self.duration)
        if position < self.position:
            self._restart()
        self._feed(position)
        self._base = (self.position, time.monotonic())

    def show_all(self) -> None:
        """The whole run at once (Open graphs)."""
        self.pause()
        self.seek(self.duration)

    def _tick(self) -> None:
        base_position, base_time = self._base
        self._feed(base_position + (time.monotonic() - base_time) * self.speed)
        if self.position >= self.duration:
            self.pause()
            self.finished.emit()

    def _feed(self, position: float) -> None:
        position = min(position, self.duration)
        for index, run in enumerate(self.runs):
            start = self._next_sample[index]
            end = start
            limit = run.t0 + position + 1e-6
            while end < len(run.samples) and run.samples[end].t <= limit:
                end += 1
            if end > start:
                self.dashboard.add_samples(run.label, run.samples[start:end])
                self._next_sample[index] = end
            events = self._next_event[index]
            while events < len(run.events) and float(run.events[events].get("t") or 0.0) <= limit:
                self.dashboard.add_event(run.label, run.events[events])
                events += 1
            self._next_event[index] = events
        self.position = position
        self.position_changed.emit(position)


class ReplayView(QWidget):
    """The Graphs tab: a stored run's dashboard with play/pause, speed, position and "Whole run"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("replayView")
        # a stored run's charts are made one per pass: the window answers while they appear
        self.dashboard = Dashboard(window=None, gradual=True)
        self.clock = ReplayClock(self.dashboard, self)
        self.title = QLabel("Open a stored run from the Runs tab: “Open graphs” or “Replay”.")
        self.title.setObjectName("graphsTitle")
        self.title.setStyleSheet(f"color: {MUTED};")
        # the same left edge as the buttons under it and the other tabs' first lines (not the pane's border)
        self.title.setContentsMargins(TITLE_MARGIN, 4, TITLE_MARGIN, 0)
        self.play_button = QPushButton("Play")
        self.play_button.setObjectName("playButton")
        self.play_button.clicked.connect(self.toggle)
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("speedCombo")
        for speed in SPEEDS:
            self.speed_combo.addItem(f"{speed}x", speed)
        self.speed_combo.setToolTip("Seconds of the run replayed per second")
        self.speed_combo.currentIndexChanged.connect(lambda _i: self.clock.set_speed(self.speed_combo.currentData()))
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("positionSlider")
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.sliderReleased.connect(self._slider_moved)
        self.slider.actionTriggered.connect(lambda _action: QTimer.singleShot(0, self._slider_stepped))
        self.time_label = QLabel("0:00 / 0:00")
        self.all_button = QPushButton("Whole run")
        self.all_button.setToolTip("Show every sample of the run at once")
        self.all_button.clicked.connect(self.clock.show_all)
        bar = QHBoxLayout()
        bar.setContentsMargins(TITLE_MARGIN, 4, TITLE_MARGIN, 0)
        for widget in (self.play_button, self.speed_combo):
            bar.addWidget(widget)
        bar.addWidget(self.slider, 1)
        bar.addWidget(self.time_label)
        bar.addWidget(self.all_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(bar)
        layout.addWidget(self.dashboard, 1)
        self.clock.position_changed.connect(self._show_position)
        self.clock.playing_changed.connect(lambda playing: self.play_button.setText("Pause" if playing else "Play"))
        self._set_enabled(False)

    def open_runs(self, runs: list[StoredRun], replay: bool = False, speed: float | None = None) -> None:
        """Show these runs: whole at once, or replayed from the start."""
        self.clock.load(runs)
        if speed is not None:
            self.speed_combo.setCurrentIndex(max(0, self.speed_combo.findData(int(speed))))
        first = runs[0].run if runs else None
        if first is not None:
            more = f" and {len(runs) - 1} more" if len(runs) > 1 else ""
            self.title.setText(f"<b>{first.test}</b> on <b>{first.host_name}</b> — run #{first.id}, "
                               f"{local_time(first.started_at)}, {first.status}{more}")
        self._set_enabled(bool(runs))
        if replay:
            self.dashboard.set_window(300.0)
            self.clock.play()
        else:
            self.dashboard.set_window(None)
            self.clock.show_all()

    def toggle(self) -> None:
        if self.clock.playing:
            self.clock.pause()
        else:
            self.clock.play()

    def stop(self) -> None:
        self.clock.pause()

    def _set_enabled(self, enabled: bool) -> None:
        for widget in (self.play_button, self.speed_combo, self.slider, self.all_button):
            widget.setEnabled(enabled)

    def _show_position(self, position: float) -> None:
        duration = self.clock.duration
        self.time_label.setText(f"{format_elapsed(position)} / {format_elapsed(duration)}")
        if not self.slider.isSliderDown():
            self.slider.blockSignals(True)
            self.slider.setValue(int(SLIDER_STEPS * position / duration) if duration else 0)
            self.slider.blockSignals(False)

    def _slider_moved(self) -> None:
        self.clock.seek(self.clock.duration * self.slider.value() / SLIDER_STEPS)

    def _slider_stepped(self) -> None:
        if not self.slider.isSliderDown():
            self._slider_moved()
