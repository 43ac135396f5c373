"""The Compare tab's exports (PDF report, CSV table, JSON runs) and the JSON import, each in a worker.

The PDF is gathered from the store and drawn in a pool thread: the window stays responsive and the
status line says what is happening, then where the file is (with a button to open it).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt, QUrl, SignalInstance
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QLineEdit, QPlainTextEdit, QProgressBar, QPushButton, QWidget

from app.compare.model import Comparison, RunInput
from app.compare.source import RunSource
from app.compare.table import csv_text
from app.gui.workers import Worker
from app.report.content import ReportOptions, gather
from app.report.pdf_writer import write_pdf
from app.util.atomic_file import atomic_text, write_text_atomically
from app.workbench import Workbench
from storage.records import HostPrice, SavedComparison
from storage.run_exchange import ImportReport
from widgets.export_dialog import ExportChoice, ExportDialog


class ExportSource(Protocol):
    """What the exports use of the Compare tab (which imports this module): also their Qt parent."""

    bench: Workbench
    comparison: Comparison | None
    inputs: list[RunInput]
    saved: SavedComparison | None
    baseline_run_id: int | None
    title_edit: QLineEdit
    notes_edit: QPlainTextEdit
    runs_changed: SignalInstance

    def comparison_prices(self) -> Mapping[str, HostPrice | None]: ...

    def run_ids(self) -> list[int]: ...
    def title(self) -> str: ...
    def window(self) -> QWidget: ...
    def show_status(self, text: str, to_window: bool = False) -> None: ...
    def run_job(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
                what: str = "", on_failed: Callable[[str], None] | None = None) -> Worker: ...


@dataclass(frozen=True)
class PdfWritten:
    path: str
    pages: int


def write_report(source: RunSource, run_ids: list[int], baseline_run_id: int | None, options: ReportOptions,
                 path: str, prices: Mapping[str, HostPrice | None] | None = None) -> PdfWritten:
    """Gather and draw the report (in a worker thread), with the comparison's own prices."""
    data = gather(source, run_ids, baseline_run_id, options, prices)  # type: ignore[arg-type]  # None: unpriced
    return PdfWritten(path, write_pdf(data, path))


def write_text(path: str, text: str) -> str:
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def export_runs_file(bench: Workbench, run_ids: list[int], comparison_id: int | None, path: str) -> tuple[str, int]:
    """Written run by run (Workbench.export_runs): a large export never sits in memory whole."""
    try:
        with atomic_text(path) as out:
            count = bench.export_runs(run_ids, out, comparison_id)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path, count


def import_runs_file(bench: Workbench, path: str) -> ImportReport:
    """Read run by run (Workbench.import_runs), in one transaction."""
    if Path(path).is_dir():
        raise OSError(f"cannot read {path}: it is a directory")
    try:
        with open(path, encoding="utf-8") as handle:
            return bench.import_runs(handle, Path(path).name)
    except OSError as exc:
        raise OSError(f"cannot read {path}: {exc.strerror or exc}") from exc


def import_message(report: ImportReport) -> str:
    imported, skipped = len(report.imported), len(report.skipped)
    text = f"imported {imported} run{'s' if imported != 1 else ''}, skipped {skipped} already stored"
    if report.differing:
        text += (f"; {len(report.differing)} not imported: a different run is stored with the same uid "
                 f"(run {', '.join(str(run_id) for _uid, run_id in report.differing)} kept)")
    if report.comparison_note:
        text += f"; {report.comparison_note}"
    elif report.comparison_id is not None:
        text += "; its saved comparison is in “Open saved…”"
    return text


class CompareExports(QObject):
    """Export buttons, a busy bar and an "Open" button for the file just written; state kept per tab."""

    def __init__(self, tab: ExportSource) -> None:
        super().__init__(tab)
        self.tab = tab
        self.pdf_button = self._button("Export PDF…", "exportPdfButton",
                                       "A report for the customer: summary, specs, results, charts, methodology")
        self.csv_button = self._button("Export CSV…", "exportCsvButton", "The comparison table for a spreadsheet")
        self.json_button = self._button("Export runs (JSON)…", "exportJsonButton",
                                        "The compared runs, whole (facts, results, telemetry), to import elsewhere")
        self.buttons = (self.pdf_button, self.csv_button, self.json_button)
        self.pdf_button.clicked.connect(lambda _checked=False: self.open_pdf_dialog())
        self.csv_button.clicked.connect(lambda _checked=False: self._ask_path("Export the table as CSV", "csv",
                                                                              self.export_csv))
        self.json_button.clicked.connect(lambda _checked=False: self._ask_path("Export the runs as JSON", "json",
                                                                               self.export_runs_json))
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)   # busy: the writer does not say how far it is
        self.progress.setMaximumWidth(120)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.open_file_button = self._button("Open", "openExportButton", "Open the file just written")
        self.open_file_button.hide()
        self.open_file_button.clicked.connect(lambda _checked=False: self.open_written())
        self.written: str | None = None
        self.dialog: ExportDialog | None = None
        self.last_choice: ExportChoice | None = None
        self.pdf_jobs = 0          # PDFs written by this tab (tests check it ran in the pool)
        settings = getattr(getattr(tab, "bench", None), "settings", None)
        # the last report's customer and author, kept in settings.json: offered again after a restart
        self._customer = str(getattr(settings, "report_customer", "") or "")
        self._author = str(getattr(settings, "report_author", "") or "")
        self._page_size = "A4"

    @staticmethod
    def _button(text: str, name: str, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setToolTip(tip)
        return button

    def set_enabled(self, enabled: bool) -> None:
        for button in self.buttons:
            button.setEnabled(enabled)

    def saved_fields(self) -> dict[str, Any]:
        """What a saved comparison keeps of the last report: customer, author, page size."""
        return {"customer": self._customer, "author": self._author, "options": {"page_size": self._page_size}}

    def restore_fields(self, saved: SavedComparison) -> None:
        self._customer, self._author = saved.customer or self._customer, saved.author or self._author
        self._page_size = str(saved.options.get("page_size") or "A4")

    # -- PDF -------------------------------------------------------------------------------------

    def open_pdf_dialog(self) -> ExportDialog | None:
        tab = self.tab
        if tab.comparison is None:
            return None
        if self.dialog is not None:
            self.dialog.raise_()
            return self.dialog
        last = self.last_choice
        output = last.output if last else str(Path.home() / f"{_file_stem(tab.title())}.pdf")
        dialog = ExportDialog(tab.title(), self._customer, self._author, output, self._page_size,
                              last.logo_path if last else None, tab.window())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.export_pdf(dialog.choice()))
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        self.dialog = dialog
        dialog.open()
        return dialog

    def export_pdf(self, choice: ExportChoice) -> None:
        """What the export dialog's Export does: write the report in a worker."""
        tab = self.tab
        if tab.comparison is None or not choice.output:
            return
        self.last_choice = choice
        self._customer, self._author, self._page_size = choice.customer, choice.author, choice.page_size
        self._remember_names(choice)
        if choice.title and choice.title != tab.title():
            tab.title_edit.setText(choice.title)
        options = ReportOptions(title=choice.title or tab.title(), customer=choice.customer, author=choice.author,
                                date=choice.date, logo_path=choice.logo_path, page_size=choice.page_size,
                                notes=tab.notes_edit.toPlainText().strip())
        self._busy("Writing PDF…")
        tab.run_job(write_report, tab.bench, tab.run_ids(), tab.baseline_run_id, options, choice.output,
                    dict(tab.comparison_prices()), what="PDF not written", on_done=self._pdf_written,
                    on_failed=lambda _text: self._idle())

    def _remember_names(self, choice: ExportChoice) -> None:
        bench = getattr(self.tab, "bench", None)
        settings = getattr(bench, "settings", None)
        if settings is None or (settings.report_customer, settings.report_author) == (choice.customer,
                                                                                     choice.author):
            return
        settings.report_customer, settings.report_author = choice.customer, choice.author
        try:
            settings.save(bench.home)
        except OSError as exc:   # a read-only home: the names are kept for this session only
            self.tab.show_status(f"Customer and author not kept for the next start: {exc}")

    def _pdf_written(self, result: PdfWritten) -> None:
        self.pdf_jobs += 1
        self._idle(result.path)
        self.tab.show_status(f"PDF written: {result.pages} page{'s' if result.pages != 1 else ''} — {result.path}")

    # -- CSV and JSON ----------------------------------------------------------------------------

    def export_csv(self, path: str) -> None:
        tab = self.tab
        if tab.comparison is None:
            return
        text = csv_text(tab.comparison, tab.dns_lines)
        self._busy("Writing CSV…")
        tab.run_job(write_text, path, text, what="CSV not written", on_failed=lambda _text: self._idle(),
                    on_done=lambda written: (self._idle(written), tab.show_status(f"CSV written — {written}")))

    def export_runs_json(self, path: str) -> None:
        tab = self.tab
        if not tab.inputs:
            return
        saved_id = tab.saved.id if tab.saved is not None else None
        self._busy("Writing JSON…")
        tab.run_job(export_runs_file, tab.bench, tab.run_ids(), saved_id, path, what="JSON not written",
                    on_failed=lambda _text: self._idle(), on_done=self._json_written)

    def _json_written(self, result: tuple[str, int]) -> None:
        path, count = result
        self._idle(path)
        self.tab.show_status(f"Exported {count} run{'s' if count != 1 else ''} — {path}")

    def ask_import(self, parent: QWidget | None = None) -> None:
        path, _ = QFileDialog.getOpenFileName(parent or self.tab.window(), "Import runs", str(Path.home()),
                                              "Benchbay runs (*.json);;All files (*)")
        if path:
            self.import_runs(path)

    def import_runs(self, path: str) -> None:
        tab = self.tab
        tab.run_job(import_runs_file, tab.bench, path, what="Import failed", on_done=self._imported)

    def _imported(self, report: ImportReport) -> None:
        self.tab.show_status(import_message(report), to_window=True)
        self.tab.runs_changed.emit()

    # -- status ----------------------------------------------------------------------------------

    def _ask_path(self, title: str, suffix: str, then: Any) -> None:
        tab = self.tab
        start = str(Path.home() / f"{_file_stem(tab.title())}.{suffix}")
        path, _ = QFileDialog.getSaveFileName(tab.window(), title, start, f"{suffix.upper()} (*.{suffix})")
        if path:
            then(path if path.lower().endswith(f".{suffix}") else f"{path}.{suffix}")

    def _busy(self, text: str) -> None:
        self.open_file_button.hide()
        self.progress.show()
        self.tab.show_status(text)

    def _idle(self, written: str | None = None) -> None:
        self.progress.hide()
        self.written = written
        self.open_file_button.setVisible(written is not None)

    def open_written(self) -> bool:
        return self.written is not None and QDesktopServices.openUrl(QUrl.fromLocalFile(self.written))


def _file_stem(title: str) -> str:
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in title.strip().lower()).strip("-")
    while "--" in stem:
        stem = stem.replace("--", "-")
    return stem or "comparison"
