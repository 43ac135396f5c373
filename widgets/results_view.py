"""The results of a stored run: warnings first, then a table, latency percentiles and the sweep curve.

Takes plain data (a RunRecord, its ResultSamples, the run's warning messages). Disk results are
"{job}.{quantity}" metrics of the test "disk" (iops, mbps, lat_mean, lat_p50 ... lat_p99.9) with the
engine and direct/cached in their metadata; CPU results are single, multi, scaling and
"{single|multi}.{kernel}"; mail storm and restore runs get their summary lines and a table (latency per
SMTP stage, or one row per pg_restore pass) with their labels (synthetic, non-durable, file level) in the
title; anything else is listed as metric, value, unit. What the figures mean
(job labels, numbers, the sweep, the caveats) is app.summary.run's, as `benchbay run` prints it;
this is only its Qt layer.
"""
from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.summary.run import (
    CPU_KERNELS,
    LATENCIES,
    MISSING,
    NO_VALUE,
    VERSION_KEYS,
    DiskJob,
    Table,
    caveats,
    cpu_figures,
    cpu_versions,
    disk_jobs,
    disk_sweep,
    engine_text,
    job_label,
    number,
    sweep_knee,
)
from app.summary.services import (
    FILE_LEVEL_LABEL,
    NON_DURABLE_LABEL,
    SYNTHETIC_LABEL,
    mail_latency_table,
    mail_lines,
    mail_synthetic,
    restore_kind,
    restore_lines,
    restore_non_durable,
    restore_table,
)
from widgets.live_plot import MUTED
from widgets.mail_charts import MailCharts
from widgets.plot_items import small_plot

DISK_COLUMNS = ("Job", "IOPS", "MB/s", "Mean ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "Engine", "I/O")
BAR = "#2f6db5"
CACHED = QColor("#f6e3b4")
BADGE_STYLE = "background: #c0392b; color: white; font-weight: bold"
WARN_STYLE = "background: #fff4d6; border: 1px solid #e5c36b; border-radius: 3px; padding: 4px; color: #5c4500;"


def _number(value: float | None, decimals: int | None = None) -> str:
    return number(value, decimals, missing=NO_VALUE)


def _item(text: str, tip: str = "", right: bool = True) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tip:
        item.setToolTip(tip)
    return item


class ResultsView(QWidget):
    """One stored run's results."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultsView")
        self.title = QLabel("")
        self.title.setObjectName("resultsTitle")
        self.warnings_label = QLabel("")
        self.warnings_label.setObjectName("resultsWarnings")
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setStyleSheet(WARN_STYLE)
        self.summary_label = QLabel("")
        self.summary_label.setObjectName("resultsSummary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget()
        self.table.setObjectName("resultsTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.latency_title = QLabel("<b>Latency percentiles</b> (ms, per job)")
        self.latency_grid = QGridLayout()
        self.latency_plots: dict[str, pg.PlotWidget] = {}
        self.sweep_plot = small_plot("Concurrency sweep: IOPS vs workers", 240)
        self.sweep_curve = self.sweep_plot.plot([], [], pen=pg.mkPen(BAR, width=2), symbol="o", symbolSize=7,
                                                symbolBrush=BAR, symbolPen=None)
        self.sweep_plot.getPlotItem().setLabel("bottom", "workers (log₂)")
        self.sweep_plot.getPlotItem().setLabel("left", "IOPS")
        self.sweep_note = QLabel("")
        self.sweep_note.setStyleSheet(f"color: {MUTED};")
        self.sweep_data: tuple[list[int], list[float]] = ([], [])
        self.mail_charts = MailCharts()
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        for widget in (self.title, self.warnings_label, self.summary_label, self.table, self.latency_title):
            layout.addWidget(widget)
        layout.addLayout(self.latency_grid)
        layout.addWidget(self.mail_charts)
        layout.addWidget(self.sweep_plot)
        layout.addWidget(self.sweep_note)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    def set_results(self, run: Any, results: list[Any], warnings: list[str] | None = None) -> None:
        """run: a RunRecord; results: ResultSamples; warnings: the run's warning messages."""
        status = "" if run.status == "done" else f" — <span style='color:#c0392b'>{run.status}</span>"
        self.title.setText(f"<b>Run #{run.id}</b> · {run.host_name} · {run.test} test{status}")
        notes = caveats(results, warnings or [])
        self.warnings_label.setText("\n".join(f"⚠ {note}" for note in notes))
        self.warnings_label.setVisible(bool(notes))
        self._clear_latency()
        self.summary_label.setText("")
        tests = {sample.test for sample in results}
        jobs = disk_jobs(results, reading_order=True)
        if tests & {"mailstorm", "restore"}:
            self._service(results)
        elif jobs:
            self._disk_table(jobs)
            self._latency_charts(jobs)
        elif any(s.test == "cpu" for s in results):
            self._cpu_table(results)
        else:
            self._generic_table(results)
        points = disk_sweep(results)
        self.sweep_data = ([w for w, _ in points], [i for _, i in points])
        self._sweep(*self.sweep_data)
        self.mail_charts.set_results(results)
        self.summary_label.setVisible(bool(self.summary_label.text()))
        self._fit_table()

    # -- tables ----------------------------------------------------------------------------------

    def _disk_table(self, jobs: list[DiskJob]) -> None:
        self.table.clear()
        self.table.setColumnCount(len(DISK_COLUMNS))
        self.table.setHorizontalHeaderLabels(DISK_COLUMNS)
        self.table.setRowCount(len(jobs))
        for row, job in enumerate(jobs):
            figures, meta = job.figures, job.metadata
            self.table.setItem(row, 0, _item(job_label(job.name), job.name, right=False))
            self.table.setItem(row, 1, _item(_number(figures.get("iops"), 0)))
            self.table.setItem(row, 2, _item(_number(figures.get("mbps"), 1)))
            for column, (key, _name) in enumerate(LATENCIES, start=3):
                self.table.setItem(row, column, _item(_number(figures.get(key))))
            self.table.setItem(row, 8, _item(engine_text(meta), str(meta.get("flags") or ""), right=False))
            badge = _item("cached" if job.cached else "direct", "page cache in the way: not the disk alone"
                          if job.cached else "O_DIRECT: the page cache bypassed", right=False)
            badge.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            if job.cached:
                badge.setBackground(CACHED)
            self.table.setItem(row, 9, badge)

    def _cpu_table(self, results: list[Any]) -> None:
        values, metadata = cpu_figures(results)
        rows = [("Score", "single", "multi", "ops/s")]
        rows += [(label, f"single.{k}", f"multi.{k}", "MB/s") for k, label in CPU_KERNELS]
        self.table.clear()
        self.table.setColumnCount(4)
        workers = metadata.get("multi", {}).get("workers") if "multi" in values else None
        self.table.setHorizontalHeaderLabels(["", "Single core", f"All cores ({workers})" if workers
                                              else "All cores", "Unit"])
        self.table.setRowCount(len(rows) + 1)
        for row, (label, single, multi_key, unit) in enumerate(rows):
            self.table.setItem(row, 0, _item(label, right=False))
            for column, key in ((1, single), (2, multi_key)):
                self.table.setItem(row, column, _item(_number(values.get(key), 2 if unit == "ops/s" else 1)))
            self.table.setItem(row, 3, _item(unit, right=False))
        last = len(rows)
        self.table.setItem(last, 0, _item("Scaling (all cores / single)", right=False))
        scaling = _number(values.get("scaling"), 2)
        self.table.setItem(last, 2, _item(scaling if scaling == NO_VALUE else f"{scaling}×"))
        self.table.setItem(last, 3, _item("", right=False))
        found = cpu_versions(results)
        versions = [f"{key}: {found[key]}" for key, _label in VERSION_KEYS if found.get(key)]
        if versions:   # the work runs in these libraries: hosts with other versions ran other code
            self.title.setText(f"{self.title.text()}<br><span style='color:{MUTED}'>"
                               f"{' · '.join(versions)}</span>")

    def _service(self, results: list[Any]) -> None:
        """Mail storm or restore: the labels in the title, the summary lines, then the table."""
        badges = []
        if mail_synthetic(results):
            badges.append(SYNTHETIC_LABEL)
        kind = restore_kind(results)
        if kind == "file":
            badges.append(FILE_LEVEL_LABEL)
        lines = mail_lines(results) + restore_lines(results)
        if restore_non_durable(results):
            badges.append(NON_DURABLE_LABEL)
        if badges:
            self.title.setText(self.title.text() + "".join(f" <span style='{BADGE_STYLE}'>&nbsp;{b}&nbsp;</span>"
                                                           for b in badges))
        self.summary_label.setText("\n".join(lines))
        table = mail_latency_table(results) if any(s.test == "mailstorm" for s in results) else restore_table(results)
        self._fill(table)

    def _fill(self, table: Table) -> None:
        self.table.clear()
        self.table.setColumnCount(len(table.headers))
        self.table.setHorizontalHeaderLabels(list(table.headers))
        self.table.setRowCount(len(table.rows))
        for row, cells in enumerate(table.rows):
            for column, text in enumerate(cells):
                self.table.setItem(row, column, _item(NO_VALUE if text == MISSING else text, right=column > 0))

    def _generic_table(self, results: list[Any]) -> None:
        self.table.clear()
        self.table.setColumnCount(4)
        self.table.setHorizontalHeaderLabels(["Test", "Metric", "Value", "Unit"])
        self.table.setRowCount(len(results))
        for row, sample in enumerate(results):
            self.table.setItem(row, 0, _item(sample.test, right=False))
            self.table.setItem(row, 1, _item(sample.metric, right=False))
            self.table.setItem(row, 2, _item(_number(sample.value)))
            self.table.setItem(row, 3, _item(sample.unit, right=False))

    def _fit_table(self) -> None:
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.table.resizeRowsToContents()
        height = header.height() + sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(height + 2 * self.table.frameWidth() + 2)

    def cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""

    # -- charts ----------------------------------------------------------------------------------

    def _clear_latency(self) -> None:
        self.latency_title.setVisible(False)   # shown again only with disk jobs' charts
        for plot in self.latency_plots.values():
            self.latency_grid.removeWidget(plot)
            plot.deleteLater()
        self.latency_plots.clear()

    def _latency_charts(self, jobs: list[DiskJob]) -> None:
        # the sweep's jobs have their latencies in the table: charts for the main jobs only
        shown = [job for job in jobs if not job.series and any(k in job.figures for k, _ in LATENCIES)]
        for index, job in enumerate(shown):
            plot = small_plot(job_label(job.name))
            heights = [float(job.figures.get(key, 0.0)) for key, _ in LATENCIES]
            plot.addItem(pg.BarGraphItem(x=list(range(len(heights))), height=heights, width=0.6, brush=BAR,
                                         pen=pg.mkPen(None)))
            plot.getPlotItem().getAxis("bottom").setTicks([[(i, name) for i, (_k, name) in enumerate(LATENCIES)]])
            plot.setXRange(-0.6, len(heights) - 0.4, padding=0)
            plot.setYRange(0, max(heights) * 1.15 or 1.0, padding=0)
            self.latency_plots[job.name] = plot
            self.latency_grid.addWidget(plot, index // 3, index % 3)
        self.latency_title.setVisible(bool(shown))

    def _sweep(self, workers: list[int], iops: list[float]) -> None:
        visible = len(workers) >= 2
        self.sweep_plot.setVisible(visible)
        self.sweep_note.setVisible(visible)
        # log2 of the worker count on x, labelled with the counts themselves
        x = [math.log2(w) for w in workers]
        self.sweep_curve.setData(x, iops)
        if not visible:
            return
        self.sweep_plot.getPlotItem().getAxis("bottom").setTicks([[(math.log2(w), str(w)) for w in workers]])
        self.sweep_plot.setXRange(min(x) - 0.3, max(x) + 0.3, padding=0)
        self.sweep_plot.setYRange(0, max(iops) * 1.1 or 1.0, padding=0)
        knee = sweep_knee(workers, iops)
        self.sweep_note.setText(f"IOPS stop growing at about {knee} workers (the next doubling adds under 10%)."
                                if knee is not None else "IOPS still grow at the highest worker count tried.")
