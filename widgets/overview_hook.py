"""The many-hosts overview inside the live dashboard: its page, the drill-down to a host's panel, and
the overlay limited to the worst hosts when there are too many curves to tell apart.

Kept out of the dashboard module so that the dashboard only creates it; it reads the dashboard's own
series and talks to its views through the small Protocols below.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from PySide6.QtCore import QPoint, QTimer, SignalInstance
from PySide6.QtWidgets import QGridLayout, QLabel, QLayout, QScrollArea, QStackedWidget, QWidget

from widgets.host_overview import HostOverview
from widgets.host_ranking import HostSource

MODE_OVERVIEW = "overview"
TOP_N = 8               # the overlay's curves with many hosts: more colours cannot be told apart
AUTO_OVERVIEW = 12      # with this many hosts the dashboard opens on the overview (once per session)


class Overlay(Protocol):
    headers: dict[str, QWidget]

    def set_host_visible(self, host: str, visible: bool) -> None: ...
    def set_shown(self, hosts: list[str] | None) -> None: ...
    def own_colours(self) -> bool: ...


class Board(Protocol):
    """What the hook uses of widgets.dashboard.Dashboard."""

    mode_changed: SignalInstance

    series: Mapping[str, HostSource]
    panels: Mapping[str, QWidget]
    overlay: Overlay
    stack: QStackedWidget
    grid_scroll: QScrollArea

    @property
    def mode(self) -> str: ...
    def set_mode(self, mode: str) -> None: ...


def show_top_hosts(overlay: Overlay, ranking: Sequence[str], n: int = TOP_N,
                   applied: dict[str, bool] | None = None) -> dict[str, bool]:
    """Show only the n worst hosts' curves and legend entries in the overlay (all of them when there are
    no more than n). `applied`: what the last call did, so only hosts that change are touched (no re-layout
    of the legend every second). Returns what this call did, host -> shown."""
    hosts = list(overlay.headers)
    top = set(ranking[:n]) if len(hosts) > n else set(hosts)
    done: dict[str, bool] = {}
    for host in hosts:
        visible = done[host] = host in top
        if applied is not None and applied.get(host) == visible:
            continue
        overlay.set_host_visible(host, visible)
    if done != applied:
        if len(hosts) > n:
            _pack_legend(overlay, [h for h in ranking if done.get(h)])
        overlay.set_shown([h for h in hosts if done[h]] if len(hosts) > n else None)
    return done


def _pack_legend(overlay: Overlay, shown: list[str]) -> None:
    """The legend entries shown, worst first, two a row without the gaps hidden ones would leave."""
    headers = list(overlay.headers.values())
    if not headers:
        return
    grid = _layout_holding(headers[0].parentWidget().layout(), headers[0])
    if not isinstance(grid, QGridLayout):
        return
    for header in headers:
        grid.removeWidget(header)
    for index, host in enumerate(shown):
        grid.addWidget(overlay.headers[host], index // 2, index % 2)
    hidden = [h for h in overlay.headers if h not in set(shown)]
    for index, host in enumerate(hidden, start=len(shown)):   # kept in the layout, hidden
        grid.addWidget(overlay.headers[host], index // 2, index % 2)


def _layout_holding(layout: QLayout | None, widget: QWidget) -> QLayout | None:
    """The layout (nested anywhere under `layout`) that holds `widget` itself."""
    if layout is None:
        return None
    for index in range(layout.count()):
        item = layout.itemAt(index)
        if item.widget() is widget:
            return layout
        found = _layout_holding(item.layout(), widget)
        if found is not None:
            return found
    return None


class OverviewHook:
    """Builds the overview page of a dashboard and wires it; `overview` is the widget."""

    def __init__(self, board: Board, n: int = TOP_N, auto: int = AUTO_OVERVIEW) -> None:
        self.board = board
        self.n = n
        self.auto = auto
        self._auto_done = False
        self._applied: dict[str, bool] = {}
        self.overview = HostOverview(sources=lambda: board.series)
        board.stack.addWidget(self.overview)
        self.top_label = QLabel("")
        self.top_label.setObjectName("overlayTopLabel")
        self.top_label.setToolTip("With many hosts the overlay shows the worst ones only: failed, reconnecting, "
                                  "then the busiest. The Overview lists every host.")
        self.top_label.hide()
        self.overview.host_chosen.connect(self.show_host)
        self.overview.ranking_changed.connect(self._ranked)
        board.mode_changed.connect(self.mode_shown)

    def _ranked(self, ranking: list[str]) -> None:
        self._applied = show_top_hosts(self.board.overlay, ranking, self.n, self._applied)
        shown = sum(self._applied.values())
        many = len(ranking) > self.n
        text = f"Overlay: the {shown} worst of {len(ranking)} hosts" if many else ""
        if many and not self.board.overlay.own_colours():   # the legend strip shows which is which
            text += " · colours by place among these, not the Grid's"
        self.top_label.setText(text)
        self.top_label.setVisible(many and self.board.mode != MODE_OVERVIEW)
        if len(ranking) >= self.auto and not self._auto_done:
            self._auto_done = True
            self.board.set_mode(MODE_OVERVIEW)
        elif not ranking:
            self._auto_done = False   # a new session may open on the overview again

    def prepare_overlay(self) -> None:
        """The overlay is about to be shown: with many hosts, rank them now (not up to a second later), so
        only the worst get curves. The user chose this view: it is not swapped for the overview."""
        if len(self.board.series) > self.n:
            self._auto_done = True
            self.overview.rank()

    def mode_shown(self, mode: str) -> None:
        """The dashboard switched views: the top-N note belongs to the overlay."""
        self.top_label.setVisible(bool(self.top_label.text()) and mode == "overlay")

    def show_host(self, name: str) -> None:
        """Drill-down: the host's full panel in the grid."""
        panel = self.board.panels.get(name)
        if panel is None:
            return
        self.board.set_mode("grid")
        # once the grid is laid out, or the scroll area does not know where the panel is yet
        QTimer.singleShot(0, lambda: self._scroll_to(name))

    def _scroll_to(self, name: str) -> None:
        panel = self.board.panels.get(name)
        if panel is not None:
            # its top at the top: a panel taller than the view would be centred, its header out of sight
            top = panel.mapTo(self.board.grid_container, QPoint(0, 0)).y()
            self.board.grid_scroll.verticalScrollBar().setValue(top)
