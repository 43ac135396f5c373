"""The customer PDF: outcome on page 1, then specs, results, charts, telemetry and how it was measured.

write_pdf() needs a QGuiApplication to exist (for fonts) and is safe in a worker thread: it touches
no widget. Text stays text and charts are vector shapes; the logo is the only image.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMarginsF, QRectF, Qt
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter

from app.compare.metrics import TEST_LABELS
from app.compare.model import Cell, Comparison
from app.report.content import ReportData, ReportError, host_spec
from app.report.pdf_charts import SERIES_COLOURS, Bar, Curve, bar_chart, bar_chart_height, legend_height, line_chart
from app.report.pdf_pages import (
    ACCENT,
    BEST,
    BEST_SHADE,
    BODY,
    CAVEAT,
    CELL,
    CELL_BOLD,
    H1,
    H2,
    H3,
    MUTED,
    SMALL,
    SMALL_INK,
    TAG,
    Flow,
    Line,
    Style,
    TableCell,
    cell,
    footer,
    table,
)
from app.util.atomic_file import atomic_path
from storage.records import RunStatus

MARGIN = 50.0          # points: about 18 mm
FOOTER_ROOM = 34.0
PAGE_SIZES = {"A4": QPageSize.PageSizeId.A4, "Letter": QPageSize.PageSizeId.Letter}
HEADLINE = Style(15.0, bold=True)
WINNER = Style(15.0, bold=True, color=BEST)
RATIO = Style(15.0, bold=True, color=ACCENT)
TITLE = Style(26.0, bold=True)
SUBTITLE = Style(14.0, color=MUTED)
RATIOS_DEFINED = ("Ratios say how many times as good as the baseline a figure is: value / baseline where higher "
                  "is better (IOPS, MB/s, msg/s, CPU scores), baseline / value for times and latencies. So 3.4x "
                  "always means 3.4 times as good, and 0.50x half as good.")
UTIL_MEANING = ("%util is the share of time the disk had at least one request in flight. On a single spinning "
                "disk 100% means saturated; SSDs, NVMe drives and RAID arrays serve many requests at once, so they "
                "can show 100% with capacity to spare: read %util there together with IOPS and latency.")
ALIGNMENT = ("Telemetry curves are aligned on the start of each test (t = 0, dashed line); negative times are the "
             "moments before the test began.")


def write_pdf(data: ReportData, path: str | Path) -> int:
    """Write the report to path (atomically: a temporary file beside it, then a rename); returns the page count."""
    target = Path(path)
    logo = _logo(data.options.logo_path)
    try:
        with atomic_path(target) as temp:
            pages = _render(data, str(temp), logo)
    except OSError as exc:
        raise ReportError(f"cannot write {target}: {exc.strerror or exc}") from None
    return pages


def _logo(path: str | None) -> QImage | None:
    if not path:
        return None
    if not Path(path).is_file():
        raise ReportError(f"no logo file {path}")
    image = QImage(str(path))
    if image.isNull():
        raise ReportError(f"cannot read the logo {path}: not an image Qt can open")
    return image


def _render(data: ReportData, filename: str, logo: QImage | None) -> int:
    writer = QPdfWriter(filename)
    writer.setResolution(72)   # one device unit is one PDF point
    writer.setPageLayout(QPageLayout(QPageSize(PAGE_SIZES[data.options.page_size]), QPageLayout.Orientation.Portrait,
                                     QMarginsF(0, 0, 0, 0)))
    writer.setTitle(data.options.title)
    writer.setCreator("Benchbay")
    page = QRectF(writer.pageLayout().fullRectPoints())
    content = QRectF(MARGIN, MARGIN, page.width() - 2 * MARGIN, page.height() - 2 * MARGIN - FOOTER_ROOM)
    flow = Flow(writer, content)
    title_page(flow, data, logo)
    flow.new_page()
    specs_section(flow, data.comparison)
    results_section(flow, data)
    flow.new_page()
    charts_section(flow, data.comparison)
    if data.overlays:
        flow.new_page()
        telemetry_section(flow, data)
    flow.new_page()
    methodology_section(flow, data)
    pages = [ops for ops in flow.pages if ops]
    painter = QPainter()
    if not painter.begin(writer):
        raise ReportError(f"cannot write {filename}: the PDF could not be started")
    try:
        left = f"{data.options.title} · {data.options.date.isoformat()}"
        for number, ops in enumerate(pages, start=1):
            if number > 1:
                writer.newPage()
            for op in ops:
                op(painter)
            footer(painter, page, content, left, number, len(pages))
    finally:
        painter.end()
    return len(pages)


# -- page 1 ----------------------------------------------------------------------------------------

def title_page(flow: Flow, data: ReportData, logo: QImage | None) -> None:
    options, comparison = data.options, data.comparison
    if logo is not None:
        box = QRectF(flow.content.right() - 160.0, flow.content.top(), 160.0, 70.0)
        size = logo.size().scaled(int(box.width()), int(box.height()), Qt.AspectRatioMode.KeepAspectRatio)
        target = QRectF(box.right() - size.width(), box.top(), size.width(), size.height())
        flow.draw(lambda p: p.drawImage(target, logo))
        flow.y += 80.0
    flow.text(options.title, TITLE, after=6.0)
    if options.customer:
        flow.text(options.customer, SUBTITLE, after=3.0)
    byline = " · ".join(p for p in (f"Prepared by {options.author}" if options.author else "",
                                    options.date.strftime("%d %B %Y")) if p)
    flow.text(byline, Style(10.5, color=MUTED), after=22.0)
    flow.text("Outcome", H2, after=2.0, keep=40.0)
    flow.text("3.4x means 3.4 times as good: more per second, or less time.", SMALL, after=8.0)
    if not data.headlines:
        flow.text("No headline figure was measured on two of the compared servers; the tables on the next pages "
                  "show every figure.", BODY, after=8.0)
    for line in data.headlines:
        if line.ratio:
            big: Line = [(f"{line.what}: ", HEADLINE), (line.winner, WINNER), (f" {line.ratio} ", RATIO),
                         (line.other, HEADLINE)]
        else:
            big = [(f"{line.what}: ", HEADLINE), (f"{line.winner} and {line.other} tie", HEADLINE)]
        flow.rich([big], after=1.0, keep=14.0)
        detail: Line = [(line.detail, Style(9.5, color=MUTED))]
        if line.tags:
            detail.append((f"   caveat: {line.tags}", Style(9.5, bold=True, color=CAVEAT)))
        flow.rich([detail], after=10.0)
    flow.gap(8.0)
    flow.text("Summary", H3, after=4.0, keep=30.0)
    flow.text(comparison.summary(), BODY, after=10.0)
    if options.notes.strip():
        flow.text("Notes", H3, after=4.0, keep=30.0)
        flow.text(options.notes.strip(), BODY, after=10.0)
    flow.text("Servers", H3, after=4.0, keep=30.0)
    for row in comparison.rows:
        name = row.label + (" (baseline)" if row.baseline else "")
        flow.text(name, Style(9.5, bold=True), after=0.0, keep=12.0)
        flow.text(row.spec, BODY, indent=10.0, after=4.0)


# -- specs and results -----------------------------------------------------------------------------

def specs_section(flow: Flow, comparison: Comparison) -> None:
    flow.heading("Servers", H1, after=8.0)
    headers = ["Server", "CPU", "Sockets / cores / threads", "RAM", "Disks", "Virtualization", "OS / kernel"]
    rows = []
    for row in comparison.rows:
        spec = host_spec(row.facts)
        label = cell(row.label + (" (baseline)" if row.baseline else ""), CELL_BOLD)
        rows.append([label] + [cell(spec[key]) for key in ("cpu", "topology", "ram", "disks", "virt", "os")])
    table(flow, headers, rows)


def results_section(flow: Flow, data: ReportData) -> None:
    comparison = data.comparison
    flow.heading("Results", H1, before=18.0, after=4.0)
    base = comparison.baseline
    legend = "Best value of each column in bold on green."
    if base is not None:
        legend += f" Under each value: how many times as good as the baseline {base.label} it is."
    legend += " Caveat tags (orange) sit beside the figures they concern; the sentences follow each table."
    flow.text(legend, SMALL, after=4.0)
    for test in comparison.tests:
        metrics = [m for m in comparison.metrics if m.test == test]
        rows = []
        shown = [row for row in comparison.rows if any(m.key in row.cells for m in metrics)]
        for row in shown:
            cells = [cell(row.label + (" (baseline)" if row.baseline else ""), CELL_BOLD)]
            for item in metrics:
                cells.append(result_cell(row.cells.get(item.key), base is not None))
            rows.append(cells)
        headers = ["Server"] + [m.header() for m in metrics]
        flow.together(lambda test=test, headers=headers, rows=rows: (
            flow.heading(TEST_LABELS.get(test, test), H2, before=10.0), table(flow, headers, rows)))
        keys = {m.key for m in metrics}
        lines = [f"{row.label}: {c.text}" for row in shown for c in row.caveats if not c.keys or keys & set(c.keys)]
        lines += [f"All servers: {c.text}" for c in comparison.between if not c.keys or keys & set(c.keys)]
        if lines:
            flow.text("Caveats", Style(9.0, bold=True, color=CAVEAT), after=2.0, keep=12.0)
            flow.bullets(list(dict.fromkeys(lines)), SMALL_INK)
        notes = [f"{server}: {note}" for server, run_test, note in data.run_notes if run_test == test]
        if notes:
            flow.text("Notes", Style(9.0, bold=True), after=2.0, keep=12.0)
            flow.bullets(notes, SMALL_INK)


def result_cell(value: Cell | None, with_ratio: bool) -> TableCell:
    if value is None or value.value is None:
        return cell("—", CELL, right=True)
    style = Style(CELL.size, bold=True, color=BEST) if value.best else CELL
    first: Line = [(value.text, style)]
    if value.note:
        first.append((f" ({value.note})", Style(7.5, color=MUTED)))
    lines = [first]
    if with_ratio and value.ratio_text:
        lines.append([(value.ratio_text, Style(7.5, color=ACCENT))])
    if value.tags:
        first.append((f"  {value.tags}", TAG))
    return TableCell(lines, BEST_SHADE if value.best else None, right=False)


# -- charts ----------------------------------------------------------------------------------------

def charts_section(flow: Flow, comparison: Comparison) -> None:
    flow.heading("Charts", H1, after=4.0)
    flow.text("One chart per figure; the best server in green.", SMALL, after=6.0)
    for item in comparison.metrics:
        column = comparison.column(item.key)
        if not column:
            continue
        bars = [Bar(row.label, c.value, c.text, c.best) for row, c in column]
        height = bar_chart_height(len(bars))
        title: Line = [(f"{TEST_LABELS.get(item.test, item.test)} · {item.header()}", H3),
                       (f"   {item.better} is better", SMALL)]
        flow.ensure(flow.lines_height([title]) + height + 4.0)
        flow.rich([title], after=3.0, keep=height)
        flow.place(height, lambda p, r, b=bars: bar_chart(p, r, b))
        flow.gap(10.0)


def telemetry_section(flow: Flow, data: ReportData) -> None:
    flow.heading("Telemetry during the tests", H1, after=4.0)
    flow.text(ALIGNMENT, SMALL, after=8.0)
    labels = list(dict.fromkeys(s.label for overlay in data.overlays for s in overlay.series))
    colours = {label: SERIES_COLOURS[i % len(SERIES_COLOURS)] for i, label in enumerate(labels)}
    for overlay in data.overlays:
        curves = [Curve(s.label + (f" ({s.device})" if s.device else ""), s.t, s.values, colours[s.label])
                  for s in overlay.series]
        legend = legend_height(flow.content.width(), curves,
                               lambda text: flow.width_of(text, SMALL))
        height = 200.0 + legend
        title: Line = [(f"{TEST_LABELS.get(overlay.test, overlay.test)} test · {overlay.title}", H3)]
        flow.ensure(flow.lines_height([title]) + height + 4.0)
        flow.rich([title], after=4.0, keep=height)
        y_title = {"%": "percent", "": "load (runnable + waiting tasks)"}.get(overlay.unit, overlay.unit)
        flow.place(height, lambda p, r, c=curves, u=y_title: line_chart(p, r, c, u, "seconds since the test started"))
        flow.gap(14.0)


# -- methodology -----------------------------------------------------------------------------------

def methodology_section(flow: Flow, data: ReportData) -> None:
    flow.heading("Methodology", H1, after=6.0)
    flow.text("How each run was made. Secret parameters (passwords) are never stored or shown.", SMALL, after=6.0)
    headers = ["Run", "Server", "Test", "Parameters", "Engine and versions", "Agent", "Started", "Duration",
               "Status"]
    rows = [[cell(str(m.run_id), right=True), cell(m.server, CELL_BOLD), cell(m.test), cell(m.parameters),
             cell(m.engine), cell(m.agent_version), cell(m.started), cell(m.duration),
             cell(m.status, CELL if m.status == RunStatus.DONE else Style(CELL.size, bold=True, color=CAVEAT))]
            for m in data.methods]
    table(flow, headers, rows)
    flow.heading("Caveats", H2)
    lines = data.comparison.caveat_lines()
    if lines:
        flow.bullets(lines, BODY)
    else:
        flow.text("None of the known caveats applies to these runs.", BODY)
    flow.heading("How ratios are defined", H2)
    flow.text(RATIOS_DEFINED, BODY)
    flow.heading("What %util means", H2)
    flow.text(UTIL_MEANING, BODY)
    if data.run_notes:
        flow.heading("Notes on the runs", H2)
        flow.bullets([f"{server}: {note}" for server, _test, note in data.run_notes], BODY)

