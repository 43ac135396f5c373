"""The mouse wheel over a chart scrolls the page the chart sits in, as it does over any other widget."""
from __future__ import annotations

import time

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QGraphicsView, QWidget


def enclosing_scroll_area(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent


def scroll_page(widget: QWidget, event: QWheelEvent) -> bool:
    """Hand the wheel event to the scroll area around `widget`; False when there is none.

    Sent on explicitly: Qt passes an ignored wheel event to the parents only when it came from the
    window system, not when a widget (or a test) sends it."""
    area = enclosing_scroll_area(widget)
    if area is None:
        return False
    viewport = area.viewport()
    QApplication.sendEvent(viewport, QWheelEvent(
        viewport.mapFromGlobal(event.globalPosition()), event.globalPosition(), event.pixelDelta(),
        event.angleDelta(), event.buttons(), event.modifiers(), event.phase(), event.inverted()))
    return True


def on_screen(widget: QWidget) -> bool:
    """Shown and not scrolled out of sight (a grid of many hosts scrolls)."""
    if not widget.isVisible():
        return False
    rect, child = widget.rect(), widget
    parent = child.parentWidget()
    while parent is not None:   # clipped by every parent: a scroll area's viewport hides the rest
        rect = rect.translated(child.pos()).intersected(parent.rect())
        if rect.isEmpty():
            return False
        child, parent = parent, parent.parentWidget()
    return True


GESTURE_GAP_S = 0.5   # wheel events closer than this are one turn of the wheel (one flick of a touchpad)


def _scroll_areas(area: QAbstractScrollArea) -> list[QAbstractScrollArea]:
    """The area and every scroll area around it, innermost first (charts' views are no pages)."""
    chain: list[QAbstractScrollArea] = []
    found: QAbstractScrollArea | None = area
    while found is not None:
        if not isinstance(found, QGraphicsView):
            chain.append(found)
        found = enclosing_scroll_area(found)
    return chain


def can_scroll(area: QAbstractScrollArea, event: QWheelEvent) -> bool:
    """Whether this wheel event would move the area: it has a scroll bar that way, not at its end."""
    delta = event.angleDelta() if not event.angleDelta().isNull() else event.pixelDelta()
    vertical = abs(delta.y()) >= abs(delta.x())
    bar = area.verticalScrollBar() if vertical else area.horizontalScrollBar()
    step = delta.y() if vertical else delta.x()
    if event.inverted():
        step = -step
    if bar.maximum() <= bar.minimum() or step == 0:
        return False
    return bar.value() > bar.minimum() if step > 0 else bar.value() < bar.maximum()


class WheelLatch(QObject):
    """One turn of the wheel moves one thing, where scroll areas nest (a window that scrolls as a whole on a
    small screen, a grid of charts that scrolls in it).

    Qt scrolls the inner area and, once it is at its end, hands the rest of the same turn to the outer one,
    so the page jumps under a user who only meant to reach the end of the list; a wheel event a chart hands
    on is not passed outwards at all, so there the outer page never moves. Here a turn goes to the
    innermost area that can move that way, and stays with it to the turn's end; the next turn, if that area
    is at its end, moves the next one out."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._latched: QAbstractScrollArea | None = None
        self._last = 0.0
        self.gesture_gap_s = GESTURE_GAP_S
        self._routing = False

    def watch(self, top: QWidget) -> None:
        """Route the wheel for every scroll area in `top` (again after new ones were made: idempotent)."""
        areas = [top] if isinstance(top, QAbstractScrollArea) else []
        for area in areas + top.findChildren(QAbstractScrollArea):
            if not isinstance(area, QGraphicsView) and area.property("wheelLatch") is not True:
                area.setProperty("wheelLatch", True)
                area.viewport().installEventFilter(self)

    def end_turn(self) -> None:
        """The wheel paused: the next event starts a new turn."""
        self._latched = None

    def target(self, area: QAbstractScrollArea, event: QWheelEvent) -> QAbstractScrollArea:
        """The scroll area this wheel event is for."""
        chain = _scroll_areas(area)
        now = time.monotonic()
        latched = self._latched if self._latched is not None and shiboken6.isValid(self._latched) else None
        within_turn = now - self._last < self.gesture_gap_s or event.phase() in (Qt.ScrollPhase.ScrollUpdate,
                                                                             Qt.ScrollPhase.ScrollMomentum)
        self._last = now
        if latched is not None and latched in chain and within_turn:
            return latched
        chosen = next((a for a in chain if can_scroll(a, event)), chain[0])
        self._latched = chosen
        return chosen

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or self._routing or not isinstance(event, QWheelEvent):
            return False
        area = watched.parent() if isinstance(watched, QWidget) else None
        if not isinstance(area, QAbstractScrollArea) or area.viewport() is not watched:
            return False
        if enclosing_scroll_area(area) is None and self._latched is None:
            return False   # not nested and no turn under way: Qt's own wheel
        chosen = self.target(area, event)
        viewport = chosen.viewport()
        self._routing = True
        try:
            QApplication.sendEvent(viewport, QWheelEvent(
                viewport.mapFromGlobal(event.globalPosition()), event.globalPosition(), event.pixelDelta(),
                event.angleDelta(), event.buttons(), event.modifiers(), event.phase(), event.inverted()))
        finally:
            self._routing = False
        event.accept()   # handled: Qt passes it to no other area
        return True


def latch_wheel(top: QWidget) -> WheelLatch:
    """The application's WheelLatch, now watching every scroll area in `top`."""
    app = QApplication.instance()
    latch = app.findChild(WheelLatch) if app is not None else None
    if latch is None:
        latch = WheelLatch(app)
    latch.watch(top)
    return latch
