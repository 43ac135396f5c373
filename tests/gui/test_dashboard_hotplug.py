"""A disk that appears mid-run (hot-plugged) and goes again: the live view and the replay of the stored run
pick it up, let the user show it, and stop its curves where it went; nothing raises."""
from __future__ import annotations

import random

import numpy as np
import pytest

from app.gui.replay import ReplayView, load_stored_run
from remote.telemetry.sample import samples_to_series
from tests.fixtures.telemetry import synthetic_sample
from tests.gui.conftest import charts_made
from widgets.dashboard import MODE_GRID, MODE_OVERLAY, Dashboard

pytestmark = pytest.mark.gui
T0 = 1_700_000_000.0
NEW = "zram1"


def run_with_a_hotplug() -> list:
    """90 one-second samples: vda throughout; zram1, the busy one, from the 31st to the 60th."""
    rng = random.Random(7)
    samples = []
    for i in range(90):
        disks = (NEW, "vda") if 30 <= i < 60 else ("vda",)
        samples.append(synthetic_sample(T0 + i + 1, i, 1.0, disks, rng))
    return samples


@pytest.fixture
def dashboard(qtbot):
    board = Dashboard()
    qtbot.addWidget(board)
    board.resize(1200, 900)
    board.show()
    qtbot.waitExposed(board)
    return board


def drawn(dashboard: Dashboard, host: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = dashboard.panels[host].plots["util"].curve("util").getOriginalDataset()
    return (np.asarray(x), np.asarray(y)) if x is not None else (np.array([]), np.array([]))


def test_a_disk_that_appears_live_is_listed_shown_and_stops_when_gone(dashboard, qtbot):
    samples = run_with_a_hotplug()
    combo = None
    for i, sample in enumerate(samples):
        dashboard.add_sample("db1", sample)
        dashboard.frame()
        if i == 29:
            combo = dashboard.panels["db1"].header.device_combo
            assert [combo.itemText(n) for n in range(combo.count())] == ["vda"]
        if i == 30:
            assert NEW in [combo.itemText(n) for n in range(combo.count())]
        if i == 45:
            dashboard.set_mode(MODE_OVERLAY)      # the overlay takes the new disk too
            dashboard.frame()
            assert NEW in [dashboard.overlay.headers["db1"].device_combo.itemText(n)
                           for n in range(dashboard.overlay.headers["db1"].device_combo.count())]
            dashboard.set_mode(MODE_GRID)
    # the user shows the hot-plugged disk: its curve holds its 30 intervals and ends where it went
    index = [combo.itemText(n) for n in range(combo.count())].index(NEW)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    dashboard.frame()
    x, util = drawn(dashboard, "db1")
    assert np.allclose(x, np.arange(31, 61))
    assert np.allclose(util, [s.disks[NEW]["util"] for s in samples[30:60]])
    assert dashboard.series["db1"].samples == 90


def test_a_stored_run_with_a_hotplugged_disk_replays(workbench, qtbot):
    samples = run_with_a_hotplug()
    runs = workbench.store.runs
    run_id = runs.create("local", "idle", {"seconds": len(samples)})
    runs.add_series(run_id, samples_to_series(samples, T0))
    runs.add_events(run_id, [
        {"seq": None, "t": T0 - 0.5, "type": "started", "run_dir": "/tmp/x", "interval": 1.0},
        {"seq": 1, "t": T0 + 91.0, "type": "done", "status": "done", "error": ""},
        {"seq": None, "t": T0 + 91.0, "type": "telemetry", "t0": T0, "interval": 1.0, "samples": len(samples)},
    ])
    stored = load_stored_run(workbench, run_id)
    assert sum(NEW in s.disks for s in stored.samples) == 30
    view = ReplayView()
    qtbot.addWidget(view)
    view.resize(1200, 900)
    view.show()
    qtbot.waitExposed(view)
    try:
        view.open_runs([stored], replay=True, speed=60)      # 1.5 s: the disk comes and goes while playing
        with qtbot.waitSignal(view.clock.finished, timeout=10_000):
            pass
        board = view.dashboard
        charts_made(qtbot, board)
        qtbot.waitUntil(lambda: board.series[stored.label].samples == 90)
        board.set_device(stored.label, "vda")
        qtbot.waitUntil(lambda: len(drawn(board, stored.label)[0]) == 90)
        board.set_device(stored.label, NEW)
        board.frame()
        x, util = drawn(board, stored.label)
        assert np.allclose(x, np.arange(31, 61))
        assert np.allclose(util, [s.disks[NEW]["util"] for s in samples[30:60]])
    finally:
        view.stop()
