"""The sweep curve: each step's total in the order of its streams, the knee marked on its point and named
above the plot."""
from __future__ import annotations

import pytest

from widgets.shared_sweep_chart import SharedSweepChart, SweepPoint

pytestmark = pytest.mark.gui


def test_steps_are_shown_by_streams_with_the_knee_marked(qtbot) -> None:
    chart = SharedSweepChart()
    qtbot.addWidget(chart)
    chart.show()
    # in run order (clients outer): 1x1, 1x4, 2x1, 2x4
    chart.set_sweep([SweepPoint("1x1", 1, 1, 100.0), SweepPoint("1x4", 1, 4, 300.0),
                     SweepPoint("2x1", 2, 1, 190.0), SweepPoint("2x4", 2, 4, 320.0)],
                    "2x4", "knee at 2 clients x 4 threads: 320 op/s")
    assert [p.label for p in chart.points] == ["1x1", "2x1", "1x4", "2x4"]   # 1, 2, 4, 8 streams
    assert list(chart._curve.getData()[1]) == [100.0, 190.0, 300.0, 320.0]
    assert chart.knee_index() == 3
    xs, ys = chart._knee.getData()
    assert list(xs) == [3] and list(ys) == [320.0]
    assert "knee at 2 clients x 4 threads" in chart.caption.text()
    chart.set_sweep([SweepPoint("1x1", 1, 1, 100.0)], None, "no knee within the sweep (one step)")
    assert chart.knee_index() is None and len(chart._knee.getData()[0]) == 0
