"""A database load from several client hosts, live: the TOTAL operations per second (the sum of the clients'
seconds) with each client's band stacked under it, and beside it each step's total and each client's share,
with a note where a client ran out of CPU (the step's total may then be the client's limit, not the server's).

The rows come ready-made from the window's feed (app.gui.dbload_multi_live); this only shows them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from widgets.chart_theme import MUTED
from widgets.shared_total_chart import SharedTotalChart

NOTE_COLOUR = "#b7791f"     # as the retries: a caution, not an error


@dataclass(frozen=True)
class ShareRow:
    step: str          # "step 2 · 4 connections"
    total: str         # "1,234 ops/s (median of the per-second totals)"
    shares: str        # "sshd1 52 %, sshd2 48 %"
    note: str = ""     # "sshd2 had 97 % of its CPUs busy: this step's total may be the client's limit"


class DbLoadTotalPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dbloadTotalPanel")
        self.chart = SharedTotalChart("ops/s", self, name="Database load")
        self.chart.setObjectName("dbloadTotalChart")
        self.shares = QLabel()
        self.shares.setObjectName("dbloadShares")
        self.shares.setWordWrap(True)
        self.shares.setTextFormat(Qt.TextFormat.RichText)
        self.shares.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.server = QLabel()
        self.server.setObjectName("dbloadServer")
        self.server.setWordWrap(True)
        self.server.setStyleSheet(f"color: {MUTED};")
        self.outcome = QLabel()
        self.outcome.setObjectName("dbloadOutcome")
        self.outcome.setWordWrap(True)
        side = QWidget()
        column = QVBoxLayout(side)
        column.setContentsMargins(4, 0, 0, 0)
        title = QLabel("<b>Each step: TOTAL and each client's share</b>")
        column.addWidget(title)
        column.addWidget(self.shares, 1)
        column.addWidget(self.server)
        column.addWidget(self.outcome)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(side)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.chart, 2)
        row.addWidget(scroll, 1)
        self.rows: list[ShareRow] = []
        self.set_rows([])

    def clear(self) -> None:
        self.chart.clear()
        self.set_rows([])
        self.server.setText("")
        self.outcome.setText("")

    def set_rows(self, rows: Sequence[ShareRow]) -> None:
        self.rows = list(rows)
        if not self.rows:
            self.shares.setText(f"<span style='color:{MUTED}'>the shares come with each step's first second</span>")
            return
        parts = []
        for row in self.rows:
            text = f"<b>{escape(row.step)}</b>: {escape(row.total)}<br/>&nbsp;&nbsp;{escape(row.shares)}"
            if row.note:
                text += f"<br/>&nbsp;&nbsp;<span style='color:{NOTE_COLOUR}'>note: {escape(row.note)}</span>"
            parts.append(text)
        self.shares.setText("<br/>".join(parts))

    def set_server(self, text: str) -> None:
        """Where the database server's own telemetry is (its panel below, or why there is none)."""
        self.server.setText(text)

    def set_outcome(self, text: str) -> None:
        self.outcome.setText(text)
