"""Light and dark themes: the palette, the stylesheet in the dark colours, the table's shades."""
from __future__ import annotations

import re

import pytest
from PySide6.QtGui import QPalette

from app.compare.model import build, load_inputs
from app.gui.compare_choices import comparison_view
from resources import resource_text
from tests.fixtures.comparison_runs import store_two_servers
from tests.gui.app_style import restyle_app
from widgets.compare_table import BEST_SHADE, DARK_SHADES
from widgets.theme import DARK, DARK_SWAPS, LIGHT, ThemeFollower, is_dark, stylesheet_for

pytestmark = pytest.mark.gui


@pytest.fixture
def restore_theme(qapp):
    """Asked for before the test's widgets (tests.gui.app_style)."""
    palette, qss = qapp.palette(), qapp.styleSheet()
    yield
    restyle_app(qss, palette)


def test_dark_stylesheet_has_no_light_colour_left():
    light = resource_text("style.qss")
    dark = stylesheet_for(light, DARK)
    used = {c.lower() for c in re.findall(r"#[0-9a-fA-F]{6}\b", light)}
    missing = used - set(DARK_SWAPS)
    assert not missing, f"colours of the stylesheet without a dark counterpart: {sorted(missing)}"
    assert not {c.lower() for c in re.findall(r"#[0-9a-fA-F]{6}\b", dark)} & (used - set(DARK_SWAPS.values()))
    assert stylesheet_for(light, LIGHT) == light


def test_forced_dark_theme_darkens_the_window_and_the_comparison(restore_theme, qapp, qtbot, workbench):
    follower = ThemeFollower(qapp, resource_text("style.qss"), forced=DARK)
    try:
        assert follower.scheme == DARK and is_dark()
        base, text = qapp.palette().color(QPalette.ColorRole.Base), qapp.palette().color(QPalette.ColorRole.Text)
        assert text.lightness() - base.lightness() > 120   # light text on a dark base, readable
        view = comparison_view()
        qtbot.addWidget(view)
        view.set_comparison(build(load_inputs(workbench, list(store_two_servers(workbench.store).values()))))
        best = view.table.figure_item("new-server", "disk:randread_4k.iops")
        assert best.background().color() == DARK_SHADES["best"] != BEST_SHADE
        assert follower.apply(LIGHT) == LIGHT and not is_dark()
    finally:
        follower.deleteLater()


def test_switching_the_desktop_to_dark_redraws_a_comparison_on_screen(restore_theme, qapp, qtbot, workbench):
    follower = ThemeFollower(qapp, resource_text("style.qss"), forced=LIGHT)
    try:
        view = comparison_view()
        qtbot.addWidget(view)
        view.show()
        view.set_comparison(build(load_inputs(workbench, list(store_two_servers(workbench.store).values()))))
        best = view.table.figure_item("new-server", "disk:randread_4k.iops")
        assert best.background().color() == BEST_SHADE
        assert all(chart.backgroundBrush().color().lightness() > 128 for chart in view.bars.charts.values())
        follower.apply(DARK)
        qtbot.waitUntil(lambda: view.table.figure_item("new-server", "disk:randread_4k.iops").background().color()
                        == DARK_SHADES["best"])
        qtbot.waitUntil(lambda: all(chart.backgroundBrush().color().lightness() < 128
                                    for chart in view.bars.charts.values()))
        assert view.bars.charts
    finally:
        follower.deleteLater()
