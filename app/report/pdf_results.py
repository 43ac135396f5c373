"""The results pages: per test its table, its caveats beside it, then its charts two to a row.

A figure only one server has is read from the table: a bar chart needs two bars to say anything.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter

from app.compare.dns import DNS_TEST
from app.compare.metrics import TEST_LABELS, Metric
from app.compare.model import Cell, Row
from app.compare.prices import is_price_metric
from app.compare.ties import LEGEND
from app.report.content import Overlay, ReportData
from app.report.figures import short_header, short_label, tie_text, whisker
from app.report.pdf_charts import (
    Bar,
    Curve,
    bar_chart,
    bar_chart_height,
    draw_legend,
    legend_height,
    line_chart,
    titled,
)
from app.report.pdf_dbload import dbload_sweep_block
from app.report.pdf_dns import dns_block
from app.report.pdf_pages import (
    ACCENT,
    BEST,
    BEST_SHADE,
    CAVEAT,
    CELL,
    CELL_BOLD,
    H1,
    H2,
    MUTED,
    SMALL,
    SMALL_INK,
    TAG,
    Flow,
    Line,
    Style,
)
from app.report.pdf_sweep import sweep_block
from app.report.pdf_tables import TableCell, cell, table
from app.report.sweep import SHARED_TEST
from app.summary.dbload_series import DBLOAD

CHART_TITLE = Style(9.0, bold=True)
LINE_CHART_HEIGHT = 135.0
TELEMETRY_LEAD = "During the test:"
WIDE_TABLE = 4      # more figures than this, for no more servers than this: one row per figure
SPREAD = Style(7.0, color=MUTED)
TIE = Style(7.5, bold=True, color=ACCENT)
SWATCH = "■\u00a0"     # a no-break space: the square stays with the name
Paint = Callable[[QPainter, QRectF], None]


def server_cell(data: ReportData, row: Row) -> TableCell:
    """The server's name after a square of its colour, as in the window's legend."""
    colour = QColor(data.colour(row.label))
    lines: list[Line] = [[(SWATCH, Style(CELL_BOLD.size, bold=True, color=colour)), (row.label, CELL_BOLD)]]
    if row.baseline:
        lines.append([("baseline", Style(7.5, color=MUTED))])
    return TableCell(lines)


def result_cell(value: Cell | None, with_ratio: bool, steadiness: str = "", with_note: bool = True) -> TableCell:
    if value is None or value.value is None:
        return cell("—", CELL, right=True)
    style = Style(CELL.size, bold=True, color=BEST) if value.best else Style(CELL.size, color=MUTED) \
        if value.partial else CELL
    first: Line = [(value.text, style)]
    if value.note and with_note:
        first.append((f" ({value.note})", Style(7.5, color=MUTED)))
    lines = [first]
    second: Line = []
    verdict = tie_text(value)   # the factor against the baseline is the verdict's own: never a second ratio
    if verdict:
        second.append((verdict, Style(7.5, color=MUTED) if value.partial or value.kind == "cant_tell" else TIE))
    elif with_ratio and value.ratio_text and value.kind != "reference":
        second.append((value.ratio_text, Style(7.5, color=ACCENT)))
    if value.tags:
        second.append((("  " if second else "") + value.tags, TAG))
    if value.until_stable_missed:
        second.append((("  " if second else "") + value.until_stable_missed, TAG))
    if second:
        lines.append(second)
    if steadiness:
        lines.append([(steadiness, SPREAD)])
    return TableCell(lines, BEST_SHADE if value.best else None)


def results_section(flow: Flow, data: ReportData) -> None:
    """Per test its figures; the heading and the reading guide go with the first table, wherever it lands."""
    comparison = data.comparison

    def heading() -> None:
        flow.heading("Results", H1, before=16.0, after=3.0)
        flow.text(" ".join(legend_sentences(data)), SMALL, after=2.0)
    tests = list(dict.fromkeys(list(comparison.tests) + [run.test for row in comparison.rows for run in row.runs]))
    for index, test in enumerate(tests):
        test_section(flow, data, test, heading if index == 0 else None)
    price_section(flow, data)


def price_section(flow: Flow, data: ReportData) -> None:
    """Figures per price unit, with each price's date and source; nothing at all when no price is set."""
    comparison = data.comparison
    prices = comparison.price_lines()
    metrics = [m for m in comparison.metrics if is_price_metric(m)]
    if not prices or not metrics:
        return
    shown = [row for row in comparison.rows if any(m.key in row.cells for m in metrics)]
    # the price each figure is divided by is listed under the table, not repeated in every cell
    rows = [[server_cell(data, row)] + [result_cell(row.cells.get(m.key), False, with_note=False) for m in metrics]
            for row in shown]
    headers = ["Server"] + [f"{TEST_LABELS.get(m.test, m.test)}: {short_label(m)} ({m.unit})" for m in metrics]

    def block() -> None:
        flow.heading("Performance per price", H2, before=12.0, after=3.0)
        table(flow, headers, rows)
    flow.together(block)
    flow.bullets([f"Price of {line}" for line in prices], SMALL_INK, after=3.0)
    bars = [paint for paint in (bar_block(data, m) for m in metrics) if paint is not None]
    if bars:
        flow.gap(4.0)
        flow.place_row(bar_chart_height(len(shown)) + 6.0, bars)


def figure_cell(item: Metric) -> TableCell:
    """A figure's name in a table's first column, with its unit and which way is better under it."""
    return TableCell([[(short_label(item), CELL_BOLD)], [(f"{item.unit}, {item.better} is better", SMALL)]])


def server_header(data: ReportData, row: Row) -> Line:
    return [(SWATCH, Style(8.0, bold=True, color=QColor(data.colour(row.label)))),
            (row.label + (" (baseline)" if row.baseline else ""), Style(8.0, bold=True))]


def figures_table(flow: Flow, data: ReportData, metrics: Sequence[Metric], shown: Sequence[Row],
                  with_ratio: bool) -> None:
    """Servers down and figures across while the figures are few; figures down and servers across when
    they are many (a disk run has nine) and the servers few, so no column is squeezed to a word."""
    def figure(row: Row, item: Metric) -> TableCell:
        return result_cell(row.cells.get(item.key), with_ratio, data.steadiness.get((row.label, item.key), ""))

    if len(metrics) <= WIDE_TABLE or len(shown) > WIDE_TABLE:
        rows = [[server_cell(data, row)] + [figure(row, m) for m in metrics] for row in shown]
        table(flow, ["Server"] + [short_header(m) for m in metrics], rows)
        return
    rows = [[figure_cell(m)] + [figure(row, m) for row in shown] for m in metrics]
    table(flow, ["Figure"] + [server_header(data, row) for row in shown], rows)


def legend_sentences(data: ReportData) -> list[str]:
    """How to read the tables and charts: only what this report shows."""
    comparison = data.comparison
    several = len(comparison.rows) > 1
    out = ["The best value of each figure in bold green on a light green cell."] if several else []
    if several:
        against = f"the baseline {comparison.baseline.label}" if comparison.baseline is not None else "the leader"
        out.append(f"Under each value: its verdict against {against} (see Verdicts). {LEGEND} The whisker on a "
                   "bar spans a server's repeats, lowest to highest. A run that did not complete is grey, with its "
                   "reason, and never judged.")
    if data.steadiness:
        out.append("Under a headline figure: how steady the server was (see Consistency).")
    if data.caveats:
        out.append("Caveat tags (orange) sit beside the figures they concern, the sentences under each table.")
    return out


def test_section(flow: Flow, data: ReportData, test: str, lead: Callable[[], None] | None = None) -> None:
    comparison = data.comparison
    metrics = [m for m in comparison.metrics if m.test == test and not is_price_metric(m)]
    shown = [row for row in comparison.rows if any(m.key in row.cells for m in metrics)]
    with_ratio = comparison.baseline is not None
    label = TEST_LABELS.get(test, test)

    def block() -> None:
        if lead is not None:
            lead()
        flow.heading(label, H2, before=12.0, after=3.0)
        if shown:
            figures_table(flow, data, metrics, shown, with_ratio)
        else:
            flow.text("No figure of this test was stored for the compared runs.", SMALL_INK)
    flow.together(block)
    notes = data.caveats_of(test)
    if notes:
        flow.text("Caveats", Style(8.5, bold=True, color=CAVEAT), after=1.0, keep=12.0)
        flow.bullets([note.line for note in notes], SMALL_INK, after=3.0)
    unsettled = comparison.settle_lines(test, short_label)
    if unsettled:
        flow.text("What would settle a can't tell yet", Style(8.5, bold=True), after=1.0, keep=12.0)
        flow.bullets(unsettled, SMALL_INK, after=3.0)
    run_notes = [f"{server}: {note}" for server, run_test, note in data.run_notes if run_test == test]
    if run_notes:
        flow.text("Notes", Style(8.5, bold=True), after=1.0, keep=12.0)
        flow.bullets(run_notes, SMALL_INK, after=3.0)
    if test == SHARED_TEST:
        sweep_block(flow, data)   # the curve says more than a bar per step
    if test == DBLOAD:
        dbload_sweep_block(flow, data)
    if test == DNS_TEST:
        dns_block(flow, data)     # every resolver and pass: the table above holds one of them
    bars = [paint for paint in (bar_block(data, m) for m in metrics) if paint is not None]
    if bars:
        flow.gap(4.0)
        # three to a row, but two rows of two rather than a row of three and one of one
        flow.place_row(bar_chart_height(len(shown)) + 6.0, bars, columns=2 if len(bars) in (1, 2, 4) else 3)
    overlays = [overlay for overlay in data.overlays if overlay.test == test]
    if overlays:
        flow.gap(4.0)
        telemetry_block(flow, data, overlays)


def telemetry_block(flow: Flow, data: ReportData, overlays: Sequence[Overlay]) -> None:
    """The test's telemetry charts two to a row under one legend: each server is one colour in all of them."""
    devices: dict[str, list[str]] = {}
    for overlay in overlays:
        for series in overlay.series:
            found = devices.setdefault(series.label, [])
            if series.device and series.device not in found:
                found.append(series.device)
    keys = [Curve(label + (f" ({', '.join(found)})" if found else ""), (), (), QColor(data.colour(label)))
            for label, found in devices.items()]
    lead = flow.width_of(TELEMETRY_LEAD, CHART_TITLE) + 10.0
    legend = legend_height(flow.content.width() - lead, keys, lambda text: flow.width_of(text, SMALL_INK)) + 4.0
    charts = [overlay_block(data, overlay) for overlay in overlays]
    flow.ensure(legend + LINE_CHART_HEIGHT)

    def paint(painter: QPainter, rect: QRectF) -> None:
        titled(painter, rect, [[(TELEMETRY_LEAD, CHART_TITLE)]])
        draw_legend(painter, rect.adjusted(lead, 0.0, 0.0, 0.0), keys)
    flow.place(legend, paint)
    flow.place_row(LINE_CHART_HEIGHT, charts)


def bar_block(data: ReportData, item: Metric) -> Paint | None:
    """One figure's bars, or None when fewer than two servers have it (the table says it all)."""
    column = data.comparison.column(item.key)
    if len(column) < 2:
        return None
    bars = []
    for row, value in column:
        span = whisker(value)
        bars.append(Bar(row.label, value.value, value.text, value.best, QColor(data.colour(row.label)),
                        span.low if span else None, span.high if span else None))
    title: list[Line] = [[(short_label(item), CHART_TITLE)], [(f"{item.unit}, {item.better} is better", SMALL)]]

    def paint(painter: QPainter, rect: QRectF) -> None:
        bar_chart(painter, titled(painter, rect, title), bars)
    return paint


def overlay_block(data: ReportData, overlay: Overlay) -> Paint:
    curves = [Curve(s.label, s.t, s.values, QColor(data.colour(s.label))) for s in overlay.series]
    y_title = {"%": "percent", "": "load (runnable + waiting tasks)"}.get(overlay.unit, overlay.unit)
    x_title = "seconds since the storm began" if overlay.test == "mailstorm" else \
        "seconds since the first step began" if overlay.name.startswith(f"{DBLOAD}.") else \
        "seconds since the test started"
    title: list[Line] = [[(overlay.title, CHART_TITLE)]]

    def paint(painter: QPainter, rect: QRectF) -> None:
        line_chart(painter, titled(painter, rect, title), curves, y_title, x_title, with_legend=False)
    return paint

