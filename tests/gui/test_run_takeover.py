"""A test started on a monitored host takes its monitoring over: one sampler at a time, one panel,
one continuous series; monitoring starts again when the test ends, and the results come up."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

pytestmark = [pytest.mark.gui, pytest.mark.integration]


def test_a_test_on_a_monitored_host_takes_over_its_monitor(window, workbench, qtbot):
    window.host_list.select_host("local")
    window.live.interval_spin.setValue(0.5)
    window.live.monitor_action.trigger()
    live = window.live.live
    series = live.dashboard.series["local"]
    panel = live.dashboard.panels["local"]
    qtbot.waitUntil(lambda: series.samples >= 4, timeout=20_000)

    window.live.run_action.trigger()
    dialog = window.live.run_dialog
    item = dialog.host_list.item(window.host_list.host_names().index("local"))
    assert item.text() == "local — monitored: the test takes over"
    assert dialog.hosts() == ["local"]
    dialog.set_test("idle")
    dialog.idle_warmup.setValue(0.5)
    dialog.idle_measure.setValue(2.0)

    sampling_during_test = []   # whether the monitor still sampled when the test's phases ran
    live.runs.event.connect(lambda host, event: sampling_during_test.append(live.controller.is_running(host))
                            if event.get("type") == "phase_start" else None)
    shown = []   # the progress bar after each of the test's events (connected after the progress area)
    live.runs.event.connect(lambda host, event: shown.append((event.get("type"), live.progress.rows[host].bar.value()))
                            if live.progress.rows[host].bar.maximum() else None)
    stored = []
    live.run_stored.connect(stored.append)
    before = series.samples
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    row = live.progress.rows["local"]
    assert live.runs.is_running("local")
    qtbot.waitUntil(lambda: len(stored) >= 2, timeout=40_000)   # the monitor, then the test
    monitor_run, test_run = (workbench.store.runs.get(run_id).run for run_id in stored[:2])
    assert (monitor_run.test, monitor_run.status) == ("monitor", "done")
    assert (test_run.test, test_run.status) == ("idle", "done")
    assert sampling_during_test and not any(sampling_during_test)
    assert row.bar.value() == 1000 and f"run #{test_run.id}" in row.status_label.full_text
    values = [value for _kind, value in shown]
    assert len(values) >= 4 and values == sorted(values)
    assert shown[-1] == ("done", 1000) and max(values[:-1]) < 1000   # 100 % only when the agent is done

    # monitoring comes back by itself; the same panel and series go on, time only moving forward
    qtbot.waitUntil(lambda: live.controller.is_running("local"), timeout=10_000)
    during = series.samples
    qtbot.waitUntil(lambda: series.samples >= during + 3, timeout=20_000)
    assert live.dashboard.series["local"] is series and live.dashboard.panels["local"] is panel
    assert list(live.dashboard.series) == ["local"] and during > before
    x, _ = series.buffer("cpu.busy").view()
    assert np.all(np.diff(x) > 0) and x[-1] - x[0] > 4
    assert max(np.diff(x)) < 15   # the hand-overs leave no long hole
    # the results came up by themselves
    panel_results = live.runs.results
    qtbot.waitUntil(lambda: panel_results.window is not None and panel_results.window.isVisible(), timeout=10_000)
    assert test_run.id in panel_results.window.views
    panel_results.window.close()
    dialog.close()


def test_cancelling_a_test_that_waits_for_its_monitor_keeps_the_host_monitored(window, workbench, qtbot):
    from app.engine.orchestrator import RunRequest

    window.live.interval_spin.setValue(0.5)
    window.live.monitor(["local"])
    live = window.live.live
    series = live.dashboard.series["local"]
    qtbot.waitUntil(lambda: series.samples >= 2, timeout=20_000)
    assert live.run_tests([RunRequest("local", "idle", {"phases": [["m", "Measure", 5.0]]})]) == ["local"]
    row = live.progress.rows["local"]
    assert row.status_label.full_text == "stopping its monitor first…"
    live.runs.cancel("local")   # before the monitor has stopped: the test never starts
    assert not live.runs.is_running("local") and row.status_label.full_text.startswith("cancelled")
    assert row.bar.maximum() == 1000 and row.bar.value() < 1000
    qtbot.waitUntil(lambda: live.controller.is_running("local"), timeout=20_000)   # monitored again
    during = series.samples
    qtbot.waitUntil(lambda: series.samples >= during + 2, timeout=20_000)
    assert not workbench.store.runs.list(test="idle")
