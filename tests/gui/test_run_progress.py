"""Per-host progress driven by the agent's recorded event streams: monotonic, 100 % only at the end,
time left that tracks the real end, an overall line per host, Cancel that stays put and asks first."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMessageBox

from widgets import run_estimate
from widgets.run_progress import RunProgress

pytestmark = pytest.mark.gui
EVENTS = Path(__file__).parents[1] / "fixtures" / "run_events"
STREAMS = ("cpu", "disk", "mailstorm", "mailstorm_smtp", "restore", "restore_pg")


class FakeClock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(run_estimate, "now", fake)
    return fake


def recorded(name: str) -> list[dict]:
    return [json.loads(line) for line in (EVENTS / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def seconds_left(text: str) -> float | None:
    match = re.search(r"(\d+):(\d\d) left", text)
    return int(match.group(1)) * 60 + int(match.group(2)) if match else None


@pytest.mark.parametrize("name", STREAMS)
def test_recorded_runs_progress_only_forward_and_end_at_100(qtbot, clock, name):
    events = recorded(name)
    progress = RunProgress()
    qtbot.addWidget(progress)
    row = progress.add_host("db1", expected=600.0, test=events[0].get("test", name))
    t0 = events[0]["t"]
    end = events[-1]["t"]
    clock.t = 1000.0
    values, checked = [], 0
    for event in events:
        clock.t = 1000.0 + (event["t"] - t0)
        progress.add_event("db1", event)
        if event["type"] == "done":
            break
        progress.tick()
        if row.bar.maximum():   # not the busy indicator
            values.append(row.bar.value())
        left = seconds_left(row.time_label.text())
        if left is not None and row.estimate.phase_fraction >= 0.2:
            # once a phase is a fifth done, what it says is left is in the right range
            assert left <= 2 * (end - event["t"]) + 2, (event, row.time_label.text())
            checked += 1
    assert values == sorted(values), "progress went back"
    assert values and max(values) < 1000, "100 % before the run ended"
    assert checked or name == "mailstorm"   # the synthetic storm is over in a blink
    progress.set_outcome("db1", "done", run_id=5)
    assert row.bar.value() == 1000 and row.time_label.text() == "—"
    assert row.status_label.text().startswith("done in 0:0") and "run #5" in row.status_label.text()
    assert progress.title.text().endswith("db1 done")


def test_timed_phases_count_down_and_guesses_say_so(qtbot, clock):
    progress = RunProgress()
    qtbot.addWidget(progress)
    row = progress.add_host("db1", expected=600.0, test="disk")
    progress.add_event("db1", {"type": "plan", "phases": [
        {"phase": "prepare", "label": "Writing the test file", "seconds": 10, "timed": False},
        {"phase": "randread_4k", "label": "Random read 4 KiB", "seconds": 30, "timed": True},
        {"phase": "seqread", "label": "Sequential read", "seconds": 30, "timed": True}]})
    assert row.time_label.text() == "~1:10 left"
    progress.add_event("db1", {"type": "phase_start", "phase": "prepare", "label": "Writing the test file"})
    clock.t += 2
    progress.add_event("db1", {"type": "progress", "phase": "prepare", "fraction": 0.5})
    assert row.bar.value() == 71   # 5 of 70 expected seconds
    assert row.time_label.text() == "~1:02 left"   # the file goes at twice the guessed speed
    clock.t += 2
    progress.add_event("db1", {"type": "phase_end", "phase": "prepare"})
    progress.add_event("db1", {"type": "phase_start", "phase": "randread_4k", "label": "Random read 4 KiB"})
    progress.add_event("db1", {"type": "progress", "phase": "randread_4k", "fraction": 0.0, "eta_s": 30})
    assert row.time_label.text() == "1:00 left"   # only timed phases are left: no "~"
    clock.t += 1
    progress.tick()
    assert row.time_label.text() == "0:59 left"
    # every phase over: not 100 % until the run is stored
    for phase in ("randread_4k", "seqread"):
        progress.add_event("db1", {"type": "phase_start", "phase": phase})
        progress.add_event("db1", {"type": "progress", "phase": phase, "fraction": 1.0, "eta_s": 0})
        progress.add_event("db1", {"type": "phase_end", "phase": phase})
    assert row.bar.value() == 990 and row.time_label.text() == "finishing…"


def test_a_cancelled_host_keeps_its_progress_and_the_overall_line_names_each_host(qtbot, clock):
    progress = RunProgress()
    qtbot.addWidget(progress)
    for host in ("db1", "db2"):
        progress.add_host(host, expected=100.0, test="disk")
        progress.add_event(host, {"type": "plan", "phases": [{"phase": "a", "seconds": 10, "timed": True},
                                                             {"phase": "b", "seconds": 20, "timed": True}]})
        progress.add_event(host, {"type": "phase_start", "phase": "a"})
    assert progress.title.text() == "Test: disk — db1 running · db2 running"
    progress.add_event("db2", {"type": "progress", "phase": "a", "fraction": 0.6, "eta_s": 4})
    progress.add_event("db2", {"type": "phase_end", "phase": "a"})   # a cancelled phase ends too
    progress.add_event("db2", {"type": "done", "status": "cancelled"})
    progress.set_outcome("db2", "cancelled")
    cancelled = progress.rows["db2"]
    assert cancelled.bar.value() == 200 and cancelled.status_label.text().startswith("cancelled")
    assert cancelled.time_label.text() == "—"
    progress.add_event("db1", {"type": "done", "status": "done"})
    progress.set_outcome("db1", "done", run_id=3)
    assert progress.title.text() == "Test: disk — db1 done · db2 cancelled"
    assert not progress.cancel_all_button.isEnabled()
    progress.add_host("db3", test="disk")
    progress.set_refused("db3", "Authentication failed")
    assert progress.rows["db3"].status_label.text() == "failed: Authentication failed"
    assert progress.title.text() == "Test: disk — db1 done · db2 cancelled · db3 failed"


def test_cancel_asks_first_and_stays_under_the_pointer(qtbot, clock):
    progress = RunProgress()
    qtbot.addWidget(progress)
    progress.resize(1100, 200)
    progress.show()
    first = progress.add_host("db1", test="disk")
    qtbot.waitExposed(progress)
    qtbot.wait(50)
    where = first.cancel_button.mapTo(progress, QPoint(0, 0))
    for host in ("a-much-longer-host-name.example.com", "db3"):
        progress.add_host(host, test="disk")
    progress.add_event("db3", {"type": "error", "message": "a long reason " * 20})
    progress.add_event("db1", {"type": "phase_start", "phase": "x", "label": "A phase with a long label " * 3})
    qtbot.wait(50)
    assert first.cancel_button.mapTo(progress, QPoint(0, 0)) == where
    with qtbot.assertNotEmitted(progress.cancel_requested):
        first.cancel_button.click()
        box = progress.confirm_box
        assert isinstance(box, QMessageBox) and "db1" in box.text()
        keep = next(b for b in box.buttons() if b.text() == "Keep running")
        keep.click()
    assert progress.confirm_box is None and first.status_label.text() == "running"
    with qtbot.waitSignal(progress.cancel_requested) as single:
        first.cancel_button.click()
        stop = next(b for b in progress.confirm_box.buttons() if b.text() == "Stop the test")
        stop.click()
    assert single.args == ["db1"] and first.status_label.text() == "cancelling…"
    with qtbot.waitSignal(progress.cancel_all_requested):
        progress.cancel_all_button.click()
        assert "db3" in progress.confirm_box.text()
        next(b for b in progress.confirm_box.buttons() if b.text() == "Stop the test").click()


def test_results_button_once_done(qtbot, clock):
    progress = RunProgress()
    qtbot.addWidget(progress)
    row = progress.add_host("db1", test="cpu")
    assert row.results_button.isHidden()
    progress.set_outcome("db1", "done", run_id=12)
    assert not row.results_button.isHidden()
    with qtbot.waitSignal(progress.results_requested) as asked:
        row.results_button.click()
    assert asked.args == ["db1", 12]


@pytest.fixture
def light_style(qapp):
    """The window's style sheet (its button padding); asked for before the test's widgets
    (tests.gui.app_style)."""
    from resources import resource_text
    from tests.gui.app_style import restyle_app
    from widgets.theme import stylesheet_for

    before = qapp.styleSheet()
    qapp.setStyleSheet(stylesheet_for(resource_text("style.qss"), "light"))
    yield
    restyle_app(before)


@pytest.mark.parametrize("scale_font", [1.0, 2.0])
def test_a_few_finished_hosts_show_their_results_buttons_whole(light_style, qtbot, clock, scale_font):
    """Two hosts done: both Results buttons lie wholly inside the rows' area (no scroll bar for two rows)."""
    progress = RunProgress()
    qtbot.addWidget(progress)
    font = progress.font()
    font.setPointSizeF(font.pointSizeF() * scale_font)
    progress.setFont(font)
    progress.resize(1280, 300)
    for i, host in enumerate(("local", "sshd1")):   # the runs began while the Live tab was not shown
        progress.add_host(host, test="idle")
        progress.add_event(host, {"type": "started"})
        progress.set_outcome(host, "done", run_id=9 + i)
    progress.show()
    qtbot.waitExposed(progress)
    qtbot.wait(50)
    viewport = progress.scroll.viewport()
    for host, row in progress.rows.items():
        button = row.results_button
        top_left = button.mapTo(viewport, QPoint(0, 0))
        inside = viewport.rect().contains(top_left) and viewport.rect().contains(
            top_left + QPoint(button.width() - 1, button.height() - 1))
        assert inside, f"{host}'s Results button is cut by the rows' area: {button.geometry()} in {viewport.rect()}"
    assert progress.scroll.verticalScrollBar().maximum() == 0


def test_a_hundred_hosts_scroll_in_a_bounded_area_under_one_overall_line(qtbot, clock):
    progress = RunProgress()
    qtbot.addWidget(progress)
    progress.resize(1100, 300)
    progress.show()
    first = progress.add_host("node000", test="idle")
    qtbot.waitExposed(progress)
    qtbot.wait(20)
    where = first.cancel_button.mapTo(progress, QPoint(0, 0))
    few = progress.sizeHint().height()
    for i in range(1, 100):
        progress.add_host(f"node{i:03d}", test="idle")
        progress.add_event(f"node{i:03d}", {"type": "started"})
    progress.add_event("node000", {"type": "started"})
    progress.set_outcome("node001", "done", run_id=7)
    progress.set_outcome("node002", "done", run_id=8)
    progress.set_refused("node003", "command did not finish within 20 s on node003")
    qtbot.wait(20)
    assert progress.title.text() == "Test: idle — 100 hosts: 97 running · 2 done · 1 failed"
    # the area grew to a few rows and then stopped: the rest scroll, the graphs below keep their room
    assert few < progress.sizeHint().height() < 400
    assert progress.scroll.verticalScrollBar().maximum() > 0
    assert first.cancel_button.mapTo(progress, QPoint(0, 0)) == where      # the scroll bar took no room from it
    progress.scroll.ensureWidgetVisible(progress.rows["node099"].cancel_button)
    assert progress.scroll.verticalScrollBar().value() > 0


@pytest.mark.parametrize("until_stable", [False, True])
def test_a_repeated_test_is_one_row_whose_bar_never_goes_back(qtbot, clock, until_stable):
    events = recorded("cpu")
    progress = RunProgress()
    qtbot.addWidget(progress)
    row = progress.add_host("db1", expected=600.0, test="cpu")
    t0, values, labels = events[0]["t"], [], []
    for index in (1, 2, 3):
        progress.add_event("db1", {"type": "repeat", "index": index, "of": 3, "group": "g",
                                   **({"until_stable": True} if until_stable else {})})
        labels.append(row.host_label.full_text)
        for event in events:
            clock.t += 0.5 if event["t"] == t0 else 0.0
            clock.t = max(clock.t, 1000.0 + (index - 1) * 100 + (event["t"] - t0))
            progress.add_event("db1", event)
            progress.tick()
            if row.bar.maximum():
                values.append((index, event["type"], row.bar.value()))
    assert list(progress.rows) == ["db1"] and len(progress.title.text().splitlines()) == 1
    if until_stable:
        assert labels == ["db1 · run 1", "db1 · run 2", "db1 · run 3"]
    else:
        assert labels == ["db1 · run 1 of 3", "db1 · run 2 of 3", "db1 · run 3 of 3"]
    shown = [value for _index, _kind, value in values]
    assert shown == sorted(shown), "the group's bar went back"
    # each run moves it about a third further; 100 % only once the last run is done
    before_end = [value for index, kind, value in values if until_stable or not (index == 3 and kind == "done")]
    assert max(v for i, _k, v in values if i == 1) <= 334 and 600 < max(before_end) < 1000
    progress.set_outcome("db1", "done", run_id=9)
    assert row.bar.value() == 1000 and "run #9" in row.status_label.full_text
