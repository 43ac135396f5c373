"""Host groups in the window: a button per tag above the host list selects the whole rack in one click."""
from __future__ import annotations

from PySide6.QtCore import Qt

from remote.hostspec import HostSpec


def _add(workbench, name: str, *tags: str) -> None:
    workbench.add_host(HostSpec(name, address="192.0.2.10", tags=tags))


def test_one_click_on_a_group_selects_its_hosts(qtbot, workbench, make_window) -> None:
    _add(workbench, "web1", "rack3")
    _add(workbench, "web2", "rack3", "front")
    _add(workbench, "db1", "rack10")
    _add(workbench, "spare")
    window = make_window()
    bar = window.host_groups
    assert bar.isVisible()
    assert [b.text() for b in bar.buttons.values()] == ["front (1)", "rack3 (2)", "rack10 (1)"]
    qtbot.mouseClick(bar.buttons["rack3"], Qt.MouseButton.LeftButton)
    assert window.host_list.selected_hosts() == ["web1", "web2"]
    assert window.statusBar().currentMessage() == "rack3: 2 hosts selected; Monitor and Run test act on them"
    assert window.live.monitor_action.isEnabled()
    qtbot.mouseClick(bar.buttons["rack10"], Qt.MouseButton.LeftButton)
    assert window.host_list.selected_hosts() == ["db1"]


def test_without_tags_there_is_no_group_bar(qtbot, workbench, make_window) -> None:
    _add(workbench, "alone")
    window = make_window()
    assert not window.host_groups.isVisible()


def test_many_groups_keep_the_pane_small_the_rest_in_a_list(qtbot) -> None:
    from widgets.host_groups import MAX_BUTTONS, HostGroupBar

    bar = HostGroupBar()
    qtbot.addWidget(bar)
    groups = {f"rack{i}": [f"r{i}-a", f"r{i}-b"] for i in range(1, 13)}
    bar.set_groups(groups)
    assert len(bar.buttons) == MAX_BUTTONS - 1
    assert bar.more.itemText(0) == f"{12 - (MAX_BUTTONS - 1)} more…"
    with qtbot.waitSignal(bar.group_chosen) as chosen:
        bar.more.activated.emit(bar.more.findData("rack12"))
    assert chosen.args == ["rack12", ["r12-a", "r12-b"]]
    assert bar.more.currentIndex() == 0   # ready for the next choice
