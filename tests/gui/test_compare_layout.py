"""The Compare screen's layout on a projector: the names stay while the table scrolls sideways, one spec
line per server, servers as columns on demand, and the picker and notes fold away for the table."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from app.compare.model import build, load_inputs
from app.gui.compare_choices import comparison_view
from tests.fixtures.comparison_runs import store_two_servers
from widgets.compare_table import one_line_spec

pytestmark = pytest.mark.gui
IOPS = "disk:randread_4k.iops"


@pytest.fixture
def comparison(workbench):
    ids = store_two_servers(workbench.store)
    return build(load_inputs(workbench, list(ids.values())))


@pytest.fixture
def narrow_view(qtbot, comparison):
    view = comparison_view()
    qtbot.addWidget(view)
    view.resize(640, 700)
    view.show()
    qtbot.waitExposed(view)
    view.set_comparison(comparison)
    QApplication.processEvents()
    return view


def first_column_text_at(table, row: int) -> str:
    """What the user sees at the table's left edge on this row: the widget there, and its text."""
    y = table.horizontalHeader().height() + table.rowViewportPosition(row) + table.rowHeight(row) // 2
    widget = table.childAt(QPoint(table.frameWidth() + 6, y + table.frameWidth()))
    assert widget is table.frozen.viewport(), f"{widget!r} covers the first column"
    return table.frozen.indexAt(QPoint(6, table.rowViewportPosition(row) + 2)).data() or ""


def test_server_column_stays_when_the_table_scrolls_sideways(narrow_view):
    table = narrow_view.table
    bar = table.horizontalScrollBar()
    assert bar.maximum() > 0, "the table fits: nothing to scroll"
    bar.setValue(bar.maximum())
    QApplication.processEvents()
    assert table.columnViewportPosition(0) < 0          # the table itself scrolled its first column away
    assert table.frozen.isVisible() and table.frozen.width() == table.columnWidth(0)
    row = table.server_row("new-server")
    assert first_column_text_at(table, row).startswith("new-server")
    assert table.frozen.model().headerData(0, Qt.Orientation.Horizontal) == "Server"


def test_servers_as_columns_keep_every_figure(narrow_view, comparison):
    table = narrow_view.table
    before = {(row.label, m.key): table.figure(row.label, m.key) for row in comparison.rows
              for m in comparison.metrics}
    narrow_view.transpose_box.setChecked(True)
    QApplication.processEvents()
    assert table.transposed
    assert table.columnCount() == 1 + len(comparison.rows)
    headers = [table.horizontalHeaderItem(c).text().splitlines()[0] for c in range(1, table.columnCount())]
    assert headers == [row.label for row in comparison.rows]
    assert {key: table.figure(*key) for key in before} == before
    # the figure names are the frozen column now
    row = table._row_of[IOPS]
    assert first_column_text_at(table, row).startswith("Random read 4 KiB")
    narrow_view.transpose_box.setChecked(False)
    assert table.columnCount() == 1 + len(comparison.metrics)


def test_spec_is_one_line_with_the_whole_spec_on_hover(narrow_view, comparison):
    table = narrow_view.table
    for row in comparison.rows:
        item = table.item(table.server_row(row.label), 0)
        lines = item.text().splitlines()
        assert len(lines) == 2 and lines[0].startswith(row.label)
        assert row.spec in item.toolTip()


def test_a_long_spec_is_cut_between_values():
    spec = "AMD EPYC 9354P 32-Core Processor, 1s/32c/64t, 256 GiB RAM, nvme0n1 960 GB SSD, 274.9 GB HDD, kvm"
    short = one_line_spec(spec, 60)
    assert short.endswith("…") and len(short) <= 60
    assert short == "AMD EPYC 9354P 32-Core Processor, 1s/32c/64t, 256 GiB RAM …"
    assert one_line_spec("Xeon, 8 cores", 60) == "Xeon, 8 cores"


def test_picker_and_notes_fold_away_when_a_comparison_is_shown(window, workbench, qtbot):
    ids = store_two_servers(workbench.store)
    window.resize(1280, 720)
    window.reload_runs()
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=20_000)
    tab = window.compare
    window.tabs.setCurrentWidget(tab)
    assert tab.chooser.isVisible() and not tab.notes_edit.isVisible()
    height_before = tab.view.height()
    window.compare_runs([ids["old_disk"], ids["new_disk"], ids["old_cpu"], ids["new_cpu"]])
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=20_000)
    qtbot.waitUntil(lambda: not tab.chooser.isVisible())
    qtbot.waitUntil(lambda: tab.view.height() > height_before + 150)   # once the layout has run
    assert tab.view.height() >= 0.75 * tab.height()
    qtbot.mouseClick(tab.picker_toggle, Qt.MouseButton.LeftButton)
    assert tab.chooser.isVisible()
    qtbot.mouseClick(tab.notes_toggle, Qt.MouseButton.LeftButton)
    assert tab.notes_edit.isVisible()
    qtbot.waitUntil(lambda: window.pool.active_count() == 0, timeout=20_000)
