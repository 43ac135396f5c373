"""The Compare tab in the real main window on a real store: pick runs, compare, notes, save/reopen, exports."""
from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from pypdf import PdfReader
from PySide6.QtCore import QDate, Qt
from PySide6.QtGui import QColor, QPixmap

from app.compare.table import csv_text
from storage.records import ResultSample, SeriesData
from widgets.export_dialog import ExportChoice

pytestmark = pytest.mark.gui
GiB = 1 << 30


def wait_idle(qtbot, window, timeout: int = 10_000) -> None:
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=timeout)


def facts(cpu: str, disk_rotational: bool) -> dict:
    return {"cpu": {"model": cpu, "sockets": 1, "cores": 8, "threads": 16},
            "memory": {"total_bytes": 32 * GiB}, "virtualization": "none", "kernel": "6.1.0", "os": "Debian 12",
            "disks": [{"name": "sda", "size_bytes": 960_000_000_000, "rotational": disk_rotational}]}


def disk_results(iops: float, p99: float) -> list[ResultSample]:
    meta = {"engine": "fio", "engine_version": "fio-3.33", "direct": True, "cached": False, "file_size": 2 * GiB}
    return [ResultSample("disk", "randread_4k.iops", iops, "IOPS", meta),
            ResultSample("disk", "randread_4k.lat_p99", p99, "ms", meta),
            ResultSample("disk", "syncwrite_4k.iops", iops / 10, "IOPS", dict(meta, sync="fdatasync"))]


def store_disk_run(store, host: str, cpu: str, iops: float, p99: float, rotational: bool) -> int:
    runs = store.runs
    run_id = runs.create(host, "disk", {"size": "2G", "runtime": 30}, agent_version="0.1.0")
    runs.add_facts(run_id, facts(cpu, rotational))
    runs.add_results(run_id, disk_results(iops, p99))
    t = [float(i) for i in range(12)]
    runs.add_series(run_id, [SeriesData("disk.util", "sda", "%", t, [min(99.0, 10.0 * i) for i in range(12)]),
                             SeriesData("load.1", "", "", t, [0.5 + i / 4 for i in range(12)])])
    runs.add_events(run_id, [{"seq": 1, "t": 0.0, "type": "telemetry", "t0": 0.0},
                             {"seq": 2, "t": 2.0, "type": "phase_start", "phase": "randread_4k"}])
    runs.finish(run_id, "done", engine="fio", engine_version="fio-3.33")
    return run_id


@pytest.fixture
def two_hosts(workbench) -> tuple[int, int]:
    old = store_disk_run(workbench.store, "old-server", "Xeon E5-2620", 5_000, 0.8, rotational=True)
    new = store_disk_run(workbench.store, "new-server", "EPYC 7313P", 17_000, 0.2, rotational=False)
    return old, new


@pytest.fixture
def tab(window, two_hosts, qtbot):
    compare = window.compare
    window.tabs.setCurrentWidget(compare)
    window.reload_runs()   # the runs were stored after the window opened
    qtbot.waitUntil(lambda: len(compare.picker.shown_runs()) == 2, timeout=20_000)
    return compare


def compared(tab, qtbot, ids: list[int]) -> None:
    tab.picker.select_ids(ids)
    qtbot.mouseClick(tab.picker.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.comparison is not None and len(tab.comparison.rows) == len(ids), timeout=20_000)


def test_pick_two_hosts_compare_then_a_baseline_gives_ratios(window, tab, two_hosts, qtbot):
    old, new = two_hosts
    compared(tab, qtbot, [old, new])
    wait_idle(qtbot, window)
    table = tab.view.table
    assert table.labels == ["old-server", "new-server"]
    assert "17,000" in table.figure("new-server", "disk:randread_4k.iops")
    assert tab.comparison.baseline is None and "3.4x" not in table.figure("new-server", "disk:randread_4k.iops")
    assert tab.save_button.isEnabled() and tab.exports.pdf_button.isEnabled()

    tab.view.baseline_picker.setCurrentIndex(tab.view.baseline_picker.findText("old-server"))
    assert tab.baseline_run_id == old and tab.comparison.baseline.label == "old-server"
    assert "ahead of old-server by 3.4" in table.figure("new-server", "disk:randread_4k.iops")
    assert table.figure("old-server", "disk:randread_4k.iops").endswith("baseline")
    # one p99 figure each, 4x apart: within how far a tail latency wanders from run to run
    assert "can't tell yet vs old-server (" in table.figure("new-server", "disk:randread_4k.lat_p99")
    # the telemetry overlay was loaded in the pool: one curve per server
    qtbot.waitUntil(lambda: len(tab.view.overlay.curves) == 2, timeout=20_000)


def test_compare_selected_in_the_runs_pane_opens_the_compare_tab(window, tab, two_hosts, qtbot):
    pane = window.live.runs_pane
    qtbot.waitUntil(lambda: pane.table.model().rowCount() == 2)
    pane.table.selectAll()
    qtbot.mouseClick(pane.compare_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is tab
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=20_000)
    assert {row.label for row in tab.comparison.rows} == {"old-server", "new-server"}


def test_picker_filters_by_host_text_and_date(tab, two_hosts, qtbot):
    old, _new = two_hosts
    picker = tab.picker
    picker.host_combo.setCurrentIndex(picker.host_combo.findText("old-server"))
    assert [r.id for r in picker.shown_runs()] == [old]
    picker.host_combo.setCurrentIndex(0)
    qtbot.keyClicks(picker.text_edit, "new")
    assert [r.host_name for r in picker.shown_runs()] == ["new-server"]
    picker.text_edit.clear()
    picker.until_edit.setDate(QDate.currentDate().addDays(-2))
    assert picker.shown_runs() == []
    picker.until_edit.setDate(QDate.currentDate())
    assert len(picker.shown_runs()) == 2
    assert not picker.compare_button.isEnabled()


def test_save_clear_and_reopen_restores_runs_baseline_and_notes(window, tab, two_hosts, workbench, qtbot):
    old, new = two_hosts
    compared(tab, qtbot, [old, new])
    tab.view.baseline_picker.setCurrentIndex(tab.view.baseline_picker.findText("old-server"))
    tab.title_edit.setText("Disk refresh for ACME")
    tab.notes_edit.setPlainText("Both measured on a quiet Sunday.")
    qtbot.mouseClick(tab.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.saved is not None, timeout=20_000)
    stored = workbench.store.comparisons.list()
    assert [(s.title, s.notes) for s in stored] == [("Disk refresh for ACME", "Both measured on a quiet Sunday.")]

    tab.clear()
    assert tab.comparison is None and tab.notes_edit.toPlainText() == ""
    tab.choose_saved()
    qtbot.waitUntil(lambda: tab.saved_dialog is not None and tab.saved_dialog.isVisible(), timeout=20_000)
    assert "Disk refresh for ACME" in tab.saved_dialog.list.item(0).text()
    tab.saved_dialog.accept()
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=20_000)
    wait_idle(qtbot, window)
    assert tab.run_ids() == [old, new]
    assert tab.comparison.baseline.label == "old-server"
    assert tab.view.baseline_picker.currentText() == "old-server"
    assert tab.title_edit.text() == "Disk refresh for ACME"
    assert tab.notes_edit.toPlainText() == "Both measured on a quiet Sunday."
    assert sorted(r.id for r in tab.picker.selected_runs()) == sorted([old, new])


def test_reopening_with_a_run_gone_names_it_instead_of_failing(window, tab, two_hosts, workbench, qtbot):
    old, new = two_hosts
    compared(tab, qtbot, [old, new])
    tab.save_comparison()
    qtbot.waitUntil(lambda: tab.saved is not None, timeout=20_000)
    gone_uid = workbench.store.runs.get(new).run.uid
    workbench.store.runs.delete(new)
    tab.open_saved(tab.saved.id)
    qtbot.waitUntil(lambda: "not in this store" in tab.status_label.text(), timeout=20_000)
    wait_idle(qtbot, window)
    assert gone_uid[:8] in tab.status_label.text()
    assert tab.view.table.labels == ["old-server"]


def test_a_run_note_is_stored(window, tab, two_hosts, workbench, qtbot):
    old, _new = two_hosts
    tab.picker.select_ids([old])
    editor = tab.note_editor
    assert editor.title.text().startswith(f"Note on run #{old}")
    assert not editor.save_button.isEnabled()
    qtbot.keyClicks(editor.text, "RAID controller without BBU")
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: workbench.store.runs.get(old).run.notes == "RAID controller without BBU",
                    timeout=20_000)
    # the window reloads the runs: the picker shows the note
    qtbot.waitUntil(lambda: tab.picker.run(old).notes == "RAID controller without BBU", timeout=20_000)
    wait_idle(qtbot, window)
    assert editor.state.text() == "Saved" or not editor.save_button.isEnabled()


def test_export_pdf_through_the_dialog_runs_in_the_pool(window, tab, two_hosts, qtbot, tmp_path):
    compared(tab, qtbot, list(two_hosts))
    dialog = tab.exports.open_pdf_dialog()
    qtbot.waitExposed(dialog)
    out = tmp_path / "report.pdf"
    dialog.customer_edit.setText("ACME Corp")
    dialog.output_edit.setText(str(out))
    dialog.page_combo.setCurrentText("Letter")
    assert dialog.ok_button.isEnabled()
    before = tab.exports.pdf_jobs
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    # accept returned at once: the report is being written in a worker, the window answers meanwhile
    assert window.pool.active_count() >= 1 and tab.status_label.text() == "Writing PDF…"
    assert tab.exports.progress.isVisible()
    qtbot.waitUntil(lambda: tab.exports.pdf_jobs == before + 1, timeout=60_000)
    pages = len(PdfReader(out).pages)
    assert pages >= 2
    assert tab.status_label.text() == f"PDF written: {pages} pages — {out}"
    assert tab.exports.open_file_button.isVisible() and not tab.exports.progress.isVisible()
    text = " ".join(PdfReader(out).pages[0].extract_text().split())
    assert "ACME Corp" in text
    width, height = (float(v) for v in PdfReader(out).pages[0].mediabox.upper_right)
    assert (round(width), round(height)) == (612, 792)


def test_the_export_dialog_offers_the_last_customer_and_author_again_after_a_restart(
        window, tab, two_hosts, workbench, make_window, qtbot, tmp_path):
    compared(tab, qtbot, list(two_hosts))
    dialog = tab.exports.open_pdf_dialog()
    dialog.customer_edit.setText("ACME Corp")
    dialog.author_edit.setText("Dana Sales")
    dialog.output_edit.setText(str(tmp_path / "report.pdf"))
    before = tab.exports.pdf_jobs
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.exports.pdf_jobs == before + 1, timeout=60_000)
    again = tab.exports.open_pdf_dialog()   # the next export, same window
    assert (again.customer_edit.text(), again.author_edit.text()) == ("ACME Corp", "Dana Sales")
    again.reject()
    from app.engine.settings import Settings

    # kept in the settings: a Benchbay started afresh offers them too
    assert (Settings.load(workbench.home).report_customer, Settings.load(workbench.home).report_author) == (
        "ACME Corp", "Dana Sales")
    workbench.settings = Settings.load(workbench.home)
    second = make_window()
    second.compare_runs(list(two_hosts))
    qtbot.waitUntil(lambda: second.compare.comparison is not None, timeout=20_000)
    fresh = second.compare.exports.open_pdf_dialog()
    assert (fresh.customer_edit.text(), fresh.author_edit.text()) == ("ACME Corp", "Dana Sales")
    fresh.reject()


def test_export_pdf_error_is_one_line(window, tab, two_hosts, qtbot, tmp_path):
    compared(tab, qtbot, list(two_hosts))
    choice = ExportChoice("T", "", "", date.today(), str(tmp_path / "missing-logo.png"), "A4",
                          str(tmp_path / "r.pdf"))
    tab.exports.export_pdf(choice)
    qtbot.waitUntil(lambda: tab.status_label.text().startswith("PDF not written:"), timeout=30_000)
    wait_idle(qtbot, window)
    assert "missing-logo.png" in tab.status_label.text() and "\n" not in tab.status_label.text()
    assert not (tmp_path / "r.pdf").exists() and not tab.exports.open_file_button.isVisible()


def test_csv_export_is_the_comparison_table(window, tab, two_hosts, qtbot, tmp_path):
    compared(tab, qtbot, list(two_hosts))
    out = tmp_path / "table.csv"
    tab.exports.export_csv(str(out))
    qtbot.waitUntil(lambda: tab.status_label.text() == f"CSV written — {out}", timeout=20_000)
    wait_idle(qtbot, window)
    assert out.read_text(encoding="utf-8") == csv_text(tab.comparison)


def test_export_runs_json_then_import_skips_what_is_stored(window, tab, two_hosts, workbench, qtbot, tmp_path):
    old, new = two_hosts
    compared(tab, qtbot, [old, new])
    out = tmp_path / "runs.json"
    tab.exports.export_runs_json(str(out))
    qtbot.waitUntil(lambda: tab.status_label.text() == f"Exported 2 runs — {out}", timeout=20_000)
    document = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(run["host_name"] for run in document["runs"]) == ["new-server", "old-server"]

    workbench.store.runs.delete(new)
    tab.exports.import_runs(str(out))
    qtbot.waitUntil(lambda: "imported" in tab.status_label.text(), timeout=20_000)
    assert tab.status_label.text() == "imported 1 run, skipped 1 already stored"
    # the window reloads its runs: the imported run is back in the picker
    qtbot.waitUntil(lambda: {r.host_name for r in tab.picker.shown_runs()} == {"old-server", "new-server"},
                    timeout=20_000)
    wait_idle(qtbot, window)
    assert window.statusBar().currentMessage() == "imported 1 run, skipped 1 already stored"


def test_import_of_a_file_that_is_not_a_run_document(window, tab, qtbot, tmp_path):
    bad = Path(tmp_path / "notes.json")
    bad.write_text("{not json", encoding="utf-8")
    tab.exports.import_runs(str(bad))
    qtbot.waitUntil(lambda: tab.status_label.text().startswith("Import failed:"), timeout=20_000)
    wait_idle(qtbot, window)
    assert "not a Benchbay run document" in tab.status_label.text()


def test_export_dialog_checks_logo_and_output_and_previews_the_logo(window, tab, two_hosts, qtbot, tmp_path):
    compared(tab, qtbot, list(two_hosts))
    dialog = tab.exports.open_pdf_dialog()
    qtbot.waitExposed(dialog)
    dialog.output_edit.setText(str(tmp_path / "no-such-dir" / "r.pdf"))
    assert not dialog.ok_button.isEnabled() and "No folder" in dialog.problem.text()
    dialog.output_edit.setText(str(tmp_path / "r"))
    dialog.logo_edit.setText(str(tmp_path / "missing.png"))
    assert not dialog.ok_button.isEnabled() and "No logo file" in dialog.problem.text()
    logo = QPixmap(64, 32)
    logo.fill(QColor("#2f6db5"))
    assert logo.save(str(tmp_path / "logo.png"))
    dialog.logo_edit.setText(str(tmp_path / "logo.png"))
    assert dialog.ok_button.isEnabled() and not dialog.logo_preview.pixmap().isNull()
    choice = dialog.choice()
    assert choice.output == str(tmp_path / "r.pdf") and choice.logo_path == str(tmp_path / "logo.png")
    dialog.reject()
