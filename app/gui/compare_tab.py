"""The Compare tab: pick stored runs, see them side by side, keep notes, save the comparison, export it.

Everything that reads or writes the store (or a file) runs in the window's WorkerPool; the slots here get
plain data (RunInput, SavedComparison, AlignedSeries) and only update widgets. The exports are in
app.gui.compare_exports.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.compare.dbload import curves_of, dbload_runs
from app.compare.dbload_server import overlay_curves
from app.compare.dns import DnsLine, dns_comparison
from app.compare.model import Comparison, RunInput, build, load_inputs
from app.errors import USER_ERRORS
from app.gui.compare_choices import comparison_view
from app.gui.compare_exports import CompareExports
from app.gui.compare_prices import ComparePrices
from app.gui.compare_saved import choose_saved, open_saved, save_comparison
from app.gui.workers import Worker, WorkerPool
from app.workbench import Workbench
from storage.records import HostPrice, RunRecord, SavedComparison
from widgets.chart_theme import MUTED
from widgets.format import one_line
from widgets.note_editor import NoteEditor
from widgets.run_picker import RunPicker
from widgets.saved_comparisons import SavedComparisonsDialog

DEFAULT_TITLE = "Server comparison"


class CompareTab(QWidget):
    """The run picker and the run note above; the comparison, its notes and the exports below."""

    message = Signal(str)       # for the window's status bar
    runs_changed = Signal()     # notes stored, runs imported: the window reloads its run list

    def __init__(self, workbench: Workbench, pool: WorkerPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareTab")
        self.bench = workbench
        self.pool = pool
        self.inputs: list[RunInput] = []
        self.comparison: Comparison | None = None
        self.dns_lines: tuple[DnsLine, ...] = ()    # every resolver and pass of the dns runs shown (CSV too)
        self.baseline_run_id: int | None = None
        self.saved: SavedComparison | None = None
        self.saved_dialog: SavedComparisonsDialog | None = None
        self._serial = 0            # the latest compare/open request: older answers are dropped
        self._overlay_serial = 0

        self.picker = RunPicker()
        self.note_editor = NoteEditor()
        self.view = comparison_view()
        self.title_edit = QLineEdit()
        self.title_edit.setObjectName("comparisonTitle")
        self.title_edit.setPlaceholderText(DEFAULT_TITLE)
        self.title_edit.setToolTip("The comparison's title: saved with it, and the PDF's title")
        self.save_button = self._button("Save comparison", "saveComparisonButton",
                                        "Keep these runs, the baseline, the title and the notes to reopen later")
        self.open_button = self._button("Open saved…", "openSavedButton", "Reopen a saved comparison")
        self.notes_edit = QPlainTextEdit()
        self.notes_edit.setObjectName("comparisonNotes")
        self.notes_edit.setPlaceholderText("What the reader should know: saved with the comparison, "
                                           "shown on the PDF's first page")
        self.notes_edit.setTabChangesFocus(True)
        self.notes_edit.setFixedHeight(64)
        self.notes_edit.hide()
        # the run picker and the notes fold away: on a projector the comparison gets the height
        self.picker_toggle = self._fold_button("Runs", "pickerToggle",
                                               "Show or hide the run picker and the run notes")
        self.notes_toggle = self._fold_button("Notes on this comparison", "notesToggle",
                                              "Show or hide the comparison's notes (saved with it, on the PDF)")
        self.exports = CompareExports(self)
        self.prices = ComparePrices(self, lambda: self._show(self.baseline_run_id))
        self.status_label = QLabel()
        self.status_label.setObjectName("compareStatus")
        self.status_label.setStyleSheet(f"color: {MUTED};")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        top = QHBoxLayout()
        top.setContentsMargins(4, 4, 4, 0)
        top.addWidget(self.picker_toggle)
        top.addSpacing(8)
        top.addWidget(QLabel("Title"))
        top.addWidget(self.title_edit, 1)
        top.addWidget(self.save_button)
        top.addWidget(self.open_button)
        exports = QHBoxLayout()   # the exports and what they are doing, side by side
        exports.setContentsMargins(4, 0, 4, 0)
        for button in self.exports.buttons:
            exports.addWidget(button)
        exports.addWidget(self.prices.button)
        exports.addSpacing(8)
        exports.addWidget(self.exports.progress)
        exports.addWidget(self.status_label, 1)
        exports.addWidget(self.exports.open_file_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 4)
        right_layout.addLayout(top)
        right_layout.addLayout(exports)
        right_layout.addWidget(self.view, 1)
        right_layout.addWidget(self.notes_toggle, 0, Qt.AlignmentFlag.AlignLeft)
        right_layout.addWidget(self.notes_edit)
        # the picker above the comparison: the comparison's table and charts need the tab's whole width
        chooser = QWidget()
        chooser_layout = QHBoxLayout(chooser)
        chooser_layout.setContentsMargins(0, 0, 0, 0)
        chooser_layout.addWidget(self.picker, 3)
        chooser_layout.addWidget(self.note_editor, 2)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setObjectName("compareSplitter")
        splitter.addWidget(chooser)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 560])
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        self.chooser = chooser
        self.picker_toggle.setChecked(True)
        self.picker_toggle.toggled.connect(self.show_picker)
        self.notes_toggle.toggled.connect(self.show_notes)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        self.picker.compare_requested.connect(self.compare)
        self.picker.selection_changed.connect(self.note_editor.set_runs)
        self.note_editor.save_requested.connect(self.save_run_notes)
        self.view.baselineChanged.connect(self.set_baseline)
        self.view.overlayRequested.connect(self.load_overlay)
        self.save_button.clicked.connect(lambda _checked=False: self.save_comparison())
        self.open_button.clicked.connect(lambda _checked=False: self.choose_saved())
        self.view.clear("Pick two or more runs on the left and click “Compare”.")
        self._update_buttons()

    def _fold_button(self, text: str, name: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setText(text)
        button.setToolTip(tip)
        button.setCheckable(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setArrowType(Qt.ArrowType.RightArrow)
        button.setAutoRaise(True)
        button.toggled.connect(lambda shown: button.setArrowType(Qt.ArrowType.DownArrow if shown
                                                                 else Qt.ArrowType.RightArrow))
        return button

    def show_picker(self, shown: bool) -> None:
        """Unfold (or fold away) the run picker and the run notes above the comparison."""
        self.chooser.setVisible(shown)
        if self.picker_toggle.isChecked() != shown:
            self.picker_toggle.setChecked(shown)

    def show_notes(self, shown: bool) -> None:
        self.notes_edit.setVisible(shown)
        if self.notes_toggle.isChecked() != shown:
            self.notes_toggle.setChecked(shown)
        if shown:
            self.notes_edit.setFocus()

    def has_unsaved_changes(self) -> bool:
        """A comparison on screen that was never saved, or whose title or notes changed since."""
        if self.comparison is None:
            return False
        if self.saved is None:
            return True
        return (self.title() != (self.saved.title or DEFAULT_TITLE)
                or self.notes_edit.toPlainText().strip() != (self.saved.notes or "").strip()
                or self.prices.changed_since(self.saved))

    def _button(self, text: str, name: str, tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setToolTip(tip)
        return button

    # -- jobs ------------------------------------------------------------------------------------

    def run_job(self, fn: Callable[..., Any], *args: Any, on_done: Callable[[Any], None] | None = None,
                what: str = "", on_failed: Callable[[str], None] | None = None) -> Worker:
        worker = Worker(fn, *args)
        if on_done is not None:
            worker.finished.connect(on_done)
        worker.failed.connect(lambda exc: self._failed(what, exc, on_failed))
        return self.pool.start(worker, key="compare")

    def _failed(self, what: str, exc: BaseException, on_failed: Callable[[str], None] | None) -> None:
        if not isinstance(exc, (*USER_ERRORS, ValueError, OSError)):
            import sys

            sys.excepthook(type(exc), exc, exc.__traceback__)
        reason = one_line(str(exc)) or type(exc).__name__
        text = f"{what}: {reason}" if what else reason
        if on_failed is not None:
            on_failed(text)
        self.show_status(text, to_window=True)

    def show_status(self, text: str, to_window: bool = False) -> None:
        """The tab's status line; failures and imports (started from the Runs tab) also go to the window's."""
        self.status_label.setText(one_line(text, 300))
        self.status_label.setToolTip(text)
        if to_window:
            self.message.emit(text)

    # -- runs and the comparison -----------------------------------------------------------------

    def set_runs(self, runs: list[RunRecord]) -> None:
        """The stored runs (loaded by the window) for the picker."""
        self.picker.set_runs(runs)

    def compare(self, run_ids: list[int], baseline_run_id: int | None = None) -> None:
        """Load these runs in a worker and show their comparison (a new, unsaved one)."""
        if not run_ids:
            return
        self._serial += 1
        serial = self._serial
        self.saved = None
        self.prices.clear()   # a new comparison: its servers' inventory prices, none of the last one's
        self.picker.select_ids(run_ids)
        self.show_status(f"Loading {len(run_ids)} run{'s' if len(run_ids) != 1 else ''}…")
        self.run_job(load_inputs, self.bench, list(run_ids), what="Comparing",
                     on_done=lambda inputs: self._loaded(serial, inputs, baseline_run_id))

    def _loaded(self, serial: int, inputs: list[RunInput], baseline_run_id: int | None) -> None:
        if serial != self._serial:
            return
        self.inputs = inputs
        self._show(baseline_run_id)
        if self.comparison is not None:
            rows = len(self.comparison.rows)
            self.show_status(f"{len(inputs)} runs compared: {rows} server{'s' if rows != 1 else ''}")
            self.show_picker(False)   # the comparison gets the height; "Runs" unfolds the picker again

    def _show(self, baseline_run_id: int | None) -> None:
        self.dns_lines = ()
        try:
            self.comparison = build(self.inputs, baseline_run_id, self.prices.prices)
            self.baseline_run_id = baseline_run_id
        except ValueError as exc:
            self.comparison = None
            self.baseline_run_id = None
            self.view.clear(str(exc))
        else:
            self.view.set_comparison(self.comparison)
            results = {item.record.id: item.results for item in self.inputs}
            self.view.set_dbload([curves_of(run) for run in dbload_runs(self.comparison, results)])
            self.dns_lines = dns_comparison(((run.record.id, run.record.host_name, run.results) for run in self.inputs),
                                            {run.record.id: run.record.started_at for run in self.inputs}).lines
            self.view.set_dns(self.dns_lines)
        self._update_buttons()

    def set_baseline(self, run_id: int | None) -> None:
        """Rebuild with another baseline; the runs are already loaded."""
        if not self.inputs or run_id == self.baseline_run_id:
            return
        self._show(run_id)

    def load_overlay(self, name: str, test: str | None) -> None:
        if self.comparison is None:
            return
        self._overlay_serial += 1
        serial = self._overlay_serial
        # a database load's curves are its server's, where recorded (app.compare.dbload_server)
        self.run_job(overlay_curves, self.bench, self.comparison, name, test, what="Loading telemetry",
                     on_done=lambda curves: serial == self._overlay_serial and self.view.set_overlays(curves))

    def clear(self) -> None:
        """Forget the comparison on screen (the stored runs and saved comparisons stay)."""
        self._serial += 1
        self.inputs = []
        self.comparison, self.dns_lines = None, ()
        self.baseline_run_id = None
        self.saved = None
        self.prices.clear()
        self.title_edit.clear()
        self.notes_edit.clear()
        self.view.clear("Pick two or more runs on the left and click “Compare”.")
        self._update_buttons()

    def run_ids(self) -> list[int]:
        return [run.record.id for run in self.inputs]

    def title(self) -> str:
        return self.title_edit.text().strip() or DEFAULT_TITLE

    def comparison_prices(self) -> dict[str, HostPrice | None]:
        """The prices set for this comparison (over the inventory's; None: no price here)."""
        return dict(self.prices.prices)

    # -- notes -----------------------------------------------------------------------------------

    def save_run_notes(self, run_ids: list[int], text: str) -> None:
        bench = self.bench

        def job() -> tuple[list[int], str]:
            for run_id in run_ids:
                bench.set_run_notes(run_id, text)
            return run_ids, text

        self.run_job(job, what="Saving the note", on_done=self._notes_saved)

    def _notes_saved(self, data: tuple[list[int], str]) -> None:
        run_ids, text = data
        self.note_editor.saved(run_ids, text)
        self.show_status(f"Note saved on run {', '.join(f'#{i}' for i in run_ids)}")
        self.runs_changed.emit()

    # -- saved comparisons (app.gui.compare_saved) -------------------------------------------------

    def save_comparison(self) -> None:
        """Save the comparison on screen, or update the saved one it was opened from."""
        save_comparison(self)

    def choose_saved(self) -> None:
        """List the saved comparisons (in a worker), then let the user pick one."""
        choose_saved(self)

    def open_saved(self, comparison_id: int) -> None:
        open_saved(self, comparison_id)

    def _update_buttons(self) -> None:
        shown = self.comparison is not None
        self.save_button.setEnabled(shown)
        self.exports.set_enabled(shown)
        self.prices.set_enabled(shown)
