"""The results of a stored run: warnings first, then a table, latency percentiles and the sweep curve.

Takes plain data (a RunRecord, its ResultSamples, the run's warning messages). Disk results are
"{job}.{quantity}" metrics of the test "disk" (iops, mbps, lat_mean, lat_p50 ... lat_p99.9) with the
engine and direct/cached in their metadata; CPU results are single, multi, scaling and
"{single|multi}.{kernel}"; anything else is listed as metric, value, unit.
"""
from __future__ import annotations

import math
import re
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

from widgets.live_plot import BACKGROUND, INK, MUTED

DISK_COLUMNS = ("Job", "IOPS", "MB/s", "Mean ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "Engine", "I/O")
PERCENTILES = (("lat_mean", "mean"), ("lat_p50", "p50"), ("lat_p95", "p95"), ("lat_p99", "p99"),
               ("lat_p99.9", "p99.9"))
JOB_LABELS = {"randread_4k": "Random read 4 KiB", "randread_1m": "Random read 1 MiB",
              "syncwrite_4k": "Sync write 4 KiB", "syncwrite_1m": "Sync write 1 MiB",
              "seqread_1m": "Sequential read 1 MiB", "seqwrite_1m": "Sequential write 1 MiB"}
KERNEL_LABELS = {"zlib_compress": "zlib compress", "zlib_decompress": "zlib decompress", "sha256": "SHA-256"}
BAR = "#2f6db5"
CACHED = QColor("#f6e3b4")
WARN_STYLE = "background: #fff4d6; border: 1px solid #e5c36b; border-radius: 3px; padding: 4px; color: #5c4500;"
KNEE_GAIN = 1.10    # the sweep "stops growing" where doubling the workers adds less than 10%


def number(value: float | None, decimals: int | None = None) -> str:
    """Thousands separated; a few significant digits for small values."""
    if value is None or math.isnan(value):
        return "—"
    if decimals is None:
        size = abs(value)
        decimals = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else 3
    return f"{value:,.{decimals}f}"


def job_label(job: str) -> str:
    sweep = re.fullmatch(r"sweep_(\w+?)_w(\d+)", job)
    if sweep:
        base = JOB_LABELS.get(sweep.group(1), sweep.group(1))
        count = int(sweep.group(2))
        return f"Sweep: {base[:1].lower()}{base[1:]}, {count} worker{'s' if count != 1 else ''}"
    readahead = re.fullmatch(r"readahead_(\w+?)_ra(\d+)", job)
    if readahead:
        return f"Read-ahead {readahead.group(2)} KiB: sequential read"
    return JOB_LABELS.get(job, job)


def _job_order(job: str) -> tuple[int, int, str]:
    order = list(JOB_LABELS)
    if job in order:
        return (0, order.index(job), job)
    numbers = re.findall(r"\d+$", job)
    return (1 if job.startswith("sweep_") else 2, int(numbers[0]) if numbers else 0, job)


def disk_jobs(results: list[Any]) -> dict[str, dict[str, Any]]:
    """job -> {quantity: value, ..., "meta": metadata} in the order a reader expects."""
    jobs: dict[str, dict[str, Any]] = {}
    for sample in results:
        if sample.test != "disk" or "." not in sample.metric:
            continue
        job, quantity = sample.metric.split(".", 1)
        entry = jobs.setdefault(job, {"meta": {}})
        entry[quantity] = sample.value
        entry["meta"] = {**entry["meta"], **(sample.metadata or {})}
    return {job: jobs[job] for job in sorted(jobs, key=_job_order)}


def sweep_points(jobs: dict[str, dict[str, Any]]) -> tuple[list[int], list[float]]:
    points = sorted((int(m.group(1)), float(entry.get("iops", 0.0))) for job, entry in jobs.items()
                    if (m := re.fullmatch(r"sweep_\w+?_w(\d+)", job)))
    return [w for w, _ in points], [i for _, i in points]


def sweep_knee(workers: list[int], iops: list[float]) -> int | None:
    """The worker count after which more workers stop adding IOPS (None: they still do)."""
    for index in range(len(workers) - 1):
        if iops[index] > 0 and iops[index + 1] < iops[index] * KNEE_GAIN:
            return workers[index]
    return None


def engine_text(meta: dict[str, Any]) -> str:
    engine = {"builtin": "built-in"}.get(str(meta.get("engine") or ""), str(meta.get("engine") or "—"))
    version = str(meta.get("engine_version") or "").removeprefix(f"{engine}-")   # fio says "fio-3.36"
    return f"{engine} {version}".strip()


def caveats(results: list[Any], warnings: list[str]) -> list[str]:
    """What a reader must know before trusting the figures: the run's warnings and what the metadata says."""
    notes = list(dict.fromkeys(warnings))
    jobs = disk_jobs(results)
    cached = [job_label(j) for j, e in jobs.items() if e["meta"].get("cached") or e["meta"].get("direct") is False]
    if cached:
        notes.append(f"Cached I/O (no O_DIRECT) in {len(cached)} job(s): the page cache may be measured, not "
                     "the disk.")
    engines = {engine_text(e["meta"]) for e in jobs.values()}
    if any(e.startswith("built-in") for e in engines):
        notes.append("Measured with the built-in engine (fio was not used): compare with results of the same "
                     "engine.")
    if len(engines) > 1:
        notes.append("Several engines in one run: " + ", ".join(sorted(engines)))
    return notes


def _item(text: str, tip: str = "", right: bool = True) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tip:
        item.setToolTip(tip)
    return item


def _small_plot(title: str, height: int = 170) -> pg.PlotWidget:
    plot = pg.PlotWidget(background=BACKGROUND)
    plot.setFixedHeight(height)   # small multiples: the scroll area must not stretch them
    plot.setTitle(f"<span style='color:{INK}; font-size:9pt'>{title}</span>")
    item = plot.getPlotItem()
    item.hideButtons()
    item.setMenuEnabled(False)
    plot.setMouseEnabled(x=False, y=False)
    for name in ("left", "bottom"):
        item.getAxis(name).setPen(pg.mkPen(MUTED))
        item.getAxis(name).setTextPen(pg.mkPen(MUTED))
    return plot


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
        self.table = QTableWidget()
        self.table.setObjectName("resultsTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.latency_title = QLabel("<b>Latency percentiles</b> (ms, per job)")
        self.latency_grid = QGridLayout()
        self.latency_plots: dict[str, pg.PlotWidget] = {}
        self.sweep_plot = _small_plot("Concurrency sweep: IOPS vs workers", 240)
        self.sweep_curve = self.sweep_plot.plot([], [], pen=pg.mkPen(BAR, width=2), symbol="o", symbolSize=7,
                                                symbolBrush=BAR, symbolPen=None)
        self.sweep_plot.getPlotItem().setLabel("bottom", "workers (log₂)")
        self.sweep_plot.getPlotItem().setLabel("left", "IOPS")
        self.sweep_note = QLabel("")
        self.sweep_note.setStyleSheet(f"color: {MUTED};")
        self.sweep_data: tuple[list[int], list[float]] = ([], [])
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        for widget in (self.title, self.warnings_label, self.table, self.latency_title):
            layout.addWidget(widget)
        layout.addLayout(self.latency_grid)
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
        jobs = disk_jobs(results)
        if jobs:
            self._disk_table(jobs)
            self._latency_charts(jobs)
        elif any(s.test == "cpu" for s in results):
            self._cpu_table(results)
        else:
            self._generic_table(results)
        self.sweep_data = sweep_points(jobs)
        self._sweep(*self.sweep_data)
        self._fit_table()

    # -- tables ----------------------------------------------------------------------------------

    def _disk_table(self, jobs: dict[str, dict[str, Any]]) -> None:
        self.table.clear()
        self.table.setColumnCount(len(DISK_COLUMNS))
        self.table.setHorizontalHeaderLabels(DISK_COLUMNS)
        self.table.setRowCount(len(jobs))
        for row, (job, entry) in enumerate(jobs.items()):
            meta = entry["meta"]
            self.table.setItem(row, 0, _item(job_label(job), job, right=False))
            self.table.setItem(row, 1, _item(number(entry.get("iops"), 0)))
            self.table.setItem(row, 2, _item(number(entry.get("mbps"), 1)))
            for column, (key, _name) in enumerate(PERCENTILES, start=3):
                self.table.setItem(row, column, _item(number(entry.get(key))))
            self.table.setItem(row, 8, _item(engine_text(meta), str(meta.get("flags") or ""), right=False))
            cached = bool(meta.get("cached")) or meta.get("direct") is False
            badge = _item("cached" if cached else "direct", "page cache in the way: not the disk alone" if cached
                          else "O_DIRECT: the page cache bypassed", right=False)
            badge.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            if cached:
                badge.setBackground(CACHED)
            self.table.setItem(row, 9, badge)

    def _cpu_table(self, results: list[Any]) -> None:
        values = {s.metric: s for s in results if s.test == "cpu"}
        rows = [("Score", "single", "multi", "ops/s")]
        rows += [(label, f"single.{k}", f"multi.{k}", "MB/s") for k, label in KERNEL_LABELS.items()]
        self.table.clear()
        self.table.setColumnCount(4)
        multi = values.get("multi")
        workers = (multi.metadata or {}).get("workers") if multi else None
        self.table.setHorizontalHeaderLabels(["", "Single core", f"All cores ({workers})" if workers
                                              else "All cores", "Unit"])
        self.table.setRowCount(len(rows) + 1)
        for row, (label, single, multi_key, unit) in enumerate(rows):
            self.table.setItem(row, 0, _item(label, right=False))
            for column, key in ((1, single), (2, multi_key)):
                sample = values.get(key)
                self.table.setItem(row, column, _item(number(sample.value if sample else None, 2 if unit == "ops/s"
                                                             else 1)))
            self.table.setItem(row, 3, _item(unit, right=False))
        scaling = values.get("scaling")
        last = len(rows)
        self.table.setItem(last, 0, _item("Scaling (all cores / single)", right=False))
        self.table.setItem(last, 2, _item(f"{scaling.value:.2f}×" if scaling else "—"))
        self.table.setItem(last, 3, _item("", right=False))
        meta = (values.get("single") or scaling or next(iter(values.values()), None))
        if meta is not None:
            m = meta.metadata or {}
            versions = [f"{k}: {m[k]}" for k in ("python", "zlib", "openssl") if m.get(k)]
            if versions:   # the work runs in these libraries: hosts with other versions ran other code
                self.title.setText(f"{self.title.text()}<br><span style='color:{MUTED}'>"
                                   f"{' · '.join(versions)}</span>")

    def _generic_table(self, results: list[Any]) -> None:
        self.table.clear()
        self.table.setColumnCount(4)
        self.table.setHorizontalHeaderLabels(["Test", "Metric", "Value", "Unit"])
        self.table.setRowCount(len(results))
        for row, sample in enumerate(results):
            self.table.setItem(row, 0, _item(sample.test, right=False))
            self.table.setItem(row, 1, _item(sample.metric, right=False))
            self.table.setItem(row, 2, _item(number(sample.value)))
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
        for plot in self.latency_plots.values():
            self.latency_grid.removeWidget(plot)
            plot.deleteLater()
        self.latency_plots.clear()

    def _latency_charts(self, jobs: dict[str, dict[str, Any]]) -> None:
        # the sweep's jobs have their latencies in the table: charts for the main jobs only
        shown = [(job, e) for job, e in jobs.items() if not job.startswith(("sweep_", "readahead_"))
                 and any(k in e for k, _ in PERCENTILES)]
        for index, (job, entry) in enumerate(shown):
            plot = _small_plot(job_label(job))
            heights = [float(entry.get(key, 0.0)) for key, _ in PERCENTILES]
            plot.addItem(pg.BarGraphItem(x=list(range(len(heights))), height=heights, width=0.6, brush=BAR,
                                         pen=pg.mkPen(None)))
            plot.getPlotItem().getAxis("bottom").setTicks([[(i, name) for i, (_k, name) in enumerate(PERCENTILES)]])
            plot.setXRange(-0.6, len(heights) - 0.4, padding=0)
            plot.setYRange(0, max(heights) * 1.15 or 1.0, padding=0)
            self.latency_plots[job] = plot
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
