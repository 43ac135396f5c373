"""A database load from two client hosts started from the run dialog: two sshd test hosts load this machine's
PostgreSQL together, the Live tab draws the TOTAL per second with each client's band and share, and what it
drew is what was stored; the server (this machine, the inventory's "local" host) gets its own panel."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.gui.dbload_multi_live import LiveShares, tick_ops
from tests.integration.test_dbload_ssh import PG_TARGET, _add, _pg_databases, pg_tcp  # noqa: F401 - fixture

pytestmark = pytest.mark.gui


def test_shares_and_totals_are_the_sums_of_the_clients_seconds() -> None:
    shares = LiveShares({"step_seconds": 3, "step_gap": 2}, ("a", "b"))
    for host, step, second, ops in (("a", 1, 1, 10.0), ("b", 1, 1, 30.0), ("a", 1, 2, 20.0), ("b", 1, 2, 40.0),
                                    ("a", 2, 1, 5.0)):
        x, _ = shares.tick(host, {"step": step, "second": second, "clients": step, "ops": {"txn": ops}})
        assert x == (step - 1) * 5 + second              # the steps' common time line
    assert shares.totals(1) == [40.0, 60.0] and shares.totals(2) == [5.0]   # b has not reported step 2 yet: 0
    assert shares.shares(1) == {"a": 0.3, "b": 0.7}
    assert shares.result("b", {"type": "result", "metric": "ops_per_s", "metadata": {"step": 1, "tool_cpu_busy": 0.93}})
    rows = shares.rows()
    assert rows[0].step == "step 1 · 2 connections" and rows[0].shares == "a 30 %, b 70 %"
    assert rows[0].total == "50 ops/s in all (median of 2 s)"
    assert rows[0].note == ("b's load tool used 93 % of the CPU it could use: this step's total may be the client's "
                            "limit, not the server's")
    assert rows[1].note == ""
    # a tool that got little CPU because other work on its host had it: named too
    assert shares.result("a", {"type": "result", "metric": "ops_per_s",
                               "metadata": {"step": 2, "tool_cpu_busy": 0.2, "tool_cpu_wait": 0.41}})
    assert shares.rows()[1].note == ("a's load tool waited for a CPU 41 % of the step (other work on a had it): "
                                     "this step's total may be the client's limit, not the server's")
    # Redis counts gets and sets; pgbench and sysbench their transactions (sysbench's queries are inside them)
    assert tick_ops({"ops": {"get": 9.5, "set": 0.5}}) == 10.0
    assert tick_ops({"ops": {"txn": 7.0, "read": 70.0, "write": 20.0}}) == 7.0


@pytest.mark.usefixtures("pg_tcp")
def test_the_window_loads_one_server_from_two_hosts_and_draws_what_it_stores(make_window, qtbot, workbench,
                                                                           ssh_hosts) -> None:
    names = [_add(workbench, host) for host in ssh_hosts]
    window = make_window()
    dialog = window.live.open_run_dialog()
    dialog.set_test("dbload")
    for index in range(dialog.host_list.count()):
        item = dialog.host_list.item(index)
        ticked = item.data(Qt.ItemDataRole.UserRole) in names
        item.setCheckState(Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)
    assert sorted(dialog.hosts()) == sorted(names)
    form = dialog.dbload_form
    form.target.setText(PG_TARGET)
    form.server_host.setText("db-nowhere")
    assert not dialog.validate() and "the server host db-nowhere is not in the host list" in dialog.error_label.text()
    form.server_host.setText("local")
    form.data.setCurrentIndex(form.data.findData("scale"))
    form.scale.setValue(1)
    form.clients.setText("1,2")
    form.step_seconds.setValue(3)
    assert form.together.isVisible() and "The 2 hosts are clients of this one server" in form.together.text()
    dialog.repeat.count_spin.setValue(2)
    assert not dialog.validate() and "no repeats" in dialog.error_label.text()
    dialog.repeat.count_spin.setValue(1)
    assert dialog.validate(), dialog.error_label.text()
    feed = window.live.dbmulti
    with qtbot.waitSignal(feed.finished, timeout=240_000) as blocker:
        dialog.start()
        assert feed.panel.isVisible() and window.tabs.currentWidget() is window.live.live
    outcome = blocker.args[0]
    assert not outcome.error and outcome.total_run_id is not None
    total = workbench.find_run(outcome.total_run_id)
    stored = {r.metadata["step"]: r for r in total.results if r.metric == "ops_per_s"}
    # the TOTAL line drawn is the stored TOTAL run's per-second sums, step after step
    drawn = feed.panel.chart.totals()
    assert drawn == pytest.approx([v for step in sorted(stored) for v in stored[step].metadata["per_second"]])
    # and each client's share beside it is the stored one
    for row, step in zip(feed.panel.rows, sorted(stored), strict=True):
        meta = stored[step].metadata
        assert row.shares == ", ".join(f"{h} {s * 100:.0f} %" for h, s in meta["shares"].items())
        assert (row.note == "") == (meta["client_limit"] == "") and row.note.startswith(meta["client_limit"])
    assert set(window.live.live.dashboard.series) >= {*names, "local"}   # the clients' panels and the server's
    assert outcome.target is not None and outcome.target.error == "" and outcome.target.run_id is not None
    assert "The database server local" in feed.panel.server.text()
    assert "knee" in feed.panel.outcome.text() and f"run #{outcome.total_run_id}" in feed.panel.outcome.text()
    assert _pg_databases(outcome.database) == set()
