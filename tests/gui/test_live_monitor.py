"""Monitoring for real through the Live tab: `local` and sshd test hosts, Stop stores the runs."""
from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDialog

from widgets.dashboard import MODE_OVERLAY
from widgets.fingerprint_dialog import FingerprintDialog
from widgets.host_list import STATUS_OK

pytestmark = [pytest.mark.gui, pytest.mark.integration]


def samples_shown(window, host: str) -> int:
    series = window.live.live.dashboard.series.get(host)
    return series.samples if series is not None else 0


def points(plot) -> int:
    x, _y = plot.curve("util").getOriginalDataset()
    return 0 if x is None else len(x)


def test_monitor_local_then_stop_stores_the_run(window, workbench, qtbot):
    window.host_list.select_host("local")
    window.live.interval_spin.setValue(0.5)
    assert window.live.monitor_action.isEnabled()
    window.live.monitor_action.trigger()
    live = window.live.live
    assert window.tabs.currentWidget() is live
    assert live.stop_button.isEnabled() and live.cancel_button.isEnabled()
    plot = live.dashboard.panels["local"].plots["util"]
    qtbot.waitUntil(lambda: points(plot) >= 5, timeout=20_000)   # ~3 s at 0.5 s
    x, util = plot.curve("util").getOriginalDataset()
    assert x is not None and len(x) >= 5 and np.all(np.diff(x) > 0)
    assert np.all((util >= 0) & (util <= 100))
    qtbot.mouseClick(live.stop_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(live.run_stored, timeout=30_000) as stored:
        pass
    run_id = stored.args[0]
    run = workbench.store.runs.get(run_id)
    assert run.run.status == "done" and run.run.test == "monitor" and run.run.host_name == "local"
    series = {(s.name, s.device): s for s in workbench.store.runs.series(run_id)}
    stored_samples = len(series[("cpu.idle", "")].t)
    assert stored_samples >= samples_shown(window, "local") >= 5   # every sample shown was stored
    assert "stored as run" in live.dashboard.panels["local"].header.status_label.text()
    assert not live.stop_button.isEnabled()
    assert window.host_list.status("local") == STATUS_OK
    qtbot.waitUntil(lambda: window.live.runs_pane.table.model().rowCount() >= 1)


def test_three_monitors_keep_the_gui_responsive(window, workbench, ssh_hosts, qtbot, monkeypatch):
    # the first connection asks about each unknown host key, as gathering facts does
    asked = []

    def accept(dialog: FingerprintDialog) -> int:
        asked.append(dialog.fingerprint_label.text())
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(FingerprintDialog, "exec", accept)
    for host in ssh_hosts:
        workbench.add_host(host.spec())
    window.refresh()
    qtbot.waitUntil(lambda: len(window.host_list.host_names()) == 3)
    names = ["local"] + [h.name for h in ssh_hosts]
    ticks = []
    clock = QTimer()
    clock.setInterval(20)
    clock.timeout.connect(lambda: ticks.append(time.monotonic()))
    clock.start()
    try:
        assert window.live.monitor(names) == names
        live = window.live.live
        live.dashboard.set_mode(MODE_OVERLAY)
        qtbot.waitUntil(lambda: all(samples_shown(window, h) >= 3 for h in names), timeout=60_000)
        begin = time.monotonic()
        frames = live.dashboard.overlay_group.frames
        qtbot.wait(1500)
        window.live.live.stop()
        qtbot.waitUntil(lambda: not live.controller.running_hosts(), timeout=60_000)
    finally:
        clock.stop()
    assert sorted(asked) == sorted(h.host_key_fingerprint for h in ssh_hosts)
    # no frozen event loop: a 20 ms timer kept ticking and the dashboard kept drawing
    during = [t for t in ticks if begin <= t <= begin + 1.5]
    # a frozen loop shows as a gap; how many 20 ms ticks fit in 1.5 s depends on the machine's load (32-75)
    assert len(during) >= 10, f"only {len(during)} timer ticks in 1.5 s"
    assert max(np.diff(during)) < 0.5
    assert live.dashboard.overlay_group.frames - frames >= 20
    assert live.dashboard.overlay.legend_names() == names
    runs = {r.host_name: r for r in workbench.store.runs.list(test="monitor")}
    assert set(runs) == set(names) and all(r.status == "done" for r in runs.values())


def test_closing_the_window_stops_and_stores_monitors_quickly(make_window, workbench, qtbot):
    window = make_window()
    window.live.monitor(["local"])
    qtbot.waitUntil(lambda: samples_shown(window, "local") >= 2, timeout=20_000)
    began = time.monotonic()
    window.close()
    assert time.monotonic() - began < 10   # the monitor's worker sleeps until told to stop
    assert window.live.live.controller.pool.active_count() == 0
    runs = workbench.store.runs.list(test="monitor")
    assert [r.status for r in runs] == ["done"]
    assert len(workbench.store.runs.series(runs[0].id)) > 10
