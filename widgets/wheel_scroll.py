"""The mouse wheel over a chart scrolls the page the chart sits in, as it does over any other widget."""
from __future__ import annotations

from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QWidget


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
