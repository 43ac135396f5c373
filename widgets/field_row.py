"""A form row of several fields side by side: the first field, then labelled ones, then room to spare."""
from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

GAP = 12   # px between one field and the next one's label


def field_row(*fields: tuple[str, QWidget]) -> QHBoxLayout:
    """(label, widget) pairs in a row without margins; an empty label puts the widget without one (the form's
    own label names the first). The row ends in a stretch, so the fields keep their own widths."""
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    for index, (label, widget) in enumerate(fields):
        if index:
            row.addSpacing(GAP)
        if label:
            row.addWidget(QLabel(label))
        row.addWidget(widget)
    row.addStretch(1)
    return row
