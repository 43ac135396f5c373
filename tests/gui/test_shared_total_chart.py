"""The shared-storage live view: the total as one curve, each client a band stacked under it, filled in as
the clients' seconds arrive in any order."""
from __future__ import annotations

import pytest

from widgets.host_colours import host_colour
from widgets.shared_total_chart import TOTAL_NAME, SharedTotalChart

pytestmark = pytest.mark.gui


@pytest.fixture
def chart(qtbot):
    widget = SharedTotalChart()
    qtbot.addWidget(widget)
    widget.resize(900, 400)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_the_top_curve_is_the_sum_of_the_clients_each_second(chart, qtbot) -> None:
    chart.set_step("3 clients x 4 threads")
    # seconds arrive out of order and one client is late with its second second
    for client, x, value in (("beta", 1, 200), ("alpha", 1, 100), ("gamma", 1, 50), ("alpha", 2, 110),
                             ("gamma", 2, 60)):
        chart.add_tick(client, x, value)
    qtbot.waitUntil(lambda: chart._total.getData()[0] is not None and len(chart._total.getData()[0]) == 3,
                    timeout=2000)
    assert chart.clients() == ["alpha", "beta", "gamma"]
    assert chart.totals() == [350.0, 170.0]           # beta's second 2 not there yet: it counts 0
    chart.add_tick("beta", 2, 190)
    # drawn from 0 where the step began
    qtbot.waitUntil(lambda: list(chart._total.getData()[1]) == [0.0, 350.0, 360.0], timeout=2000)
    # stacked: alpha at the bottom, beta on alpha, gamma on top: its edge is the total
    edges = chart.stacked()
    assert edges == {"alpha": [100.0, 110.0], "beta": [300.0, 300.0], "gamma": [350.0, 360.0]}
    assert list(chart._edges["beta"].getData()[1]) == [0.0, 300.0, 300.0]
    assert chart._edges["alpha"].opts["pen"].color().name() == host_colour("alpha", chart.clients())
    legend = chart.legend.text()   # above the plot, top band first, as the bands are stacked
    assert legend.index(TOTAL_NAME) < legend.index("gamma") < legend.index("beta") < legend.index("alpha")
    assert "3 clients x 4 threads" in chart.title.text() and "360 op/s total" in chart.title.text()


def test_a_stored_sweep_is_shown_whole_and_clear_empties_it(chart) -> None:
    chart.set_series({"a": [(1, 10), (2, 20)], "b": [(1, 5), (2, 5)]})
    assert chart.totals() == [15.0, 25.0]
    assert list(chart._total.getData()[1]) == [0.0, 15.0, 25.0]


def test_the_pause_between_two_steps_is_drawn_at_zero(chart) -> None:
    chart.set_series({"a": [(1, 10), (2, 20), (5, 30), (6, 40)]})
    assert chart.drawn_xs() == [0.0, 1.0, 2.0, 2.01, 4.0, 5.0, 6.0]
    assert chart.totals(chart.drawn_xs()) == [0.0, 10.0, 20.0, 0.0, 0.0, 30.0, 40.0]
    chart.clear()
    assert chart.totals() == [] and chart._edges == {}
    assert "waiting for the first second" in chart.title.text()
