"""Host panels built only when they are needed: a panel of eight graphs costs about 0.2 s of the GUI
thread, so a hundred built at once froze the window for twenty seconds.

The grid holds a light PanelSlot per host; a slot gets its panel when it scrolls into view (a few per
event-loop pass, so the window keeps answering), or at once when someone asks for it (panels[name]).
The panels read the hosts' ring buffers, which fill from the first sample: a late panel shows the
whole history.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from widgets.chart_theme import MUTED
from widgets.host_panel import HostPanel

PANELS_PER_PASS = 1      # panels built per event-loop pass: ~0.2 s at most between events
AHEAD_PX = 200           # build a panel this close below or above the view, so it is ready when it arrives


class PanelSlot(QWidget):
    """Where a host's panel goes in the grid; a note until the panel is built."""

    def __init__(self, host: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("panelSlot")
        self.host = host
        self.panel: HostPanel | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.note = QLabel(f"{host}: drawing its graphs…")
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setStyleSheet(f"color: {MUTED};")
        self._layout.addWidget(self.note)

    def put(self, panel: HostPanel) -> None:
        self.panel = panel
        self._layout.removeWidget(self.note)
        self.note.deleteLater()
        self._layout.addWidget(panel)
        panel.show()


class LazyPanels(Mapping[str, HostPanel]):
    """Every host's panel by name; looking one up builds it if it is not built yet. `built` holds the
    ones that exist (what the dashboard updates)."""

    def __init__(self, build: Callable[[str], HostPanel], names: Callable[[], Collection[str]]) -> None:
        self._build = build
        self._names = names
        self.built: dict[str, HostPanel] = {}

    def __getitem__(self, name: str) -> HostPanel:
        panel = self.built.get(name)
        if panel is not None:
            return panel
        if name not in self._names():
            raise KeyError(name)
        return self._build(name)

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names()))

    def __len__(self) -> int:
        return len(self._names())


class SlotFiller(QObject):
    """Builds the panels of the slots in (or near) a scroll area's view, a few per pass."""

    def __init__(self, scroll: QScrollArea, slots: Mapping[str, PanelSlot], panels: LazyPanels,
                 wanted: Callable[[], bool]) -> None:
        super().__init__(scroll)
        self.scroll = scroll
        self.slots = slots
        self.panels = panels
        self.wanted = wanted          # False while the grid is not the view shown
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.fill)
        scroll.verticalScrollBar().valueChanged.connect(lambda _v: self.schedule())
        scroll.viewport().installEventFilter(self)
        if scroll.widget() is not None:
            scroll.widget().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.LayoutRequest):
            self.schedule()
        return False

    def schedule(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def pending(self) -> list[str]:
        """Hosts whose slot is in view (or AHEAD_PX from it) and has no panel yet, top first."""
        if not self.wanted() or not self.scroll.isVisible():
            return []
        viewport = self.scroll.viewport()
        top = self.scroll.verticalScrollBar().value()
        view = QRect(0, top - AHEAD_PX, max(1, viewport.width()), viewport.height() + 2 * AHEAD_PX)
        hosts = [(slot.geometry().top(), host) for host, slot in self.slots.items()
                 if slot.panel is None and not slot.geometry().isEmpty() and slot.geometry().intersects(view)]
        return [host for _top, host in sorted(hosts)]

    def fill(self) -> int:
        """Build up to PANELS_PER_PASS panels; come back in the next pass while more are in view."""
        hosts = self.pending()
        for host in hosts[:PANELS_PER_PASS]:
            self.panels[host]
        if len(hosts) > PANELS_PER_PASS:
            self.schedule()
        return min(len(hosts), PANELS_PER_PASS)
