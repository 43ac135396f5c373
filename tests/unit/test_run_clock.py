"""A run's host clock: one clock for stored times, warnings worded as a person reads them, a slow link said."""
from __future__ import annotations

from remote.clock_offset import ClockOffset, clock_warning, offset_words
from remote.run_clock import LAG_SAY, LagWatch, on_our_clock

FIVE_HOURS = ClockOffset("h", 18_000.0, 0.001, 0.002, 4)


def test_offsets_read_as_a_person_says_them() -> None:
    assert offset_words(18_000.4) == "5.0 h ahead of"
    assert offset_words(-18_000.0) == "5.0 h behind"
    assert offset_words(-300.0) == "5.0 min behind"
    assert offset_words(2.5) == "2.5 s ahead of"
    assert clock_warning("bh1", 18_000.0).startswith("bh1's clock is 5.0 h ahead of this computer's")


def test_the_agents_events_go_on_our_clock_with_the_hosts_beside() -> None:
    agent = {"seq": 3, "t": 1_000_018_000.5, "type": "phase_start"}
    ours = on_our_clock(agent, 18_000.0)
    assert ours == {"seq": 3, "t": 1_000_000_000.5, "host_t": 1_000_018_000.5, "type": "phase_start"}
    workbench = {"seq": None, "t": 1_000_000_000.0, "type": "started"}
    assert on_our_clock(workbench, 18_000.0) is workbench          # already ours
    assert on_our_clock(ours, 18_000.0) is ours                      # never twice
    assert on_our_clock({"seq": 4, "t": None}, 18_000.0) == {"seq": 4, "t": None}


def test_a_slow_link_is_said_once_and_an_outage_is_not_a_slow_link() -> None:
    watch = LagWatch(interval=1.0)
    now = 1_000_000_000.0
    host_now = now + FIVE_HOURS.offset
    # ticks arrive on time: nothing
    assert watch.check(host_now - 1.0, FIVE_HOURS, 0, now, 0.0) == ""
    # 30 s late, but just after a reconnect: catching up, not a slow link
    assert watch.check(host_now - 30.0, FIVE_HOURS, 1, now, 1.0) == ""
    assert watch.check(host_now - 30.0, FIVE_HOURS, 1, now, 1.0 + LAG_SAY / 2) == ""
    assert watch.check(host_now - 1.0, FIVE_HOURS, 1, now, 20.0) == ""   # caught up
    # late, and still late LAG_SAY seconds on, with no outage between: said once
    assert watch.check(host_now - 30.0, FIVE_HOURS, 1, now, 30.0) == ""
    said = watch.check(host_now - 31.0, FIVE_HOURS, 1, now, 30.0 + LAG_SAY)
    assert said.startswith("the link is the bottleneck: telemetry arrives 31 s after the host took it")
    assert watch.check(host_now - 60.0, FIVE_HOURS, 1, now, 100.0) == ""
    # without a measured clock nothing can be told
    assert LagWatch(1.0).check(0.0, None, 0, now, 0.0) == ""
