"""The Compare tab's saved comparisons: save the one on screen (or update the one it was opened from), list
them, open one again (its runs, baseline, title, notes, export fields and prices); store work in workers."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from app.gui.saved_comparison_loader import OpenedComparison, missing_runs_text, open_saved_comparison
from storage.records import SavedComparison
from widgets.saved_comparisons import SavedComparisonsDialog


def save_comparison(tab: Any) -> None:
    """Save the comparison on screen, or update the saved one it was opened from."""
    if not tab.inputs:
        return
    uids = [run.record.uid for run in tab.inputs]
    baseline = next((run.record.uid for run in tab.inputs if run.record.id == tab.baseline_run_id), None)
    fields = {"title": tab.title(), "run_uids": uids, "baseline_uid": baseline,
              "notes": tab.notes_edit.toPlainText().strip(), **tab.exports.saved_fields()}
    fields["options"] = {**fields["options"], **tab.prices.options()}
    bench = tab.bench
    saved_id = tab.saved.id if tab.saved is not None else None

    def job() -> SavedComparison:
        return bench.save_comparison(saved_id, **fields)

    tab.run_job(job, what="Saving the comparison", on_done=lambda saved: _comparison_saved(tab, saved))


def _comparison_saved(tab: Any, saved: SavedComparison) -> None:
    tab.saved = saved
    tab.title_edit.setText(saved.title)
    tab.show_status(f"Comparison “{saved.title}” saved")


def choose_saved(tab: Any) -> None:
    """List the saved comparisons (in a worker), then let the user pick one."""
    tab.run_job(tab.bench.list_comparisons, what="Listing saved comparisons",
                on_done=lambda saved: _pick_saved(tab, saved))


def _pick_saved(tab: Any, saved: list[SavedComparison]) -> None:
    if tab.saved_dialog is not None:
        tab.saved_dialog.close()
    dialog = SavedComparisonsDialog(saved, tab)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.accepted.connect(lambda: dialog.chosen_id() is not None and open_saved(tab, dialog.chosen_id()))
    dialog.destroyed.connect(lambda: setattr(tab, "saved_dialog", None))
    tab.saved_dialog = dialog
    dialog.open()


def open_saved(tab: Any, comparison_id: int) -> None:
    tab._serial += 1
    serial = tab._serial
    tab.show_status("Opening the saved comparison…")
    tab.run_job(open_saved_comparison, tab.bench, comparison_id, what="Opening the comparison",
                on_done=lambda opened: _opened(tab, serial, opened))


def _opened(tab: Any, serial: int, opened: OpenedComparison) -> None:
    if serial != tab._serial:
        return
    saved = opened.saved
    tab.saved = saved
    tab.inputs = opened.inputs
    tab.title_edit.setText(saved.title)
    tab.notes_edit.setPlainText(saved.notes)
    tab.exports.restore_fields(saved)
    tab.prices.restore(saved)
    tab.picker.select_ids(tab.run_ids())
    if saved.notes:
        tab.show_notes(True)
    if tab.inputs:
        tab._show(opened.baseline_run_id)
        if tab.comparison is not None:
            tab.show_picker(False)
    else:
        tab.comparison = None
        tab.baseline_run_id = None
        tab.view.clear("None of this comparison's runs are in this store.")
        tab._update_buttons()
    text = f"Opened “{saved.title}”"
    if opened.missing_uids:
        text += f" — {missing_runs_text(opened.missing_uids, len(saved.run_uids))}"
    tab.show_status(text)
