"""What a person would call "cut off" in a window: text that does not fit its label or button, a window larger
than the screen. Used by the layout tests; the widths are those the style and the stylesheet leave."""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import Qt as GuiQt  # Qt.mightBeRichText lives in QtGui
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QAbstractButton,
    QLabel,
    QPushButton,
    QStyle,
    QStyleOptionButton,
    QToolBar,
    QToolButton,
    QWidget,
)


def text_room(button: QAbstractButton) -> int:
    """The width the button's style leaves for its text."""
    if isinstance(button, QPushButton):
        option = QStyleOptionButton()
        option.initFrom(button)
        option.text = button.text()
        return button.style().subElementRect(QStyle.SubElement.SE_PushButtonContents, option, button).width()
    margin = button.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, None, button)
    arrow = 16 if isinstance(button, QToolButton) and button.arrowType() != Qt.ArrowType.NoArrow else 0
    return button.contentsRect().width() - margin - arrow


def _button_text(button: QAbstractButton) -> str:
    return button.text().replace("&&", "\0").replace("&", "").replace("\0", "&")


def _label_problem(label: QLabel) -> str:
    text = label.text()
    full = getattr(label, "full_text", None)
    if isinstance(full, str) and full and text != full:
        return f"shows {text!r} of {full!r}"
    if not text or not label.pixmap().isNull():
        return ""
    room = label.contentsRect()
    margin = 2 * label.margin() + max(label.indent(), 0)
    width, height = room.width() - margin, room.height() + 1
    rich = label.textFormat() == Qt.TextFormat.RichText or (
        label.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text))
    if rich:
        doc = QTextDocument()
        doc.setDefaultFont(label.font())
        doc.setDocumentMargin(0)
        doc.setHtml(text)
        if label.wordWrap():
            doc.setTextWidth(width)
            needed = doc.size().height()
            return f"{text[:60]!r} needs {needed:.0f} px high, has {height}" if needed > height + 2 else ""
        needed = doc.idealWidth()
        return f"{text[:60]!r} needs {needed:.0f} px, has {width}" if needed > width + 1 else ""
    metrics = label.fontMetrics()
    if label.wordWrap():   # heightForWidth counts the stylesheet's padding and border: compare the whole label
        needed = label.heightForWidth(label.width())
        return f"{text[:60]!r} needs {needed} px high, has {label.height()}" if needed > label.height() else ""
    needed = max(metrics.horizontalAdvance(line) for line in text.split("\n"))
    return f"{text[:60]!r} needs {needed} px, has {width}" if needed > width else ""


def cut_off_texts(top: QWidget) -> list[str]:
    """Every label and button shown in `top` whose whole text does not fit it."""
    cut = []
    for button in top.findChildren(QAbstractButton):
        text = _button_text(button)
        if text and button.isVisibleTo(top) and button.fontMetrics().horizontalAdvance(text) > text_room(button):
            cut.append(f"button {text!r} ({button.objectName() or type(button).__name__}): needs "
                       f"{button.fontMetrics().horizontalAdvance(text)} px, has {text_room(button)}")
    for label in top.findChildren(QLabel):
        if label.isVisibleTo(top):
            problem = _label_problem(label)
            if problem:
                cut.append(f"label {label.objectName() or type(label).__name__}: {problem}")
    return cut


def hidden_toolbar_actions(top: QWidget) -> list[str]:
    """Actions a toolbar shown in `top` has put behind its » button for want of room."""
    hidden = []
    for bar in top.findChildren(QToolBar):
        if not bar.isVisibleTo(top):
            continue
        for action in bar.actions():
            if action.isSeparator() or not action.isVisible():
                continue
            widget = bar.widgetForAction(action)
            if widget is None or not widget.isVisibleTo(top):
                hidden.append(f"toolbar {bar.objectName()}: {action.text() or action.objectName()!r} is hidden")
    return hidden


def off_screen(top: QWidget, screen: QRect) -> str:
    """Why the window does not fit the screen's free area; empty when it does."""
    frame = top.frameGeometry()
    if frame.width() > screen.width() or frame.height() > screen.height():
        return (f"{type(top).__name__} is {frame.width()}x{frame.height()} on a "
                f"{screen.width()}x{screen.height()} screen")
    if not screen.contains(frame):
        return f"{type(top).__name__} at {frame.getRect()} runs off the screen {screen.getRect()}"
    return ""
