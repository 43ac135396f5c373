"""The run dialog's Repeat field: a test repeated on `local` from the window forms one group in the store."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from app.engine.repeats import MIN_REPEATS
from app.summary.base import number
from widgets.fingerprint_dialog import FingerprintDialog


def _open_dialog(window, host: str = "local"):
    window.host_list.select_host(host)
    window.live.run_action.trigger()
    dialog = window.live.run_dialog
    assert dialog is not None and dialog.hosts() == [host]
    return dialog


def test_the_repeat_field_goes_into_the_choice(window):
    dialog = _open_dialog(window)
    assert dialog.repeat.count() == 1 and not dialog.repeat.until_stable()
    assert (dialog.choice().repeat, dialog.choice().until_stable) == (1, False)
    dialog.repeat.count_spin.setValue(4)
    assert dialog.choice().repeat == 4 and dialog.repeat.count_spin.suffix() == " runs"
    # until stable: at least three runs; the count becomes the most
    dialog.repeat.count_spin.setValue(1)
    dialog.repeat.stable_box.setChecked(True)
    choice = dialog.choice()
    assert choice.until_stable and choice.repeat >= MIN_REPEATS
    assert dialog.repeat.count_spin.minimum() == MIN_REPEATS and dialog.repeat.count_spin.prefix() == "at most "
    dialog.repeat.stable_box.setChecked(False)
    assert dialog.repeat.count_spin.minimum() == 1 and dialog.repeat.count_spin.prefix() == ""
    dialog.close()


@pytest.mark.integration
def test_a_cpu_test_repeated_from_the_dialog_forms_a_group(window, workbench, qtbot):
    dialog = _open_dialog(window)
    dialog.set_test("cpu")
    dialog.cpu_seconds.setValue(0.5)
    dialog.cpu_workers.setValue(1)
    dialog.repeat.count_spin.setValue(2)
    assert dialog.start_button.isEnabled()
    live = window.live.live
    stored: list[int] = []
    live.run_stored.connect(stored.append)
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    row = dialog.progress.rows["local"]
    # the second run starts afresh in the same row, which says which run it is
    qtbot.waitUntil(lambda: row.host_label.full_text == "local · run 2 of 2", timeout=60_000)
    qtbot.waitUntil(lambda: not live.runs.is_running("local"), timeout=90_000)
    qtbot.waitUntil(lambda: dialog.start_button.isEnabled(), timeout=10_000)
    runs = workbench.store.runs.list(host="local", test="cpu")
    assert len(runs) == 2 and {r.status for r in runs} == {"done"}
    group = runs[0].repeat_group
    assert len(group) == 32 and {r.repeat_group for r in runs} == {group}
    assert [r.repeat_index for r in workbench.store.runs.repeats(group)] == [1, 2]
    assert stored and stored[-1] == max(r.id for r in runs)
    # one row for the group, its bar at 100 %; the results show the group's median and spread
    assert list(dialog.progress.rows) == ["local"] and row.bar.value() == 1000
    panel = live.runs.results
    last = max(r.id for r in runs)
    qtbot.waitUntil(lambda: panel.window is not None and panel.window.isVisible() and last in panel.window.views,
                    timeout=30_000)
    view = panel.window.views[last]
    assert view.group_table.isVisibleTo(view) and "2 runs" in view.group_title.text()
    singles = sorted(sample.value for run in runs for sample in workbench.store.runs.get(run.id).results
                     if sample.metric == "single")
    row_of = {view.group_cell(i, 0): i for i in range(view.group_table.rowCount())}
    single = next(i for label, i in row_of.items() if label.startswith("CPU single core"))
    assert view.group_cell(single, 1).split()[0] == number((singles[0] + singles[1]) / 2)
    assert view.group_cell(single, 2) == f"{number(singles[0])} – {number(singles[1])}"
    panel.window.close()
    dialog.close()


@pytest.mark.integration
def test_until_stable_from_the_dialog_runs_at_least_three_times(window, workbench, qtbot):
    dialog = _open_dialog(window)
    dialog.set_test("cpu")
    dialog.cpu_seconds.setValue(0.5)
    dialog.cpu_workers.setValue(1)
    dialog.repeat.stable_box.setChecked(True)
    dialog.repeat.count_spin.setValue(MIN_REPEATS)   # at most three: the test stays short
    assert dialog.choice().until_stable and dialog.start_button.isEnabled()
    live = window.live.live
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    row = dialog.progress.rows["local"]
    qtbot.waitUntil(lambda: row.host_label.full_text == "local · run 2", timeout=60_000)
    qtbot.waitUntil(lambda: not live.runs.is_running("local"), timeout=120_000)
    qtbot.waitUntil(lambda: dialog.start_button.isEnabled(), timeout=10_000)
    runs = workbench.store.runs.list(host="local", test="cpu")
    assert len(runs) == MIN_REPEATS and {r.status for r in runs} == {"done"}
    assert len({r.repeat_group for r in runs}) == 1 and runs[0].repeat_group
    panel = live.runs.results
    if panel.window is not None:
        panel.window.close()
    dialog.close()


@pytest.mark.integration
def test_a_repeat_from_the_dialog_on_an_ssh_test_host(window, workbench, ssh_host, qtbot, monkeypatch):
    """The same over SSH: the host's key is accepted by the user, both runs land in one group."""
    monkeypatch.setattr(FingerprintDialog, "exec", lambda _self: QDialog.DialogCode.Accepted.value)
    workbench.add_host(ssh_host.spec())
    window.refresh()
    qtbot.waitUntil(lambda: ssh_host.name in window.host_list.host_names())
    dialog = _open_dialog(window, ssh_host.name)
    dialog.set_test("cpu")
    dialog.cpu_seconds.setValue(0.5)
    dialog.cpu_workers.setValue(1)
    dialog.repeat.count_spin.setValue(2)
    live = window.live.live
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    row = dialog.progress.rows[ssh_host.name]
    qtbot.waitUntil(lambda: row.host_label.full_text == f"{ssh_host.name} · run 2 of 2", timeout=90_000)
    qtbot.waitUntil(lambda: not live.runs.is_running(ssh_host.name), timeout=120_000)
    qtbot.waitUntil(lambda: dialog.start_button.isEnabled(), timeout=10_000)
    runs = workbench.store.runs.list(host=ssh_host.name, test="cpu")
    assert len(runs) == 2 and {r.status for r in runs} == {"done"}
    assert len({r.repeat_group for r in runs}) == 1 and runs[0].repeat_group
    panel = live.runs.results
    if panel.window is not None:
        panel.window.close()
    dialog.close()
