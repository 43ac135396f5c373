"""A shared-storage sweep started from the window on the built-in local host: its seconds drawn live as
they come, the total stored afterwards, and the same figures in both."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.engine.orchestrator import RunRequestError
from app.engine.shared_run import SharedOutcome, SharedRequest
from app.gui.shared_live import SharedLive
from widgets.shared_total_chart import SharedTotalChart

pytestmark = pytest.mark.gui


@pytest.fixture
def live(qtbot, workbench):
    chart = SharedTotalChart()
    qtbot.addWidget(chart)
    chart.show()
    feed = SharedLive(workbench, chart)
    yield feed
    assert feed.shutdown(60_000)


def test_a_sweep_on_the_local_host_is_drawn_live_and_stored(live, qtbot, workbench, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    seen: list[tuple[str, int]] = []
    live.tick.connect(lambda host, step, second, _ops: seen.append((step, second)))
    outcomes: list[SharedOutcome] = []
    live.finished.connect(outcomes.append)
    live.failed.connect(lambda exc: pytest.fail(f"the sweep failed: {exc}"))
    live.start(SharedRequest(("local",), {"test_dir": str(shared), "clients": [1], "threads": [1, 2],
                                          "runtime": 2, "gap": 0.5, "bs": 4096, "file_size": 65536}))
    qtbot.waitUntil(lambda: bool(outcomes), timeout=90_000)
    outcome = outcomes[0]
    assert outcome.error == "" and [s.name for s in outcome.steps] == ["c1t1", "c1t2"]
    assert seen == [("c1t1", 0), ("c1t1", 1), ("c1t2", 0), ("c1t2", 1)]   # every second, live
    # the chart shows what was stored: the second step begins runtime + gap after the first
    assert live.chart.seconds() == [1.0, 2.0, 3.5, 4.5]
    assert live.chart.totals() == [*outcome.steps[0].total_ops, *outcome.steps[1].total_ops]
    assert "1 client x 2 threads" in live.chart.title.text()
    total = workbench.find_run(outcome.total_run_id)
    assert total is not None and total.run.status == "done"
    assert list(shared.iterdir()) == []


def test_a_wrong_request_is_refused_before_anything_starts(live) -> None:
    with pytest.raises(RunRequestError, match="clients goes up to 2 but 1 host is given"):
        live.start(SharedRequest(("local",), {"test_dir": "/mnt/x", "clients": [1, 2]}))
    assert not live.running


def test_the_window_starts_a_sweep_from_its_form_and_shows_the_total_live(make_window, qtbot, tmp_path: Path) -> None:
    window = make_window()
    shared = window.live.shared
    shared.action.trigger()
    dialog = shared.dialog
    assert dialog is not None
    assert dialog.hosts() == ("local",)   # the hosts selected in the window come ticked
    dialog.host_list.item(0).setCheckState(Qt.CheckState.Unchecked)
    dialog.start()   # nothing ticked, no directory: said under the form, the dialog stays
    assert "tick the client hosts" in dialog.error_label.text() and dialog.isVisible()
    dialog.host_list.item(0).setCheckState(Qt.CheckState.Checked)   # the built-in local host
    dialog.start()
    assert "name the shared directory" in dialog.error_label.text()
    target = tmp_path / "shared"
    target.mkdir()
    dialog.dir_edit.setText(str(target))
    dialog.clients_edit.setText("1,2")
    dialog.start()
    assert "clients goes up to 2 but 1 host is given" in dialog.error_label.text()
    dialog.clients_edit.setText("1")
    dialog.threads_edit.setText("1")
    dialog.runtime_spin.setValue(2)
    dialog.bs_edit.setText("1")
    with qtbot.waitSignal(shared.feed.finished, timeout=90_000) as blocker:
        dialog.start()
        assert not dialog.isVisible()
        assert shared.chart.isVisible() and window.tabs.currentWidget() is window.live.live
        assert not shared.sweep.isVisible()   # the sweep curve comes at the end
    outcome = blocker.args[0]
    assert [s.name for s in outcome.steps] == ["c1t1"] and outcome.total_run_id is not None
    assert shared.chart.totals() == list(outcome.steps[0].total_ops)
    assert f"TOTAL stored as run #{outcome.total_run_id}" in window.statusBar().currentMessage()
    assert shared.sweep.isVisible() and [p.label for p in shared.sweep.points] == ["1x1"]
    assert "no knee within the sweep (one step)" in shared.sweep.caption.text()
