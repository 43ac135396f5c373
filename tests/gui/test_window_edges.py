"""Edges of the main window a person notices: the Graphs tab's first line keeps off the pane's border like the
controls under it, and a very long SSH address does not widen the host pane: it is elided in its row on
purpose, whole in the row's tooltip, and the layout check accepts that while it still flags other elisions."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QApplication

from storage.records import HostRecord
from tests.gui.clipping import cut_off_items, cut_off_texts, drawn_texts, elided_on_purpose
from widgets.host_list import NAME_ROLE

pytestmark = pytest.mark.gui
LONG_ADDRESS = "a-very-long-host-name.example.internal.company"
LONG_SUBTITLE = f"user@{LONG_ADDRESS}:2222"


def _settle(qtbot, window) -> None:
    for _ in range(3):
        QApplication.processEvents()
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=20_000)


def test_the_graphs_title_starts_where_the_controls_under_it_do(window, qtbot) -> None:
    window.resize(1280, 720)
    window.tabs.setCurrentWidget(window.live.graphs)
    graphs = window.live.graphs
    _settle(qtbot, window)
    text_left = graphs.title.mapTo(graphs, graphs.title.contentsRect().topLeft()).x()
    play_left = graphs.play_button.mapTo(graphs, graphs.play_button.rect().topLeft()).x()
    assert text_left > 0, "the title's text touches the pane's border"
    assert text_left == play_left


@pytest.fixture
def far_away(workbench):
    workbench.store.hosts.add(HostRecord(name="far-away", address=LONG_ADDRESS, user="user", port=2222))
    workbench.store.hosts.add(HostRecord(name="db-alpha", address="10.20.30.41", user="bench"))


def _row(host_list, name: str) -> QModelIndex:
    row = next(r for r in range(host_list.count()) if host_list.item(r).data(NAME_ROLE) == name)
    return host_list.model().index(row, 0)


def test_a_long_address_is_elided_in_a_pane_of_sensible_width(far_away, make_window, qtbot) -> None:
    window = make_window()
    window.resize(1280, 720)
    _settle(qtbot, window)
    hosts = window.host_list
    pane = window.splitter.widget(0)
    assert pane.width() <= 320, f"the host pane is {pane.width()} px wide at 1280x720"
    index = _row(hosts, "far-away")
    rect = hosts.visualRect(index)
    drawn = drawn_texts(hosts, index, rect.width(), rect.height())
    [shown] = [text for text in drawn if text.startswith("user@")]
    assert shown.endswith("…") and len(shown) < len(LONG_SUBTITLE)
    assert LONG_SUBTITLE in index.data(Qt.ItemDataRole.ToolTipRole)
    assert elided_on_purpose(hosts, index, shown)
    # a short address is shown whole
    short = _row(hosts, "db-alpha")
    assert "bench@10.20.30.41" in drawn_texts(hosts, short, rect.width(), rect.height())
    assert cut_off_texts(window) == []


def test_the_layout_check_still_flags_an_elision_that_is_not_on_purpose(far_away, make_window, qtbot) -> None:
    window = make_window()
    _settle(qtbot, window)
    hosts = window.host_list
    index = _row(hosts, "far-away")
    # the name is never elided on purpose: a row too narrow for it is cut off, tooltip or not
    narrow = drawn_texts(hosts, index, 75, hosts.visualRect(index).height())
    name = next(text for text in narrow if text.startswith("fa"))
    assert name.endswith("…") and not elided_on_purpose(hosts, index, name)
    # an address whose whole text the tooltip lacks is cut off too
    item = hosts.item(index.row())
    item.setToolTip("far-away")
    address = next(text for text in narrow if text.startswith("u"))
    assert not elided_on_purpose(hosts, index, address)
    hosts.setFixedWidth(80)
    _settle(qtbot, window)
    assert any("far-away" in problem for problem in cut_off_items(hosts)), cut_off_items(hosts)
