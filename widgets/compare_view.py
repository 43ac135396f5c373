"""The comparison of stored runs as the Compare tab shows it.

Top to bottom: the summary paragraph, the baseline picker, the table (one row per server), the
caveats (always in view, never only in tooltips), the bar charts per figure and the overlaid
telemetry. The view never reads the store: the controller builds the comparison, hands it to
set_comparison, and answers baselineChanged (rebuild with that baseline) and overlayRequested (load the
aligned curves, then set_overlays). What it reads of them is declared in widgets.compare_data; the
telemetry it can overlay is handed to it when it is made.
"""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from widgets.compare_bars import CompareBars
from widgets.compare_data import ComparisonData, OverlayChoice, SeriesView, row_colours
from widgets.compare_overlay import CompareOverlay
from widgets.compare_table import BASELINE_MARK, BEST_MARK, CAVEAT_MARK, CompareTable
from widgets.dbload_charts import DbLoadCharts
from widgets.dbload_data import DbLoadCurves
from widgets.dns_panel import DnsLineView, DnsPanel
from widgets.plot_items import MUTED, escape

NO_BASELINE = "No baseline"
WARN_STYLE = "background: #fff4d6; border: 1px solid #e5c36b; border-radius: 3px; padding: 6px; color: #5c4500;"
QUIET_STYLE = f"color: {MUTED};"
SUMMARY_STYLE = "font-size: 11pt; padding: 2px 0 4px 0;"


def summary_html(comparison: ComparisonData) -> str:
    """The summary paragraph with each winner on a line of its own: read at a glance, not parsed."""
    text, winners = comparison.summary(), comparison.winners()
    if not winners:
        return escape(text)
    head, _found, rest = text.partition(winners[0])
    for line in winners:
        rest = rest.replace(line, "", 1)
    items = "".join(f"<li>{escape(line)}</li>" for line in winners)
    return f"{escape(head.strip())}<ul style='margin: 2px 0'>{items}</ul>{escape(rest.strip())}"


def _section(text: str) -> QLabel:
    label = QLabel(f"<b>{escape(text)}</b>")
    label.setStyleSheet("font-size: 10pt; padding-top: 8px;")
    return label


class ComparisonView(QWidget):
    """One comparison: summary, baseline, table, caveats, bar charts, telemetry."""

    baselineChanged = Signal(object)          # the chosen row's first run id, or None
    overlayRequested = Signal(str, object)    # overlay name ("disk.util"), test ("disk") or None

    def __init__(self, overlays: Sequence[OverlayChoice], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("comparisonView")
        self.comparison: ComparisonData | None = None
        self.summary_label = QLabel("")
        self.summary_label.setObjectName("compareSummary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setStyleSheet(SUMMARY_STYLE)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.baseline_picker = QComboBox()
        self.baseline_picker.setObjectName("baselinePicker")
        self.baseline_picker.setToolTip("Ratios say how many times as good as this server each figure is.")
        self.legend_label = QLabel(f"{BEST_MARK} best: ahead of every other (green)   ·   {BASELINE_MARK}   ·   "
                                   f"{CAVEAT_MARK} caveat: see the list under the table   ·   under each figure its "
                                   "verdict against the baseline, else the leader: factor = times as good, "
                                   "(lo–hi) and ±: the range it could take from run to run   ·   grey: a run "
                                   "that did not complete, never judged")
        self.legend_label.setStyleSheet(QUIET_STYLE)
        self.legend_label.setWordWrap(True)   # its width would otherwise push the table sideways
        self.table = CompareTable()
        self.transpose_box = QCheckBox("Servers as columns")
        self.transpose_box.setObjectName("transposeBox")
        self.transpose_box.setProperty("remembered", True)   # the window keeps the choice for the next start
        self.transpose_box.setToolTip("Turn the table: a row per figure and a column per server — "
                                      "for many figures and few servers")
        self.transpose_box.toggled.connect(self.table.set_transposed)
        self.prices_label = QLabel("")
        self.prices_label.setObjectName("comparePrices")
        self.prices_label.setWordWrap(True)
        self.prices_label.setStyleSheet(QUIET_STYLE)
        self.prices_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.prices_label.hide()
        self.caveats_label = QLabel("")
        self.caveats_label.setObjectName("compareCaveats")
        self.caveats_label.setWordWrap(True)
        self.caveats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # what would settle each can't tell yet: in view, not only in the cell's tooltip
        self.settle_label = QLabel("")
        self.settle_label.setObjectName("compareSettle")
        self.settle_label.setWordWrap(True)
        self.settle_label.setStyleSheet(QUIET_STYLE)
        self.settle_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.settle_label.hide()
        self.bars = CompareBars()
        self.overlay = CompareOverlay(overlays)
        self.dbload_section = _section("Database load over time and by clients")
        self.dbload = DbLoadCharts()
        self.dns_title = _section("DNS resolvers: latency distribution, counts and slowest names")
        self.dns = DnsPanel()
        self.content = QWidget()
        body = QVBoxLayout(self.content)
        body.setContentsMargins(0, 0, 0, 0)
        picker_line = QHBoxLayout()
        picker_line.addWidget(QLabel("Baseline:"))
        picker_line.addWidget(self.baseline_picker)
        picker_line.addSpacing(16)
        picker_line.addWidget(self.legend_label, 1)
        picker_line.addWidget(self.transpose_box)
        body.addLayout(picker_line)
        body.addWidget(self.table)
        body.addWidget(self.prices_label)
        body.addWidget(self.settle_label)
        body.addWidget(_section("Caveats"))
        body.addWidget(self.caveats_label)
        body.addWidget(_section("Figures side by side"))
        body.addWidget(self.bars)
        body.addWidget(self.dbload_section)
        body.addWidget(self.dbload)
        body.addWidget(self.dns_title)
        body.addWidget(self.dns)
        body.addWidget(_section("Telemetry during the tests"))
        body.addWidget(self.overlay)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.content)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(page)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        self.baseline_picker.currentIndexChanged.connect(self._baseline_picked)
        self.overlay.requested.connect(self.overlayRequested)
        self.clear("Pick runs to compare.")

    # -- public API ------------------------------------------------------------------------------

    def set_comparison(self, comparison: ComparisonData) -> None:
        """Show a comparison; asks for the telemetry overlay (overlayRequested) when the runs changed."""
        self.comparison = comparison
        self.summary_label.setText(summary_html(comparison))
        self.summary_label.setStyleSheet(SUMMARY_STYLE)
        self._fill_baselines(comparison)
        self.table.set_comparison(comparison)
        prices = comparison.price_lines()
        # figures per price are only as good as the price: its date and source stand under the table
        self.prices_label.setText("Prices: " + " · ".join(escape(line) for line in prices) if prices else "")
        self.prices_label.setVisible(bool(prices))
        unsettled = comparison.settle_lines()
        self.settle_label.setText("What would settle a can't tell yet:<br>" + "<br>".join(
            f"· {escape(line)}" for line in unsettled) if unsettled else "")
        self.settle_label.setVisible(bool(unsettled))
        lines = comparison.caveat_lines()
        if lines:
            self.caveats_label.setText("<br>".join(f"{CAVEAT_MARK} {escape(line)}" for line in lines))
            self.caveats_label.setStyleSheet(WARN_STYLE)
        else:
            self.caveats_label.setText("None: every figure was measured without a known caveat.")
            self.caveats_label.setStyleSheet(QUIET_STYLE)
        self.bars.set_comparison(comparison)
        self.content.setVisible(True)
        if self.overlay.set_comparison(comparison):
            self.overlay.request()

    def set_dns(self, lines: Sequence[DnsLineView]) -> None:
        """The dns runs' lines (one per resolver and pass); the section is hidden without any."""
        self.dns_title.setVisible(self.dns.set_lines(lines))

    def set_overlays(self, curves: Sequence[SeriesView]) -> None:
        self.overlay.set_overlays(curves)

    def set_dbload(self, runs: Sequence[DbLoadCurves]) -> None:
        """The database-load runs of the comparison, one line per server in its row's colour."""
        colours = row_colours(self.comparison.rows) if self.comparison is not None else {}
        # a row with several tests labels its run "db-01 (dbload)": the row's colour still
        self.dbload.set_runs(runs, {run.label: colours.get(run.label) or colours.get(run.label.rsplit(" (", 1)[0], "")
                                    for run in runs})
        self.dbload_section.setVisible(bool(self.dbload.runs))

    def clear(self, message: str = "") -> None:
        """Nothing compared: the message in place of the summary (e.g. "Loading…", or an error)."""
        self.comparison = None
        self.summary_label.setText(escape(message))
        self.summary_label.setStyleSheet(SUMMARY_STYLE + QUIET_STYLE)
        self.baseline_picker.blockSignals(True)
        self.baseline_picker.clear()
        self.baseline_picker.blockSignals(False)
        self.table.clear_comparison()
        self.caveats_label.setText("")
        self.settle_label.setText("")
        self.settle_label.hide()
        self.prices_label.setText("")
        self.prices_label.hide()
        self.bars.clear()
        self.set_dns([])
        self.overlay.clear()
        self.set_dbload([])
        self.content.setVisible(False)

    # -- reading back ----------------------------------------------------------------------------

    def baseline_choice(self) -> int | None:
        return self.baseline_picker.currentData()

    def caveat_text(self) -> str:
        return self.caveats_label.text()

    def price_text(self) -> str:
        """The prices line under the table ("" when no server has a price)."""
        return self.prices_label.text() if self.prices_label.isVisibleTo(self) else ""

    # -- internals -------------------------------------------------------------------------------

    def _fill_baselines(self, comparison: ComparisonData) -> None:
        self.baseline_picker.blockSignals(True)
        self.baseline_picker.clear()
        self.baseline_picker.addItem(NO_BASELINE, None)
        for row in comparison.rows:
            self.baseline_picker.addItem(row.label, row.run_ids[0])
            if row.baseline:
                self.baseline_picker.setCurrentIndex(self.baseline_picker.count() - 1)
        self.baseline_picker.blockSignals(False)

    def _baseline_picked(self, index: int) -> None:
        if index >= 0:
            self.baselineChanged.emit(self.baseline_picker.itemData(index))
