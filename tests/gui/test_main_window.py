"""The main window against a real Workbench: the local host, real sshd test hosts, a tarpit."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QDialog

from remote.hostspec import HostSpec
from storage.records import HostRecord
from widgets.fingerprint_dialog import FingerprintDialog
from widgets.host_list import STATUS_CONNECTING, STATUS_ERROR, STATUS_OK

pytestmark = pytest.mark.gui

FAKE_FACTS = {
    "schema": 1, "agent_version": "0.1.0", "collected_at": "2024-05-02T12:00:00Z",
    "hostname": "stored-host", "kernel": "6.1.0-18-amd64", "arch": "x86_64",
    "os": "Debian GNU/Linux 12 (bookworm)", "python": "3.11.2", "is_root": False,
    "cpu": {"model": "Intel(R) Xeon(R) E-2236 CPU @ 3.40GHz", "vendor": "GenuineIntel", "sockets": 1,
            "cores": 6, "threads": 12, "mhz": 3400.0, "max_mhz": 4800.0, "governor": "performance",
            "flags": ["avx", "avx2", "aes"]},
    "memory": {"total_bytes": int(23.4 * 1024**3), "available_bytes": 20 * 1024**3,
               "swap_total_bytes": 0, "swap_free_bytes": 0},
    "disks": [{"name": "sda", "model": "Samsung SSD 860", "vendor": "ATA", "serial": "needs root",
               "size_bytes": 500_107_862_016, "rotational": False, "scheduler": "mq-deadline",
               "read_ahead_kb": 128, "kind": "disk", "dm_name": None},
              {"name": "sdb", "model": "WDC WD40EFRX", "vendor": "ATA", "serial": "needs root",
               "size_bytes": 4_000_787_030_016, "rotational": True, "scheduler": "bfq",
               "read_ahead_kb": 4096, "kind": "disk", "dm_name": None}],
    "test_dir": None,
    "raid": {"mdstat": None, "arrays": [], "hardware": []},
    "virtualization": "none",
    "system": {"vendor": "Dell Inc.", "product": "PowerEdge T140", "serial": "needs root", "bios": None},
    "tools": {"fio": {"present": True, "version": "3.33", "path": "/usr/bin/fio"},
              "mta": {"present": False, "version": None, "path": None, "type": None},
              "postgresql": {"present": True, "version": "15.6", "path": "/usr/bin/psql"},
              "iostat": {"present": False, "version": None, "path": None}},
    "needs_root": ["system.serial", "disks.serial"], "errors": [],
}


def local_cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    pytest.skip("/proc/cpuinfo names no CPU model on this machine")


def idle(window) -> bool:
    return window.pool.active_count() == 0


def closed_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]   # free as soon as the socket closes: nothing listens


def test_local_is_first_with_a_this_computer_subtitle(window, workbench, qtbot):
    workbench.add_host(HostSpec(name="aaa", address="10.0.0.1"))
    window.refresh()
    qtbot.waitUntil(lambda: window.host_list.count() == 2)
    assert window.host_list.host_names() == ["local", "aaa"]
    assert window.host_list.item(0).data(Qt.ItemDataRole.UserRole + 1) == "this computer"
    assert window.windowTitle() == "Benchbay"
    assert not window.edit_action.isEnabled() and not window.remove_action.isEnabled()


def test_add_host_through_the_dialog(window, workbench, qtbot):
    editor = window.add_host()
    qtbot.waitExposed(editor)
    qtbot.keyClicks(editor.name_edit, "db-new")
    qtbot.keyClicks(editor.address_edit, "10.1.2.3")
    qtbot.keyClicks(editor.user_edit, "admin")
    qtbot.mouseClick(editor.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "db-new" in window.host_list.host_names())
    stored = workbench.store.hosts.get("db-new")
    assert stored is not None and (stored.address, stored.user, stored.port) == ("10.1.2.3", "admin", 22)
    assert window.host_list.current_host() == "db-new"
    assert window.edit_action.isEnabled()
    qtbot.waitUntil(lambda: idle(window))


def test_invalid_host_keeps_ok_disabled_in_the_window(window, qtbot):
    editor = window.add_host()
    qtbot.keyClicks(editor.name_edit, "local")
    qtbot.keyClicks(editor.address_edit, "10.0.0.1")
    assert not editor.ok_button.isEnabled()
    editor.reject()


def test_edit_and_remove_a_host(window, workbench, qtbot, monkeypatch):
    workbench.add_host(HostSpec(name="old", address="10.0.0.1"))
    window.refresh()
    qtbot.waitUntil(lambda: window.host_list.select_host("old"))
    editor = window.edit_host()
    editor.name_edit.setText("renamed")
    qtbot.mouseClick(editor.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.host_list.host_names() == ["local", "renamed"])
    assert workbench.store.hosts.get("old") is None
    monkeypatch.setattr(window, "confirm", lambda *_: True)
    window.host_list.select_host("renamed")
    window.remove_action.trigger()
    qtbot.waitUntil(lambda: window.host_list.host_names() == ["local"])
    assert workbench.store.hosts.list() == []
    qtbot.waitUntil(lambda: idle(window))


def test_import_from_ssh_config(make_window, workbench, bench_paths, qtbot):
    bench_paths["ssh_config"].write_text("Host web1\n  HostName 10.9.9.9\nHost db-*\n  User admin\nHost mail1\n")
    window = make_window()
    dialog = window.import_hosts()
    assert [dialog.list.item(i).text() for i in range(dialog.list.count())] == ["web1", "mail1"]
    assert not dialog.ok_button.isEnabled()
    dialog.list.item(0).setCheckState(Qt.CheckState.Checked)
    assert dialog.ok_button.text() == "Import 1 host"
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "web1" in window.host_list.host_names())
    assert workbench.store.hosts.get("web1") == HostRecord(name="web1")
    assert window.host_list.item(1).data(Qt.ItemDataRole.UserRole + 1) == "from ~/.ssh/config"
    qtbot.waitUntil(lambda: idle(window))


def test_stored_facts_are_shown_at_startup(make_window, workbench, qtbot):
    run_id = workbench.store.runs.create("local", "facts", {})
    workbench.store.runs.add_facts(run_id, FAKE_FACTS)
    workbench.store.runs.finish(run_id, "done")
    window = make_window()
    view = window.facts_view
    qtbot.waitUntil(lambda: view.value("System", "Hostname") == "stored-host")
    assert view.value("CPU", "Model") == FAKE_FACTS["cpu"]["model"]
    assert view.value("CPU", "Topology") == "1 socket, 6 cores, 12 threads"
    assert view.value("Memory", "RAM") == "23.4 GiB"
    assert view.value("Memory", "Swap") == "none"
    assert view.value("System", "Serial") == "needs root" and view.is_needs_root("System", "Serial")
    assert view.value("Tools", "Mail server") == "not installed"
    assert view.value("Tools", "PostgreSQL") == "15.6"
    disks = view.disks
    assert disks.rowCount() == 2
    assert [disks.item(r, 3).text() for r in range(2)] == ["SSD", "HDD"]
    assert disks.item(0, 2).text() == "500.1 GB (465.8 GiB)"
    assert "Collected" in view.subtitle.text()
    # a facts gathering is the host's record, not a test: the Runs tab neither lists nor counts it
    assert window.runs_table.model().rowCount() == 0 and window.tabs.tabText(1) == "Runs"


def test_gather_facts_for_local(window, workbench, qtbot):
    assert window.host_list.current_host() == "local"
    window.gather_action.trigger()
    # busy: spinner on the row, the action disabled for this host, while the window keeps working
    assert window.host_list.status("local") == STATUS_CONNECTING
    assert not window.gather_action.isEnabled()
    qtbot.waitUntil(lambda: window.host_list.status("local") == STATUS_OK, timeout=60_000)
    assert window.facts_view.value("CPU", "Model") == local_cpu_model()
    assert window.facts_view.value("System", "Hostname") == socket.gethostname()
    assert "facts collected" in window.statusBar().currentMessage()
    assert workbench.store.runs.latest_facts("local") is not None
    qtbot.waitUntil(lambda: idle(window))
    assert window.runs_table.model().rowCount() == 0   # stored as the host's facts, not listed as a run
    assert window.gather_action.isEnabled()


def test_double_click_gathers_facts(window, qtbot):
    item = window.host_list.item(0)
    rect = window.host_list.visualItemRect(item)
    # a real double-click: the first click, then QTest's press + double-click event
    qtbot.mouseClick(window.host_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(window.host_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.host_list.status("local") == STATUS_CONNECTING
    qtbot.waitUntil(lambda: window.host_list.status("local") == STATUS_OK, timeout=60_000)
    qtbot.waitUntil(lambda: idle(window))


def test_connection_error_shows_in_status_bar_and_row_tooltip(window, workbench, qtbot):
    workbench.add_host(HostSpec(name="nobody", address="127.0.0.1", port=closed_port()))
    window.refresh()
    qtbot.waitUntil(lambda: window.host_list.select_host("nobody"))
    assert window.gather_facts("nobody")
    qtbot.waitUntil(lambda: window.host_list.status("nobody") == STATUS_ERROR, timeout=20_000)
    message = window.statusBar().currentMessage()
    assert message.startswith("nobody: ") and "\n" not in message
    row = window.host_list.item(1)
    assert window.host_list.message("nobody") in row.toolTip()
    assert "Could not gather facts" in window.facts_view.title.text() + window.facts_view.scroll.widget() \
        .findChildren(type(window.facts_view.title))[0].text()
    qtbot.waitUntil(lambda: idle(window))


def test_unknown_host_key_asks_then_facts_arrive(window, workbench, ssh_host, qtbot, monkeypatch):
    shown = {}

    def accept(dialog: FingerprintDialog) -> int:
        shown["fingerprint"] = dialog.fingerprint_label.text()
        shown["default"] = dialog.reject_button.isDefault()
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(FingerprintDialog, "exec", accept)
    workbench.add_host(ssh_host.spec())
    window.refresh()
    qtbot.waitUntil(lambda: window.host_list.select_host(ssh_host.name))
    window.gather_facts()
    qtbot.waitUntil(lambda: window.host_list.status(ssh_host.name) == STATUS_OK, timeout=60_000)
    assert shown == {"fingerprint": ssh_host.host_key_fingerprint, "default": True}
    assert workbench.host_key(ssh_host.name).status == "trusted"
    assert window.facts_view.value("CPU", "Model") == local_cpu_model()   # the test sshd runs here
    qtbot.waitUntil(lambda: idle(window))


def test_rejected_host_key_is_not_trusted(window, workbench, ssh_host, qtbot, monkeypatch):
    monkeypatch.setattr(FingerprintDialog, "exec", lambda _self: QDialog.DialogCode.Rejected.value)
    workbench.add_host(ssh_host.spec())
    window.refresh()
    qtbot.waitUntil(lambda: ssh_host.name in window.host_list.host_names())
    window.gather_facts(ssh_host.name)
    qtbot.waitUntil(lambda: "not accepted" in window.statusBar().currentMessage(), timeout=30_000)
    assert workbench.host_key(ssh_host.name).status == "unknown"
    qtbot.waitUntil(lambda: idle(window))


def test_changed_host_key_is_refused_with_both_fingerprints(window, workbench, fresh_ssh_host, qtbot,
                                                            monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    host = fresh_ssh_host
    workbench.add_host(host.spec())
    workbench.trust_host(host.name)
    old = host.host_key_fingerprint
    host.restart(new_host_key=True)
    boxes = []

    def record(box: QMessageBox) -> int:
        boxes.append((box.icon(), box.text(), box.informativeText(), [b.text() for b in box.buttons()]))
        return QMessageBox.StandardButton.Close.value

    monkeypatch.setattr(QMessageBox, "exec", record)
    window.refresh()
    qtbot.waitUntil(lambda: host.name in window.host_list.host_names())
    window.gather_facts(host.name)
    qtbot.waitUntil(lambda: len(boxes) == 1, timeout=30_000)
    icon, text, details, buttons = boxes[0]
    assert icon == QMessageBox.Icon.Critical
    assert "CHANGED" in text and "refused" in text
    assert old in details and host.host_key_fingerprint in details
    assert not any("accept" in b.lower() for b in buttons)
    assert window.host_list.status(host.name) == STATUS_ERROR
    qtbot.waitUntil(lambda: idle(window))


def test_no_frozen_event_loop_while_a_slow_connect_waits(window, workbench, tarpit, qtbot):
    workbench.settings.connect_timeout = 2.5
    workbench.add_host(HostSpec(name="tarpit", address=tarpit.address, port=tarpit.port, auth="agent"))
    window.refresh()
    qtbot.waitUntil(lambda: window.host_list.select_host("tarpit"))
    ticks = []
    timer = QTimer()
    timer.setInterval(50)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    try:
        assert window.gather_facts("tarpit")
        qtbot.wait(1000)
        assert window.host_list.status("tarpit") == STATUS_CONNECTING   # still waiting for a banner
        assert len(ticks) >= 15, f"the event loop stalled: {len(ticks)} ticks of 50 ms in 1 s"
        assert not window.gather_action.isEnabled()
        qtbot.waitUntil(lambda: window.host_list.status("tarpit") == STATUS_ERROR, timeout=15_000)
    finally:
        timer.stop()
    assert window.statusBar().currentMessage().startswith("tarpit: ")
    qtbot.waitUntil(lambda: idle(window))


def test_window_closes_while_a_connect_is_in_progress(window, workbench, tarpit, qtbot):
    workbench.settings.connect_timeout = 2.0
    workbench.add_host(HostSpec(name="tarpit", address=tarpit.address, port=tarpit.port, auth="agent"))
    window.refresh()
    qtbot.waitUntil(lambda: "tarpit" in window.host_list.host_names())
    window.gather_facts("tarpit")
    window.close()   # waits for the worker (bounded by the connect timeout), drops its result
    assert window.pool.active_count() == 0
    assert not window.isVisible()
