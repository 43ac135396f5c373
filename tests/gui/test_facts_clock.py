"""The facts view says how far the host's clock is from this computer's, and warns when it is far off."""
from __future__ import annotations

from widgets.facts_view import FactsView

FACTS = {"hostname": "db1", "os": "Debian 12", "kernel": "6.1", "cpu": {}, "memory": {}, "disks": []}


def test_a_clock_hours_off_is_a_warning_and_a_close_one_a_figure(qtbot) -> None:
    view = FactsView()
    qtbot.addWidget(view)
    view.set_facts("db1", {**FACTS, "clock": {"offset_s": -18_000.2, "uncertainty_s": 0.001}})
    assert view.value("System", "Time").startswith("5.0 h behind this computer's: set it right (NTP)")
    view.set_facts("db1", {**FACTS, "clock": {"offset_s": 0.0125, "uncertainty_s": 0.001}})
    assert view.value("System", "Time") == "+0.013 s from this computer's"
    view.set_facts("local", FACTS)   # this computer itself: no clock row
    assert view.value("System", "Time") is None
