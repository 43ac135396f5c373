"""The host list: `local` first ("this computer"), then SSH hosts, each with a status mark."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from widgets.host_data import HostView

STATUS_UNKNOWN = "unknown"
STATUS_CONNECTING = "connecting"
STATUS_OK = "ok"
STATUS_ERROR = "error"

NAME_ROLE = Qt.ItemDataRole.UserRole
SUBTITLE_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 3

_STATUS_COLOURS = {
    STATUS_OK: QColor("#2e9d5b"),
    STATUS_ERROR: QColor("#d0453a"),
    STATUS_CONNECTING: QColor("#3b78c4"),
    STATUS_UNKNOWN: QColor("#a3abb5"),
}
_STATUS_WORDS = {
    STATUS_UNKNOWN: "not contacted yet",
    STATUS_CONNECTING: "working…",
    STATUS_OK: "reachable",
    STATUS_ERROR: "error",
}


def host_subtitle(spec: HostView) -> str:
    """The grey second line: where the host is."""
    if spec.is_local:
        return "this computer"
    if not spec.address:
        return "from ~/.ssh/config"
    where = spec.address if spec.port in (None, 22) else f"{spec.address}:{spec.port}"
    return f"{spec.user}@{where}" if spec.user else where


class HostDelegate(QStyledItemDelegate):
    """Two lines per host (bold name, grey address) and a round status mark or a spinner."""

    ROW_HEIGHT = 46
    LEFT, MARK, RIGHT = 10, 22, 8   # padding, status mark and its gap, padding: the room around the text
    # an address longer than this many characters does not widen the host pane: it is elided in the row,
    # whole in the row's tooltip ("user@a-very-long-host-name.example.internal.company:2222")
    ADDRESS_CHARS = 36
    elided_roles = (SUBTITLE_ROLE, MESSAGE_ROLE)   # what the row may draw elided on purpose (tooltip: whole)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spin_angle = 0

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """The width that shows the name whole and the address up to ADDRESS_CHARS (a longer address and a
        status message are elided: the tooltip holds them)."""
        name_font, sub_font = self.fonts(option.font)
        sub_metrics = QFontMetrics(sub_font)
        address = min(sub_metrics.horizontalAdvance(index.data(SUBTITLE_ROLE) or ""),
                      sub_metrics.averageCharWidth() * self.ADDRESS_CHARS)
        text = max(QFontMetrics(name_font).horizontalAdvance(index.data(NAME_ROLE) or ""), address)
        return QSize(self.LEFT + self.MARK + text + self.RIGHT + 1, self.ROW_HEIGHT)

    @staticmethod
    def fonts(font: QFont) -> tuple[QFont, QFont]:
        """The bold name's font and the smaller address's."""
        name_font = QFont(font)
        name_font.setBold(True)
        sub_font = QFont(font)
        sub_font.setPointSizeF(max(7.0, font.pointSizeF() * 0.9))
        return name_font, sub_font

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, opt, painter, opt.widget)

        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text_colour = palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        rect = option.rect.adjusted(self.LEFT, 5, -self.RIGHT, -5)

        # status mark on the left
        status = index.data(STATUS_ROLE) or STATUS_UNKNOWN
        mark = QRect(rect.left(), rect.center().y() - 6, 12, 12)
        colour = _STATUS_COLOURS.get(status, _STATUS_COLOURS[STATUS_UNKNOWN])
        if status == STATUS_CONNECTING:
            # on the selection's blue, a blue arc would vanish
            arc = text_colour if selected else colour
            painter.setPen(QPen(arc, 2.2, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawArc(mark, -self.spin_angle * 16, 270 * 16)
        elif status == STATUS_UNKNOWN:
            painter.setPen(QPen(colour, 1.6))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawEllipse(mark.adjusted(1, 1, -1, -1))
        else:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawEllipse(mark)

        text_rect = rect.adjusted(self.MARK, 0, 0, 0)
        name_font, sub_font = self.fonts(option.font)
        painter.setFont(name_font)
        painter.setPen(text_colour)
        half = text_rect.height() // 2
        name_rect = QRect(text_rect.left(), text_rect.top(), text_rect.width(), half)
        name = painter.fontMetrics().elidedText(index.data(NAME_ROLE) or "", Qt.TextElideMode.ElideRight,
                                                name_rect.width())
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)

        painter.setFont(sub_font)
        sub_colour = QColor(text_colour)
        if not selected:
            sub_colour = palette.color(QPalette.ColorRole.PlaceholderText)
        if status == STATUS_ERROR and not selected:
            sub_colour = _STATUS_COLOURS[STATUS_ERROR]
        painter.setPen(sub_colour)
        sub_rect = QRect(text_rect.left(), text_rect.top() + half, text_rect.width(), text_rect.height() - half)
        subtitle = index.data(SUBTITLE_ROLE) or ""
        if status in (STATUS_ERROR, STATUS_CONNECTING) and index.data(MESSAGE_ROLE):
            subtitle = index.data(MESSAGE_ROLE)   # what is happening matters more than the address
        subtitle = painter.fontMetrics().elidedText(subtitle, Qt.TextElideMode.ElideRight, sub_rect.width())
        painter.drawText(sub_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, subtitle)
        painter.restore()


class HostList(QListWidget):
    """Hosts by name; statuses survive a reload of the list. Emits names, never specs from the store."""

    current_host_changed = Signal(str)   # "" when nothing is selected
    host_activated = Signal(str)         # double-click or Enter

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hostList")
        # several hosts can be monitored at once; edit, remove and facts act on the current one
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setUniformItemSizes(True)
        # a name is never cut to "lo…": the list is as wide as its widest name or address, up to
        # HostDelegate.ADDRESS_CHARS of an address (minimumSizeHint)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMouseTracking(True)
        self._delegate = HostDelegate(self)
        self.setItemDelegate(self._delegate)
        self._specs: dict[str, HostView] = {}
        self._spinner = QTimer(self)
        self._spinner.setInterval(60)
        self._spinner.timeout.connect(self._spin)
        self.currentItemChanged.connect(self._on_current_changed)
        self.itemActivated.connect(lambda item: self.host_activated.emit(item.data(NAME_ROLE)))

    # -- content ---------------------------------------------------------------------------------

    def minimumSizeHint(self) -> QSize:
        """Narrow, but never narrower than the widest host's name and (up to a limit) address."""
        hint = super().minimumSizeHint()
        widest = max((self.sizeHintForIndex(self.model().index(row, 0)).width() for row in range(self.count())),
                     default=0)
        chrome = 2 * self.frameWidth() + self.verticalScrollBar().sizeHint().width()
        return QSize(max(hint.width(), widest + chrome), hint.height())

    def set_hosts(self, specs: list[HostView]) -> None:
        """Show these hosts (`local` first); keeps statuses, messages and the selection by name."""
        current = self.current_host()
        previous = {name: (self.status(name), self.message(name)) for name in self.host_names()}
        ordered = sorted(specs, key=lambda s: (not s.is_local, s.name.lower()))
        self.blockSignals(True)
        self.clear()
        self._specs = {}
        for spec in ordered:
            item = QListWidgetItem()
            item.setData(NAME_ROLE, spec.name)
            item.setData(SUBTITLE_ROLE, host_subtitle(spec))
            status, message = previous.get(spec.name, (STATUS_UNKNOWN, ""))
            item.setData(STATUS_ROLE, status)
            item.setData(MESSAGE_ROLE, message)
            item.setData(Qt.ItemDataRole.DisplayRole, spec.name)  # for keyboard search and accessibility
            self.addItem(item)
            self._specs[spec.name] = spec
            self._update_tooltip(item)
        self.blockSignals(False)
        self.updateGeometry()   # a longer name widens the list
        if current and current in self._specs:
            self.select_host(current)
        elif self.count():
            self.setCurrentRow(0)
        else:
            self.current_host_changed.emit("")
        self._update_spinner()

    def spec(self, name: str) -> HostView | None:
        return self._specs.get(name)

    def host_names(self) -> list[str]:
        return [self.item(row).data(NAME_ROLE) for row in range(self.count())]

    def current_host(self) -> str | None:
        item = self.currentItem()
        return item.data(NAME_ROLE) if item is not None else None

    def selected_hosts(self) -> list[str]:
        """The selected hosts in list order (the current one when nothing else is selected)."""
        names = [item.data(NAME_ROLE) for item in sorted(self.selectedItems(), key=self.row)]
        current = self.current_host()
        return names or ([current] if current else [])

    def select_host(self, name: str) -> bool:
        item = self._item(name)
        if item is None:
            return False
        self.setCurrentItem(item)
        return True

    # -- status ----------------------------------------------------------------------------------

    def set_status(self, name: str, status: str, message: str = "") -> None:
        """unknown / connecting / ok / error; the message shows on the row and in its tooltip."""
        item = self._item(name)
        if item is None:
            return
        item.setData(STATUS_ROLE, status)
        item.setData(MESSAGE_ROLE, message)
        self._update_tooltip(item)
        self._update_spinner()

    def status(self, name: str) -> str:
        item = self._item(name)
        return item.data(STATUS_ROLE) if item is not None else STATUS_UNKNOWN

    def message(self, name: str) -> str:
        item = self._item(name)
        return (item.data(MESSAGE_ROLE) or "") if item is not None else ""

    # -- internals -------------------------------------------------------------------------------

    def _item(self, name: str) -> QListWidgetItem | None:
        for row in range(self.count()):
            item = self.item(row)
            if item.data(NAME_ROLE) == name:
                return item
        return None

    def _update_tooltip(self, item: QListWidgetItem) -> None:
        name = item.data(NAME_ROLE)
        status = item.data(STATUS_ROLE) or STATUS_UNKNOWN
        lines = [f"<b>{_escape(name)}</b> — {_escape(item.data(SUBTITLE_ROLE) or '')}",
                 f"Status: {_STATUS_WORDS.get(status, status)}"]
        message = item.data(MESSAGE_ROLE)
        if message:
            lines.append(_escape(message))
        spec = self._specs.get(name)
        if spec is not None and spec.notes:
            lines.append(f"<i>{_escape(spec.notes)}</i>")
        item.setToolTip("<br>".join(lines))

    def _update_spinner(self) -> None:
        busy = any(self.item(row).data(STATUS_ROLE) == STATUS_CONNECTING for row in range(self.count()))
        if busy and not self._spinner.isActive():
            self._spinner.start()
        elif not busy and self._spinner.isActive():
            self._spinner.stop()

    def _spin(self) -> None:
        self._delegate.spin_angle = (self._delegate.spin_angle + 30) % 360
        self.viewport().update()

    def _on_current_changed(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        self.current_host_changed.emit(current.data(NAME_ROLE) if current is not None else "")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
