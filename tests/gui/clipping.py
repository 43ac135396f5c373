"""What a person would call "cut off" in a window: text that does not fit its label or button, an item of a
list, tree or table that does not fit its cell (the view would draw it "lo…"), a header section narrower
than its title, a window larger than the screen. Used by the layout tests; the widths are those the style,
the stylesheet and the views' delegates leave."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QRect, Qt
from PySide6.QtGui import QImage, QPaintDevice, QPaintEngine, QPainter, QTextDocument
from PySide6.QtGui import Qt as GuiQt  # Qt.mightBeRichText lives in QtGui
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QListView,
    QPushButton,
    QStyle,
    QStyleOptionButton,
    QStyleOptionViewItem,
    QToolBar,
    QToolButton,
    QTreeView,
    QWidget,
)

ROWS_CHECKED = 300   # a long table's rows share their columns: the first few hundred tell


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
    for view in top.findChildren(QAbstractItemView):
        if view.isVisibleTo(top) and view.model() is not None:
            cut.extend(cut_off_items(view))
    return cut


def _headers(view: QAbstractItemView) -> list[QHeaderView]:
    if isinstance(view, QTreeView):
        return [view.header()]
    horizontal = getattr(view, "horizontalHeader", None)
    return [horizontal()] if horizontal is not None else []


class _TextRecorder(QPaintEngine):
    """A paint engine that draws nothing and keeps every text run it is handed: what a view would show."""

    def __init__(self) -> None:
        super().__init__(QPaintEngine.PaintEngineFeature.AllFeatures)
        self.texts: list[str] = []

    def begin(self, _device: object) -> bool:
        return True

    def end(self) -> bool:
        return True

    def updateState(self, _state: object) -> None:
        pass

    def drawPixmap(self, *_args: object) -> None:
        pass

    def drawImage(self, *_args: object) -> None:
        pass

    def drawPolygon(self, *_args: object) -> None:
        pass

    def drawRects(self, *_args: object) -> None:
        pass

    def drawPath(self, *_args: object) -> None:
        pass

    def drawEllipse(self, *_args: object) -> None:
        pass

    def drawLines(self, *_args: object) -> None:
        pass

    def drawTextItem(self, _point: object, item: object) -> None:
        self.texts.append(item.text())

    def type(self) -> QPaintEngine.Type:
        return QPaintEngine.Type.User


class _TextDevice(QPaintDevice):
    """A surface of the item's size whose painter records texts (metrics of a normal image)."""

    def __init__(self, width: int, height: int) -> None:
        super().__init__()
        self.engine = _TextRecorder()
        self.size = (width, height)
        self.like = QImage(1, 1, QImage.Format.Format_ARGB32)

    def paintEngine(self) -> QPaintEngine:
        return self.engine

    def metric(self, metric: QPaintDevice.PaintDeviceMetric) -> int:
        if metric == QPaintDevice.PaintDeviceMetric.PdmWidth:
            return self.size[0]
        if metric == QPaintDevice.PaintDeviceMetric.PdmHeight:
            return self.size[1]
        return self.like.metric(metric)


def drawn_texts(view: QAbstractItemView, index: QModelIndex, width: int, height: int) -> list[str]:
    """The texts the view's delegate draws for the item in a cell of this size (elided ones end in "…")."""
    device = _TextDevice(max(width, 1), max(height, 1))
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = QRect(0, 0, max(width, 1), max(height, 1))
    option.widget = view
    painter = QPainter(device)
    try:
        view.itemDelegateForIndex(index).paint(painter, option, index)
    finally:
        painter.end()
    return device.engine.texts


def _item_room(view: QAbstractItemView, rect: QRect) -> int:
    """The width a person sees an item in: its cell, cut by the viewport's edge when nothing scrolls there;
    in a list (one column of names) always by the edge: a name read by scrolling sideways is cut off."""
    bar = view.horizontalScrollBar()
    if bar.isVisible() and bar.maximum() > 0 and not isinstance(view, QListView):
        return rect.width()
    return min(rect.right(), view.viewport().rect().right()) - max(rect.left(), 0) + 1


def _plain(text: object) -> str:
    if not isinstance(text, str) or not text:
        return ""
    if not GuiQt.mightBeRichText(text):
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def elided_on_purpose(view: QAbstractItemView, index: QModelIndex, drawn: str) -> bool:
    """Whether `drawn` ("lo…ng") is a text the item's delegate elides on purpose (one of its `elided_roles`)
    and the item's tooltip holds whole: a person sees the rest by pointing at it."""
    roles = getattr(view.itemDelegateForIndex(index), "elided_roles", ())
    head, _dots, tail = drawn.partition("…")
    tip = _plain(index.data(Qt.ItemDataRole.ToolTipRole))
    for role in roles:
        whole = index.data(role)
        if (isinstance(whole, str) and len(whole) > len(head) + len(tail) and whole.startswith(head)
                and whole.endswith(tail) and whole in tip):
            return True
    return False


def cut_off_items(view: QAbstractItemView) -> list[str]:
    """Header sections narrower than their title, and items whose delegate draws an elided text ("lo…") in
    the cell the view gives it (cut by the viewport's edge where nothing scrolls), unless the delegate elides
    that text on purpose and the item's tooltip holds it whole (elided_on_purpose)."""
    name = view.objectName() or type(view).__name__
    model = view.model()
    cut = []
    for header in _headers(view):
        if not header.isVisibleTo(view):
            continue
        for logical in range(header.count()):
            title = model.headerData(logical, header.orientation(), Qt.ItemDataRole.DisplayRole)
            if header.isSectionHidden(logical) or not title:
                continue
            needed = header.sectionSizeFromContents(logical).width()
            has = header.sectionSize(logical)
            if needed > has:
                cut.append(f"{name} header {str(title)!r}: needs {needed} px, has {has}")
    if isinstance(view, QListView):   # a list shows one column (a list model's columnCount is private)
        columns = [view.modelColumn()]
    else:
        columns = [c for c in range(model.columnCount(QModelIndex()))
                   if not (hasattr(view, "isColumnHidden") and view.isColumnHidden(c))]
    for row in range(min(model.rowCount(QModelIndex()), ROWS_CHECKED)):
        for column in columns:
            index = model.index(row, column)
            text = index.data(Qt.ItemDataRole.DisplayRole)
            if text in (None, "") or view.indexWidget(index) is not None:
                continue
            rect = view.visualRect(index)
            if rect.isEmpty():   # a hidden row or a collapsed branch
                continue
            room = _item_room(view, rect)
            elided = [t for t in drawn_texts(view, index, room, rect.height())
                      if "…" in t and not elided_on_purpose(view, index, t)]
            if elided and "…" not in str(text):
                cut.append(f"{name} row {row} column {column} {str(text)[:40]!r} drawn as {elided} in {room} px")
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
