"""The dashboard's bar and its views: Grid, Overlay or Overview, the span shown ("Last 5 minutes" …), Follow
newest, and how the time axis reads. Part of widgets.dashboard.Dashboard."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QButtonGroup, QCheckBox, QComboBox, QHBoxLayout, QLabel, QToolButton

from widgets.overview_hook import MODE_OVERVIEW
from widgets.time_axis import CLOCK, ELAPSED

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QScrollArea, QStackedWidget

    from widgets.host_panel import Caption
    from widgets.host_series import HostSeries
    from widgets.lazy_panels import SlotFiller
    from widgets.overlay_view import OverlayView
    from widgets.overview_hook import OverviewHook
    from widgets.plot_group import PlotGroup

MODE_GRID = "grid"
MODE_OVERLAY = "overlay"
WINDOWS: tuple[tuple[str, float | None], ...] = (("Last minute", 60.0), ("Last 5 minutes", 300.0),
                                                 ("Last 15 minutes", 900.0), ("Last hour", 3600.0),
                                                 ("Whole run", None))
TIME_MODES = (("Clock", CLOCK, "The host's wall clock, HH:MM:SS"),
              ("Since start", ELAPSED, "Time since the run started, m:ss (h:mm:ss past an hour)"))


class DashboardViews:
    """The bar and the switching between views of a Dashboard (a mixin: the dashboard makes the rest)."""

    grid_group: PlotGroup
    overlay_group: PlotGroup
    series: dict[str, HostSeries]
    stack: QStackedWidget
    empty_label: QLabel
    grid_scroll: QScrollArea
    overlay: OverlayView
    overview: object
    overview_hook: OverviewHook
    util_note: Caption
    filler: SlotFiller
    mode_changed: SignalInstance
    _mode: str

    if TYPE_CHECKING:   # the dashboard's own: never defined here, or it would hide that one
        def set_time_mode(self, mode: str) -> None: ...

    def _make_bar(self, window: float | None) -> None:
        self.bar = QHBoxLayout()
        self.bar.setContentsMargins(4, 2, 4, 2)
        self.grid_button = self._mode_button("Grid", "One panel of graphs per host", MODE_GRID)
        self.overlay_button = self._mode_button("Overlay", "The same metric of every host in one graph, one "
                                                "colour per host", MODE_OVERLAY)
        self.overview_button = self._mode_button("Overview", "Every host in one row with sparklines, the worst "
                                                 "on top; click a host for its graphs", MODE_OVERVIEW)
        self._modes = QButtonGroup(self)  # type: ignore[arg-type]
        self._modes.setExclusive(True)
        for button in (self.grid_button, self.overlay_button, self.overview_button):
            self._modes.addButton(button)
            self.bar.addWidget(button)
        self.window_combo = QComboBox()
        self.window_combo.setObjectName("windowCombo")
        for text, seconds in WINDOWS:
            self.window_combo.addItem(text, seconds)
        self.window_combo.setCurrentIndex(next(i for i, (_t, s) in enumerate(WINDOWS) if s == window))
        self.window_combo.currentIndexChanged.connect(lambda _i: self.set_window(self.window_combo.currentData()))
        self.follow_box = QCheckBox("Follow newest")
        self.follow_box.setToolTip("Keep the newest samples in view. Dragging a graph or zooming it (Ctrl+wheel) "
                                   "stops following, and the wheel then zooms that graph; tick this to come back.")
        self.follow_box.setChecked(True)
        self.follow_box.toggled.connect(self._follow_toggled)
        for group in (self.grid_group, self.overlay_group):
            group.follow_changed.connect(self._group_follow_changed)
        self.bar.addSpacing(12)
        self.bar.addWidget(QLabel("Show:"))
        self.bar.addWidget(self.window_combo)
        self.bar.addWidget(self.follow_box)
        self.time_combo = QComboBox()
        self.time_combo.setObjectName("timeCombo")
        for text, key, tip in TIME_MODES:
            self.time_combo.addItem(text, key)
            self.time_combo.setItemData(self.time_combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.time_combo.setToolTip("How the time axis reads: the host's clock or the time since the start")
        self.time_combo.currentIndexChanged.connect(lambda _i: self.set_time_mode(self.time_combo.currentData()))
        self.bar.addSpacing(12)
        self.bar.addWidget(QLabel("Time:"))
        self.bar.addWidget(self.time_combo)
        self.bar.addStretch(1)

    def _mode_button(self, text: str, tip: str, mode: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setCheckable(True)
        button.setObjectName(f"{mode}ModeButton")
        button.clicked.connect(lambda _checked=False: self.set_mode(mode))
        return button

    @property
    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str) -> None:
        if mode not in (MODE_GRID, MODE_OVERLAY, MODE_OVERVIEW):
            raise ValueError(f"unknown dashboard mode {mode!r}")
        changed = mode != self._mode
        self._mode = mode
        self.grid_button.setChecked(mode == MODE_GRID)
        self.overlay_button.setChecked(mode == MODE_OVERLAY)
        self.overview_button.setChecked(mode == MODE_OVERVIEW)
        if not self.series:
            self.stack.setCurrentWidget(self.empty_label)
        elif mode == MODE_OVERVIEW:
            self.stack.setCurrentWidget(self.overview)
        else:
            self.stack.setCurrentWidget(self.grid_scroll if mode == MODE_GRID else self.overlay)
        self.util_note.setVisible(mode == MODE_GRID and bool(self.series))   # the overlay says it in its title
        live = mode == MODE_OVERLAY and bool(self.series)
        if live:
            self.overview_hook.prepare_overlay()   # many hosts: only the worst get curves
        self.overlay.set_live(live)
        if mode == MODE_OVERVIEW:   # no graphs on screen: neither group spends frames
            self.grid_group.set_active(False)
            self.overlay_group.set_active(False)
            if changed:
                self.mode_changed.emit(mode)
            return
        shown, hidden = ((self.grid_group, self.overlay_group) if mode == MODE_GRID
                         else (self.overlay_group, self.grid_group))
        hidden.set_active(False)
        if changed:
            shown.follow = hidden.follow
            if not hidden.follow and hidden.plots and shown.plots:
                shown.plots[0].setXRange(*hidden.plots[0].view_box.viewRange()[0], padding=0)
        shown.set_active(True)
        if mode == MODE_GRID:
            self.filler.schedule()
        if changed:
            self.mode_changed.emit(mode)

    @property
    def active_group(self) -> PlotGroup:
        return self.grid_group if self._mode == MODE_GRID else self.overlay_group

    def set_window(self, seconds: float | None) -> None:
        """The span shown while following (None: the whole run); follows the newest data again."""
        index = next((i for i in range(self.window_combo.count()) if self.window_combo.itemData(i) == seconds), -1)
        if index >= 0 and index != self.window_combo.currentIndex():
            self.window_combo.setCurrentIndex(index)   # comes back here
            return
        for group in (self.grid_group, self.overlay_group):
            group.set_window(seconds)

    def _follow_toggled(self, follow: bool) -> None:
        self.active_group.set_follow(follow)

    def _group_follow_changed(self, follow: bool) -> None:
        self.follow_box.blockSignals(True)
        self.follow_box.setChecked(follow)
        self.follow_box.blockSignals(False)
