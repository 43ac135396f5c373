"""The sweep curve of each database-load run in the PDF: ops/s by clients, one line per server, the knee ringed.

Drawn by the shared-storage sweep's chart (app/report/pdf_sweep.py) with clients alone on the axis; which
step is the knee, and by which rule, is said in the lines above the chart, not on it.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter

from app.report.content import ReportData
from app.report.pdf_charts import titled
from app.report.pdf_pages import SMALL, Flow, Line
from app.report.pdf_sweep import SWEEP_CHART_HEIGHT, TITLE, sweep_chart
from app.report.sweep import Sweep, SweepPoint


def dbload_sweeps(data: ReportData) -> list[Sweep]:
    """Each run's steps as sweep points (threads 1: one connection per client)."""
    out = []
    for run in data.dbload:
        points = tuple(SweepPoint(str(step.step), step.clients, 1, step.ops) for step in run.load.steps)
        knee = run.load.knee_step
        out.append(Sweep(run.label, run.run_id, points, str(knee.step) if knee is not None else None))
    return out


def dbload_sweep_block(flow: Flow, data: ReportData) -> None:
    """The sweep of every database-load run of the comparison, full width, kept on one page."""
    found = dbload_sweeps(data)
    if not found or not any(len(s.points) > 1 for s in found):
        return
    colours = {sweep.label: QColor(data.colour(sweep.label)) for sweep in found}
    title: list[Line] = [[("Sweep: ops/s by clients", TITLE)]]
    for run in data.dbload:
        said = run.load.knee_text() or "knee not stored"
        best = run.load.best
        title.append([(f"{run.label}: {said}" + (f"; best {best.ops:,.0f} ops/s at {best.label}" if best else ""),
                       SMALL)])

    def paint(painter: QPainter, rect: QRectF) -> None:
        sweep_chart(painter, titled(painter, rect, title), found, colours, x_title="clients",
                    y_title="ops/s (median of the seconds of the step)", tick=lambda clients, _threads: str(clients))
    flow.gap(4.0)
    flow.place(SWEEP_CHART_HEIGHT + 10.0 * len(data.dbload), paint)
