"""A table's first column that stays in place while the table scrolls sideways.

A second view over the same model, showing only column 0, laid over the table's left edge (as in
Qt's "frozen column" example): rows keep their names however far right the figures go.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QFrame, QHeaderView, QTableView


class FrozenColumn(QTableView):
    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        self.setObjectName("frozenColumn")
        self.setModel(table.model())
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setWordWrap(False)
        self.setShowGrid(table.showGrid())
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.horizontalHeader().setDefaultAlignment(table.horizontalHeader().defaultAlignment())
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setVerticalScrollMode(table.verticalScrollMode())
        self.setFrameShape(QFrame.Shape.NoFrame)
        # a thin line on the right: where the scrolled figures slide under the names
        self.setStyleSheet("QTableView#frozenColumn { border: none; border-right: 1px solid palette(mid); } "
                           + table.styleSheet())
        table.viewport().stackUnder(self)
        table.horizontalHeader().sectionResized.connect(self._column_resized)
        table.verticalHeader().sectionResized.connect(lambda row, _old, new: self.setRowHeight(row, new))
        table.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        self.verticalScrollBar().valueChanged.connect(table.verticalScrollBar().setValue)
        self.sync()

    def sync(self) -> None:
        """After the table was filled: only column 0, the table's widths, heights and spans."""
        model = self.model()
        self.clearSpans()
        for column in range(model.columnCount()):
            self.setColumnHidden(column, column != 0)
        if model.columnCount():
            self.setColumnWidth(0, self.table.columnWidth(0))
        for row in range(model.rowCount()):
            self.setRowHeight(row, self.table.rowHeight(row))
        self.place()
        self.setVisible(model.columnCount() > 1)

    def place(self) -> None:
        table = self.table
        header = table.horizontalHeader()
        self.horizontalHeader().setFixedHeight(header.height())
        frame = table.frameWidth()
        self.setGeometry(table.verticalHeader().width() + frame, frame, table.columnWidth(0),
                         table.viewport().height() + header.height())

    def _column_resized(self, column: int, _old: int, new: int) -> None:
        if column == 0:
            self.setColumnWidth(0, new)
            self.place()
