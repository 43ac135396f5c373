"""The run dialog and the per-host progress: the parameters it builds, validation, a real idle run."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit

from app.catalogue import CATALOGUE
from widgets.run_dialog import RunDialog, parse_size
from widgets.run_progress import RunProgress

pytestmark = pytest.mark.gui


@pytest.fixture
def dialog(qtbot):
    dlg = RunDialog(["local", "db1", "db2"], ["db1"], busy={"db2"}, tests=CATALOGUE.runnable(),
                    validate=CATALOGUE.validate)
    qtbot.addWidget(dlg)
    return dlg


def test_hosts_are_preselected_and_busy_hosts_say_why(dialog):
    assert dialog.hosts() == ["db1"]
    busy = dialog.host_list.item(2)
    assert busy.text() == "db2 — a test is running" and not busy.flags() & Qt.ItemFlag.ItemIsEnabled
    assert "cancel it" in busy.toolTip()
    dialog.host_list.item(0).setCheckState(Qt.CheckState.Checked)
    assert dialog.hosts() == ["local", "db1"]


def test_a_monitored_host_can_be_chosen_and_says_the_test_takes_over(qtbot):
    dlg = RunDialog(["local", "db1"], ["local"], busy=set(), monitored={"local"}, tests=CATALOGUE.runnable(),
                    validate=CATALOGUE.validate)
    qtbot.addWidget(dlg)
    item = dlg.host_list.item(0)
    assert item.text() == "local — monitored: the test takes over"
    assert item.flags() & Qt.ItemFlag.ItemIsEnabled and "monitoring starts again" in item.toolTip()
    assert dlg.hosts() == ["local"] and dlg.start_button.isEnabled()


def test_disk_form_builds_the_request_params(dialog):
    dialog.set_test("disk")
    assert dialog.file_size.text() == "256M" and dialog.runtime.value() == 5.0   # the quick preset
    dialog.test_dir.setText("/srv/bench")
    dialog.file_size.setText("1G")
    dialog.runtime.setValue(2.5)
    dialog.warmup.setValue(0.5)
    dialog.direct.setChecked(False)
    dialog.engine.setCurrentIndex(dialog.engine.findData("builtin"))
    dialog.sync_mode.setCurrentIndex(dialog.sync_mode.findData("osync"))
    for key, box in dialog.job_boxes.items():
        box.setChecked(key in ("randread_4k", "sweep"))
    dialog.host_list.item(0).setCheckState(Qt.CheckState.Checked)
    choice = dialog.choice()
    assert choice.hosts == ["local", "db1"]
    assert choice.test == "disk"
    assert choice.params == {"preset": "quick", "test_dir": "/srv/bench", "file_size": 1 << 30,
                                  "runtime": 2.5, "warmup": 0.5, "direct": False, "engine": "builtin",
                                  "tests": ["randread_4k", "sweep"], "sync_mode": "osync"}


def test_presets_fill_the_form(dialog):
    dialog.set_test("disk")
    dialog.preset_combo.setCurrentIndex(dialog.preset_combo.findData("full"))
    assert dialog.file_size.text() == "2G" and dialog.runtime.value() == 30 and dialog.warmup.value() == 5
    assert dialog.job_boxes["readahead"].isEnabled()
    dialog.set_test("cpu")
    assert dialog.params() == {"preset": "full", "seconds": 20.0}
    dialog.cpu_workers.setValue(3)
    assert dialog.params() == {"preset": "full", "seconds": 20.0, "workers": 3}
    dialog.set_test("idle")   # the agent takes no preset for idle: its own default phases, whatever the preset
    assert not dialog.preset_combo.isEnabled()
    assert dialog.params() == {"phases": [["warmup", "Warm-up", 2.0], ["measure", "Measure", 5.0]]}


def test_invalid_input_disables_start_and_says_why(dialog, monkeypatch):
    from remote.agent import benches

    monkeypatch.setitem(benches.BENCHES, "disk", "bench_idle")   # whatever the disk test's state
    monkeypatch.setattr(benches, "validate", lambda name, params: params)
    dialog.set_test("disk")
    dialog.validate()
    assert dialog.start_button.isEnabled()
    dialog.file_size.setText("lots")
    assert not dialog.start_button.isEnabled()
    assert "not a size" in dialog.error_label.text()
    dialog.file_size.setText("512M")
    assert dialog.start_button.isEnabled() and dialog.error_label.isHidden()
    dialog.test_dir.setText("relative/dir")
    assert not dialog.start_button.isEnabled() and "absolute" in dialog.error_label.text()
    dialog.test_dir.clear()
    for box in dialog.job_boxes.values():
        box.setChecked(False)
    assert not dialog.start_button.isEnabled() and "at least one job" in dialog.error_label.text()
    dialog.job_boxes["seqread"].setChecked(True)
    dialog.host_list.item(1).setCheckState(Qt.CheckState.Unchecked)
    assert not dialog.start_button.isEnabled() and "host" in dialog.error_label.text()


def test_the_agents_own_validation_is_shown(dialog):
    dialog.set_test("cpu")
    assert dialog.start_button.isEnabled()
    dialog.cpu_seconds.setMaximum(1e6)
    dialog.cpu_seconds.setValue(99_999)   # the agent allows at most an hour per phase
    assert not dialog.start_button.isEnabled()
    assert dialog.error_label.text().startswith("cpu: seconds must be")


def test_mail_storm_form_builds_the_agents_params_and_needs_a_sink_confirmation(dialog):
    dialog.set_test("mailstorm")
    assert not dialog.preset_combo.isEnabled()
    form = dialog.mail_form
    assert dialog.params() == {"messages": 2000, "concurrency": 20, "size": 4096, "server": "127.0.0.1:25",
                               "recipient": "sink@benchbay.invalid", "sink_confirmed": False,
                               "session_per_message": False, "drain_timeout": 300.0}
    assert dialog.start_button.isEnabled()
    form.messages.setValue(500)
    form.sessions.setValue(5)
    form.size.setValue(1024)
    form.server.setText("127.0.0.1:2525")
    form.reuse_sessions.setChecked(False)
    form.drain_timeout.setValue(60)
    form.recipient.setText("blackhole@example.org")
    assert not dialog.start_button.isEnabled()
    assert "outside the reserved *.invalid domains" in dialog.error_label.text()
    form.sink_confirmed.setChecked(True)
    assert dialog.start_button.isEnabled() and dialog.error_label.isHidden()
    assert dialog.choice().params == {"messages": 500, "concurrency": 5, "size": 1024,
                                           "server": "127.0.0.1:2525", "recipient": "blackhole@example.org",
                                           "sink_confirmed": True, "session_per_message": True,
                                           "drain_timeout": 60.0}
    form.server.setText("127.0.0.1:smtp")
    assert not dialog.start_button.isEnabled() and dialog.error_label.text().startswith("mailstorm")


def test_restore_form_peer_or_dsn_with_a_hidden_password(dialog):
    dialog.set_test("restore")
    form = dialog.restore_form
    assert dialog.params() == {"size_mb": 256, "connection": "peer"}
    assert not form.dsn.isEnabled() and not form.password.isEnabled()
    assert form.password.echoMode() == QLineEdit.EchoMode.Password
    form.size_mb.setValue(64)
    form.jobs.setValue(4)
    form.connection.setCurrentIndex(form.connection.findData("dsn"))
    assert form.dsn.isEnabled() and form.password.isEnabled()
    assert not dialog.start_button.isEnabled() and "needs a dsn" in dialog.error_label.text()
    form.dsn.setText("host=127.0.0.1 user=bench password=oops")
    assert not dialog.start_button.isEnabled() and "must not contain the password" in dialog.error_label.text()
    form.dsn.setText("host=127.0.0.1 user=bench dbname=postgres")
    form.password.setText("s3cret")
    form.test_dir.setText("/srv/pg")
    assert dialog.start_button.isEnabled()
    assert dialog.choice().params == {"size_mb": 64, "jobs": 4, "connection": "dsn",
                                           "dsn": "host=127.0.0.1 user=bench dbname=postgres",
                                           "password": "s3cret", "test_dir": "/srv/pg"}


def test_parse_size():
    assert parse_size("256M") == 256 << 20
    assert parse_size(" 2 GiB ") == 2 << 30
    assert parse_size("1.5g") == 3 << 29
    with pytest.raises(ValueError):
        parse_size("12 parsecs")


def test_progress_rows_follow_the_events(qtbot):
    progress = RunProgress()
    qtbot.addWidget(progress)
    progress.add_host("db1", expected=60.0, test="disk")
    progress.add_host("db2", expected=60.0, test="disk")
    row = progress.rows["db1"]
    assert row.status_label.text() == "connecting…" and row.cancel_button.isEnabled()
    progress.add_event("db1", {"type": "plan", "phases": [{"phase": "randread_4k", "seconds": 125, "timed": True}]})
    progress.add_event("db1", {"type": "phase_start", "phase": "randread_4k", "label": "Random read 4 KiB"})
    progress.add_event("db1", {"type": "progress", "phase": "randread_4k", "fraction": 0.4, "eta_s": 75.0})
    assert row.phase_label.text() == "Random read 4 KiB"
    assert row.bar.value() == 400 and row.bar.maximum() == 1000
    assert row.time_label.text() in ("1:15 left", "1:14 left")
    assert row.status_label.text() == "running"
    progress.add_event("db2", {"type": "disconnected", "message": "connection lost"})
    assert progress.rows["db2"].status_label.text() == "reconnecting…"
    progress.add_event("db1", {"type": "phase_end", "phase": "randread_4k"})
    assert row.bar.value() == 400   # a cancelled phase ends too: whole only once the run is done
    progress.add_event("db1", {"type": "done", "status": "done", "error": ""})
    progress.set_outcome("db1", "done", run_id=7)
    assert row.bar.value() == 1000
    assert row.status_label.text() == "done in 0:00: stored as run #7" and not row.cancel_button.isEnabled()
    progress.add_event("db2", {"type": "error", "message": "disk: test_dir /nope does not exist\n(traceback)"})
    progress.add_event("db2", {"type": "done", "status": "failed", "error": "disk: test_dir /nope does not exist"})
    assert progress.rows["db2"].status_label.full_text == "failed: disk: test_dir /nope does not exist"
    assert not progress.cancel_all_button.isEnabled()
    assert progress.title.text() == "Test: disk — db1 done · db2 failed"


@pytest.mark.integration
def test_idle_run_on_local_from_the_dialog(window, workbench, qtbot):
    window.host_list.select_host("local")
    window.live.run_action.trigger()
    dialog = window.live.run_dialog
    assert dialog is not None and dialog.hosts() == ["local"]
    dialog.set_test("idle")
    dialog.idle_warmup.setValue(0.5)
    dialog.idle_measure.setValue(1.5)
    assert dialog.start_button.isEnabled()
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    live = window.live.live
    assert window.tabs.currentWidget() is live and live.progress.isVisible()
    assert not dialog.start_button.isEnabled() and not dialog.form.isEnabled()
    row = dialog.progress.rows["local"]
    qtbot.waitUntil(lambda: row.phase_label.text() == "Measure", timeout=20_000)
    with qtbot.waitSignal(live.run_stored, timeout=30_000) as stored:
        pass
    run_id = stored.args[0]
    assert row.status_label.full_text.endswith(f": stored as run #{run_id}") and row.bar.value() == 1000
    assert live.progress.rows["local"].status_label.text() == row.status_label.text()
    assert dialog.start_button.isEnabled() and dialog.start_button.text() == "Start again"
    # the results come up by themselves once the test is over, and from the row's Results button
    panel = live.runs.results
    qtbot.waitUntil(lambda: panel.window is not None and panel.window.isVisible(), timeout=10_000)
    view = panel.window.views[run_id]
    assert panel.window.tabs.currentWidget() is view and view.cell(0, 1) == "elapsed"
    panel.window.close()
    qtbot.mouseClick(row.results_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(panel.window.isVisible, timeout=5_000)
    panel.window.close()
    markers = [m.label for m in live.dashboard.series["local"].markers]
    assert "Warm-up" in markers and "Measure" in markers
    run = workbench.store.runs.get(run_id)
    assert run.run.status == "done" and run.run.test == "idle"
    assert [r.metric for r in run.results] == ["elapsed"]
    # the Runs tab lists it; selecting it shows its results
    model = window.runs_table.model()
    qtbot.waitUntil(lambda: model.rowCount() >= 1, timeout=10_000)
    window.runs_table.selectRow(0)
    pane = window.live.runs_pane
    qtbot.waitUntil(lambda: pane.results.isVisibleTo(pane), timeout=10_000)
    assert pane.results.cell(0, 1) == "elapsed"
    dialog.close()


def test_dns_form_builds_the_request_params_and_says_what_is_wrong(dialog):
    dialog.set_test("dns")
    form = dialog.dns_form
    assert form.resolvers.text() == "system" and form.queries.text() == "builtin"
    form.resolvers.setText("10.0.0.2,127.0.0.53:53")
    form.queries.setText("/var/log/squid/access.log")
    form.query_format.setCurrentIndex(form.query_format.findData("squid"))
    form.order.setCurrentIndex(form.order.findData("interleaved"))
    form.limit.setValue(5000)
    form.timeouts.setText("1,2")
    assert form.stamps.currentData() == "read"    # as dnsperf times them, unless asked otherwise
    form.stamps.setCurrentIndex(form.stamps.findData("kernel"))
    assert dialog.validate()
    assert dialog.choice().params == {"resolvers": "10.0.0.2,127.0.0.53:53", "queries": "/var/log/squid/access.log",
                                      "query_format": "squid", "mode": "replay", "in_flight": 10, "rate": 0.0,
                                      "limit": 5000, "timeouts": "1,2", "passes": "cold,warm",
                                      "order": "interleaved", "tcp_fallback": True, "stamps": "kernel"}
    form.resolvers.setText("dns.google")
    assert not dialog.validate() and "give an IP address" in dialog.error_label.text()
    form.resolvers.setText("10.0.0.2")
    form.mode.setCurrentIndex(form.mode.findData("max"))
    assert not form.passes.isEnabled() and not form.stamps.isEnabled() and form.duration.isEnabled()
    assert dialog.choice().params["duration"] == 10.0 and "passes" not in dialog.choice().params
    assert "stamps" not in dialog.choice().params and dialog.validate()    # max mode reads, whatever was picked


def test_a_dns_runs_last_second_is_its_progress_rows_status(qtbot):
    progress = RunProgress()
    qtbot.addWidget(progress)
    progress.add_host("proxy1", 30.0, "dns")
    progress.add_event("proxy1", {"type": "phase_start", "phase": "cold", "label": "Cold pass, all resolvers"})
    progress.add_event("proxy1", {"type": "dns_tick", "resolver": "10.0.0.2:53", "pass": "cold", "second": 0,
                                  "answered": 1234, "timeouts": 2, "lat_ms": {"p50": 1.234, "p90": 3.0, "p99": 40.2}})
    row = progress.rows["proxy1"]
    assert row.status_text() == ("running · 10.0.0.2:53 cold: 1,234 answered, p50 1.23 ms, p99 40.2 ms, "
                                 "2 timeouts")
    assert row.status_label.toolTip() == row.status_text()
