"""Tags in the host editor: typed as a list, checked like the command line's, and the group bar follows."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from remote.hostspec import HostSpec
from widgets.host_editor import parse_tags

pytestmark = pytest.mark.gui


def test_tags_are_split_on_commas_and_spaces_once_each() -> None:
    assert parse_tags(" rack3, front  @edge,Rack3 ,, ") == ("rack3", "front", "edge")
    assert parse_tags("") == ()


def test_tags_saved_in_the_editor_show_in_the_group_bar(qtbot, workbench, make_window) -> None:
    workbench.add_host(HostSpec(name="web1", address="192.0.2.10", tags=("rack3",)))
    window = make_window()
    assert list(window.host_groups.buttons) == ["rack3"]
    qtbot.waitUntil(lambda: window.host_list.select_host("web1"))
    editor = window.edit_host()
    assert editor.tags_edit.text() == "rack3"
    editor.tags_edit.setText("rack3, front")
    qtbot.mouseClick(editor.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: list(window.host_groups.buttons) == ["front", "rack3"], timeout=10_000)
    assert workbench.list_hosts()[-1].tags == ("rack3", "front")
    qtbot.waitUntil(lambda: window.pool.active_count() == 0)


def test_a_tag_the_command_line_would_refuse_keeps_ok_disabled(qtbot, workbench, make_window) -> None:
    window = make_window()
    editor = window.add_host()
    qtbot.keyClicks(editor.name_edit, "db2")
    qtbot.keyClicks(editor.address_edit, "192.0.2.11")
    assert editor.ok_button.isEnabled()
    editor.tags_edit.setText("rack3, -bad!")
    assert not editor.ok_button.isEnabled()
    assert "invalid tag '-bad!'" in editor.hint.text()
    editor.tags_edit.setText("rack3, good")
    assert editor.ok_button.isEnabled()
    editor.reject()
