"""A host's price in the host editor: entered, checked, stored with the host, shown again, cleared."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from storage.records import HostPrice
from tests.gui.conftest import wait_idle

pytestmark = pytest.mark.gui


def test_price_entered_in_the_editor_is_stored_and_shown_again(window, workbench, qtbot):
    editor = window.add_host()
    qtbot.keyClicks(editor.name_edit, "db-priced")
    qtbot.keyClicks(editor.address_edit, "192.0.2.40")
    group = editor.price_group
    assert editor.price() is None and not group.currency_edit.isEnabled()
    group.amount_spin.setValue(120.0)
    assert group.currency_edit.isEnabled() and editor.ok_button.isEnabled()
    group.date_edit.setText("1.11.2026")
    assert not editor.ok_button.isEnabled() and "YYYY-MM-DD" in editor.hint.text()
    group.date_edit.setText("2026-11-01")
    group.source_edit.setText("Hetzner price list")
    group.currency_edit.clear()
    assert not editor.ok_button.isEnabled() and "currency" in editor.hint.text()
    qtbot.keyClicks(group.currency_edit, "EUR")
    assert editor.ok_button.isEnabled(), editor.hint.text()
    qtbot.mouseClick(editor.ok_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: "db-priced" in window.host_list.host_names(), timeout=10_000)
    assert workbench.store.hosts.get("db-priced").price == HostPrice(120.0, "EUR", "month", "2026-11-01",
                                                                     "Hetzner price list")

    window.host_list.select_host("db-priced")
    again = window.edit_host()
    assert again is not None and again.price() == again.price_group.value()
    assert (again.price_group.amount_spin.value(), again.price_group.source_edit.text()) == (120.0,
                                                                                             "Hetzner price list")
    again.price_group.period_combo.setCurrentIndex(again.price_group.period_combo.findData("once"))
    qtbot.mouseClick(again.ok_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: workbench.store.hosts.get("db-priced").price.period == "once", timeout=10_000)

    window.host_list.select_host("db-priced")
    cleared = window.edit_host()
    cleared.price_group.amount_spin.setValue(0.0)
    assert cleared.price() is None and cleared.price_group.amount_spin.text() == "none"
    qtbot.mouseClick(cleared.ok_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: workbench.store.hosts.get("db-priced").price is None, timeout=10_000)
