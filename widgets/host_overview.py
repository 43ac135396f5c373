"""Many hosts at a glance: one row per host with sparklines of %util, IOPS and CPU, the worst on top.

With 50-100 hosts a panel of graphs per host no longer fits any screen. Each row shows the host's
state, the last SPARK_SECONDS of three figures as sparklines with their newest value, and its status
line. Rows are ranked by how badly the host is doing: failed and reconnecting hosts first, then the
busiest (the larger of its mean %util and CPU busy over the last RANK_SECONDS). The order is revised
once a second, not every frame, so a row can be clicked before it moves. Clicking a row asks for
that host's full panel (host_chosen).

Drawing (widgets.overview_rows) is one QPainter pass over the visible rows, fed straight from the
hosts' ring buffers; a row is drawn again only when its data changed. The ranking (ranking_changed) also
tells the overlay which hosts to show when there are too many to tell apart.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtCore import QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QPixmap, QRegion
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from widgets.host_ranking import RANK_SECONDS, HostSource, state_rank, worst_first
from widgets.overview_rows import COLUMNS, QUIET, ROW_HEIGHT, ColumnTitles, OverviewRows

PAINT_MS = 250           # how often changed rows are drawn again (data comes once a second per host)
RANK_MS = 1000           # how often the order is revised


class HostOverview(QWidget):
    """Every host in one row, the worst on top; emits host_chosen(name) when a row is clicked."""

    host_chosen = Signal(str)
    ranking_changed = Signal(list)     # host names, the worst first (once a second while hosts change)

    def __init__(self, parent: QWidget | None = None,
                 sources: Callable[[], Mapping[str, HostSource]] | None = None) -> None:
        """sources: where to read the hosts from once a second (a view's own dict); None: set_sources()."""
        super().__init__(parent)
        self.setObjectName("hostOverview")
        self._provider = sources
        self.sources: dict[str, HostSource] = {}
        self.order: list[str] = []
        self.chosen: str | None = None
        self._seen: dict[str, tuple] = {}     # what each row showed when last drawn
        self.summary_label = QLabel("")
        self.summary_label.setObjectName("overviewSummary")
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        hint = QLabel("Worst first: failed, then reconnecting, then the busiest disk or CPU over the last "
                      f"{RANK_SECONDS:.0f} s. Click a host for its graphs.")
        hint.setStyleSheet(f"color: {QUIET};")
        hint.setWordWrap(True)
        top = QHBoxLayout()
        top.setContentsMargins(8, 2, 6, 2)
        top.setSpacing(16)
        top.addWidget(self.summary_label)
        top.addWidget(hint, 1)
        self.header = ColumnTitles(self)
        self.rows = OverviewRows(self, self)
        self.rows.row_clicked.connect(self._clicked)
        self.scroll = QScrollArea()
        self.scroll.setObjectName("overviewScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setWidget(self.rows)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.header)
        layout.addWidget(self.scroll, 1)
        self._paint_timer = QTimer(self)
        self._paint_timer.setInterval(PAINT_MS)
        self._paint_timer.timeout.connect(self.refresh)
        self._rank_timer = QTimer(self)
        self._rank_timer.setInterval(RANK_MS)
        self._rank_timer.timeout.connect(self.rank)
        if sources is not None:
            self._rank_timer.start()   # follows the provider's hosts as they come and go

    # -- hosts -----------------------------------------------------------------------------------

    def set_sources(self, sources: Mapping[str, HostSource]) -> None:
        """Show exactly these hosts (the mapping is read, never changed)."""
        self.sources = dict(sources)
        self._seen.clear()
        self.rows.forget_pictures(self.sources)
        if self.chosen not in self.sources:
            self.chosen = None
        self.rank()
        if self.sources and not self._rank_timer.isActive():
            self._rank_timer.start()
        elif not self.sources and self._provider is None:
            self._rank_timer.stop()

    def add_source(self, source: HostSource) -> None:
        self.set_sources({**self.sources, source.name: source})

    def clear(self) -> None:
        self.set_sources({})

    def choose(self, name: str | None) -> None:
        """Mark the host whose panel is shown (None: none)."""
        if name != self.chosen:
            self.chosen = name
            self.rows.update()

    def row_of(self, name: str) -> int:
        return self.order.index(name)

    # -- drawing ---------------------------------------------------------------------------------

    def rank(self) -> list[str]:
        """Revise the order now (the timer does it once a second); the names, worst first."""
        if self._provider is not None:
            current = self._provider()
            if current.keys() != self.sources.keys() or any(current[k] is not v for k, v in self.sources.items()):
                self.sources = dict(current)
                self._seen.clear()
                self.rows.forget_pictures(self.sources)
                if self.chosen not in self.sources:
                    self.chosen = None
        order = worst_first(self.sources.values())
        if order != self.order:
            resized = len(order) != len(self.order)
            self.order = order
            self._seen.clear()
            if resized:
                self.rows.updateGeometry()
                self.rows.setMinimumHeight(len(order) * ROW_HEIGHT)
            self.rows.update()
            self.ranking_changed.emit(list(order))
        self._update_summary()
        return list(self.order)

    def _update_summary(self) -> None:
        ranks = [state_rank(s.state) for s in self.sources.values()]
        parts = [f"{len(ranks)} hosts"]
        for rank, word in ((0, "failed"), (1, "reconnecting"), (3, "connecting"), (5, "done")):
            count = ranks.count(rank)
            if count:
                parts.append(f"{count} {word}")
        self.summary_label.setText(" · ".join(parts) if ranks else "No hosts yet.")

    def row_state(self, source: HostSource) -> tuple:
        versions = tuple(source.buffer(c.key).version for c in COLUMNS)
        return (versions, source.state, source.status_text(), id(source.buffer(COLUMNS[0].key)),
                getattr(source, "colour", None))

    def _changed_rows(self) -> QRegion:
        """The visible rows whose data changed since they were drawn (an empty region: none)."""
        if not self.order:
            return QRegion()
        viewport = self.scroll.viewport()
        offset = self.rows.mapFrom(viewport, QPoint(0, 0)).y()
        first = max(0, offset // ROW_HEIGHT)
        last = min(len(self.order) - 1, (offset + viewport.height()) // ROW_HEIGHT)
        region = QRegion()
        for index in range(first, last + 1):
            name = self.order[index]
            state = self.row_state(self.sources[name])
            if self._seen.get(name) != state:
                self._seen[name] = state
                region = region.united(QRect(0, index * ROW_HEIGHT, self.rows.width(), ROW_HEIGHT))
        return region

    def refresh(self) -> None:
        """The paint timer: ask Qt to draw the changed visible rows."""
        region = self._changed_rows()
        if not region.isEmpty():
            self.rows.update(region)

    def frame(self, everything: bool = False) -> int:
        """Draw now what the timer would (everything: every visible row); rows painted (tests, benchmark)."""
        if everything:
            self._seen.clear()
        region = self._changed_rows()
        if region.isEmpty():
            return 0
        self.rows.painted_rows = 0
        # render() paints synchronously whatever the platform (repaint() may wait for an exposed window)
        bounds = region.boundingRect()
        target = QPixmap(bounds.size())
        self.rows.render(target, QPoint(0, 0), region)
        return self.rows.painted_rows

    def showEvent(self, event) -> None:   # noqa: ANN001 - Qt's event type
        super().showEvent(event)
        self._paint_timer.start()   # only the shown view spends frames

    def hideEvent(self, event) -> None:   # noqa: ANN001
        self._paint_timer.stop()
        super().hideEvent(event)

    def _clicked(self, name: str) -> None:
        self.choose(name)
        self.host_chosen.emit(name)
