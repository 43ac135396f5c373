"""The customer PDF: outcome and servers on page 1, then per test its figures and charts, then how it was
measured and the appendix.

write_pdf() needs a Qt application to exist (for fonts; ensure_application() makes one where none runs, as
on the command line) and is safe in a worker thread: it touches no widget. Text stays text and charts are
vector shapes; the logo is the only image.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QMarginsF, QRectF, Qt
from PySide6.QtGui import QImage, QPageLayout, QPageSize, QPainter, QPdfWriter

from app.compare.ties import LEGEND
from app.report.content import ReportData, ReportError, host_spec
from app.report.pdf_appendix import methodology_section
from app.report.pdf_pages import (
    ACCENT,
    BEST,
    BODY,
    CAVEAT,
    H2,
    H3,
    MUTED,
    SMALL,
    Flow,
    Line,
    Style,
    footer,
)
from app.report.pdf_results import results_section, server_cell
from app.report.pdf_tables import cell, table
from app.util.atomic_file import atomic_path

MARGIN = 50.0          # points: about 18 mm
FOOTER_ROOM = 34.0
LAST_PAGE_MIN = 0.2   # a last page filled less than this is "near-empty": try tighter gaps
SPACINGS = (1.0, 0.75, 0.5)
PAGE_SIZES = {"A4": QPageSize.PageSizeId.A4, "Letter": QPageSize.PageSizeId.Letter}
HEADLINE = Style(15.0, bold=True)
_app: Any = None   # the application made for drawing a PDF where none ran: lives as long as the process


def ensure_application() -> None:
    """A Qt application for the PDF's fonts, where none exists (the command line): a QApplication, drawn
    offscreen without a display, so whatever runs in this process later (a window, a test) has the
    widgets' application it needs rather than a bare QGuiApplication it cannot replace."""
    global _app
    from PySide6.QtCore import QCoreApplication

    if QCoreApplication.instance() is not None:
        return
    from PySide6.QtWidgets import QApplication

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _app = QApplication(["benchbay"])
WINNER = Style(15.0, bold=True, color=BEST)
RATIO = Style(15.0, bold=True, color=ACCENT)
STANDING = Style(11.5)
STANDING_NAME = Style(11.5, bold=True)
# ahead and behind in the accent, a tie plain, can't tell muted: a reader sees at once which say something
VERDICT_STYLES = {"ahead": Style(11.5, bold=True, color=ACCENT), "behind": Style(11.5, bold=True, color=ACCENT),
                  "tie": STANDING, "cant_tell": Style(11.5, color=MUTED)}
TITLE = Style(26.0, bold=True)
SUBTITLE = Style(14.0, color=MUTED)

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
    flow = _lay_out(writer, content, data, logo)
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


def _lay_out(writer: QPdfWriter, content: QRectF, data: ReportData, logo: QImage | None) -> Flow:
    """The pages' contents. A last page holding only a few lines is avoided by laying the report out
    again with tighter gaps between blocks (never smaller text); the first layout without one is taken."""
    best: Flow | None = None
    for spacing in SPACINGS:
        flow = Flow(writer, content)
        flow.spacing = spacing
        title_page(flow, data, logo)
        results_section(flow, data)     # on page 1 too when the first table fits there
        methodology_section(flow, data)
        count = sum(1 for ops in flow.pages if ops)
        if best is None or count < sum(1 for ops in best.pages if ops):
            best = flow
        if count == 1 or flow.last_page_filled() >= LAST_PAGE_MIN:
            return flow
    return best if best is not None else flow


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
    if any(line.standings for line in data.headlines):
        flow.text(f"{LEGEND} A tie is within the range shown; can't tell yet says what would settle it.", SMALL,
                  after=8.0)
    if not data.headlines:
        flow.text("None of the compared runs measured a headline figure; the tables on the next pages show every "
                  "figure there is.", BODY, after=8.0)
    for line in data.headlines:
        # the winner's colour only for a lead: beside ties and "can't tell yet" the name is plain
        big: Line = [(f"{line.what}: ", HEADLINE), (line.winner, WINNER if line.role == "leads with" else HEADLINE)]
        if line.alone:
            big = [(f"{line.what}: ", HEADLINE), (line.value, RATIO), (f" on {line.winner}", HEADLINE)]
        elif line.baseline:
            big += [(" (baseline) ", HEADLINE), (line.value, RATIO)]
        else:
            big += [(f" {line.role} ", HEADLINE), (line.value, RATIO)]
        big.append((f"   {line.detail}", Style(9.5, color=MUTED)))
        if line.tags:
            big.append((f"   caveat: {line.tags}", Style(9.5, bold=True, color=CAVEAT)))
        flow.rich([big], after=1.0, keep=14.0 + 14.0 * len(line.standings))
        for standing in line.standings:
            style = VERDICT_STYLES.get(standing.verdict, STANDING)
            entry: Line = [("    " + standing.row + ": ", STANDING_NAME), (standing.text, style)]
            if standing.tags:
                entry.append((f"   caveat: {standing.tags}", Style(9.5, bold=True, color=CAVEAT)))
            flow.rich([entry], after=0.5)
        flow.gap(7.0)
    flow.gap(6.0)
    flow.text("Summary", H3, after=3.0, keep=30.0)
    # the standings are the lines above: the summary adds who was compared and the caveats, not them again
    flow.text(comparison.overview(), BODY, after=8.0)
    if options.notes.strip():
        flow.text("Notes", H3, after=3.0, keep=30.0)
        flow.text(options.notes.strip(), BODY, after=8.0)
    specs_section(flow, data)


def specs_section(flow: Flow, data: ReportData) -> None:
    flow.heading("Servers", H2, before=6.0, after=4.0)
    headers = ["Server", "CPU", "Sockets / cores / threads", "RAM", "Disks", "Virtualization", "OS / kernel"]
    rows = []
    for row in data.comparison.rows:
        spec = host_spec(row.facts)
        rows.append([server_cell(data, row)] + [cell(spec[key]) for key in ("cpu", "topology", "ram", "disks", "virt",
                                                                            "os")])
    table(flow, headers, rows)
