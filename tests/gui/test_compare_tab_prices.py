"""Prices for one comparison, entered in the Compare tab: per-price columns, the prices line, the CSV,
the PDF and the saved comparison follow them; cleared, they are gone everywhere."""
from __future__ import annotations

from datetime import date

import pytest
from pypdf import PdfReader
from PySide6.QtCore import Qt

from app.compare.prices import prices_from_options, prices_to_options
from storage.records import HostPrice, HostRecord
from tests.gui.conftest import wait_idle
from tests.gui.test_compare_tab import compared, store_disk_run
from widgets.export_dialog import ExportChoice

pytestmark = pytest.mark.gui
PRICE_LINE = "new-server: 120 €/month (as of 2026-11-01; source: Hetzner price list)"


@pytest.fixture
def tab(window, workbench, qtbot):
    old = store_disk_run(workbench.store, "old-server", "Xeon E5-2620", 5_000, 0.8, rotational=True)
    new = store_disk_run(workbench.store, "new-server", "EPYC 7313P", 17_000, 0.2, rotational=False)
    compare = window.compare
    window.tabs.setCurrentWidget(compare)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(compare.picker.shown_runs()) == 2, timeout=20_000)
    compared(compare, qtbot, [old, new])
    wait_idle(qtbot, window)
    return compare


def price_keys(tab) -> list[str]:
    return [key for key in tab.view.table.keys if " per " in key]


def pdf_text(window, tab, qtbot, path) -> str:
    before = tab.exports.pdf_jobs
    tab.exports.export_pdf(ExportChoice("Prices", "", "", date(2026, 11, 21), None, "A4", str(path)))
    qtbot.waitUntil(lambda: tab.exports.pdf_jobs == before + 1, timeout=60_000)
    wait_idle(qtbot, window)
    return " ".join(" ".join(page.extract_text().split()) for page in PdfReader(path).pages)


def csv_file(window, tab, qtbot, path) -> str:
    tab.exports.export_csv(str(path))
    qtbot.waitUntil(lambda: tab.status_label.text() == f"CSV written — {path}", timeout=20_000)
    wait_idle(qtbot, window)
    return path.read_text(encoding="utf-8")


def set_price_in_dialog(tab, qtbot) -> None:
    dialog = tab.prices.open_dialog()
    qtbot.waitExposed(dialog)
    assert set(dialog.groups) == {"old-server", "new-server"}
    group = dialog.groups["new-server"]
    group.amount_spin.setValue(120.0)
    group.date_edit.setText("1.11.2026")
    assert not dialog.ok_button.isEnabled() and "YYYY-MM-DD" in dialog.hint.text()
    group.date_edit.setText("2026-11-01")
    group.source_edit.setText("Hetzner price list")
    assert dialog.ok_button.isEnabled(), dialog.hint.text()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)


def test_a_price_set_in_the_window_reaches_table_csv_pdf_and_the_saved_comparison(window, tab, workbench, qtbot,
                                                                                  tmp_path):
    assert price_keys(tab) == [] and tab.view.price_text() == ""
    assert "per price" not in csv_file(window, tab, qtbot, tmp_path / "none.csv")

    set_price_in_dialog(tab, qtbot)
    qtbot.waitUntil(lambda: price_keys(tab) != [], timeout=10_000)
    assert "disk:randread_4k.iops per EUR/month" in price_keys(tab)
    # only the priced server has the figure per price: 17,000 IOPS / 120 €/month
    assert tab.view.table.figure("new-server", price_keys(tab)[0]).startswith("142")
    assert PRICE_LINE in tab.view.price_text()
    table = tab.view.table   # the figures per price sit under a band of their own, after the test's others
    assert table.item(0, table._column_of["disk:randread_4k.iops per EUR/month"]).text() == "Disk per price"
    assert table.item(0, 1).text() == "Disk" and table.columnSpan(0, 1) == len(table.keys) - len(price_keys(tab))
    server = tab.view.table.item(tab.view.table.server_row("new-server"), 0)
    assert "Price: 120 €/month (as of 2026-11-01; source: Hetzner price list)" in server.toolTip()
    assert tab.has_unsaved_changes()

    csv = csv_file(window, tab, qtbot, tmp_path / "priced.csv")
    assert "per price" in csv and "Hetzner price list" in csv and "2026-11-01" in csv
    text = pdf_text(window, tab, qtbot, tmp_path / "priced.pdf")
    assert "Price of new-server: 120 €/month (as of 2026-11-01; source: Hetzner price list)" in text
    assert "per price" in text

    # saved with the comparison, and back when it is reopened
    tab.save_comparison()
    qtbot.waitUntil(lambda: tab.saved is not None, timeout=20_000)
    saved = workbench.store.comparisons.list()[0]
    assert saved.options["prices"]["new-server"]["amount"] == 120.0
    assert saved.options["page_size"] == "A4"
    assert not tab.has_unsaved_changes()
    tab.clear()
    assert tab.comparison is None and tab.prices.prices == {}
    tab.open_saved(saved.id)
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=20_000)
    wait_idle(qtbot, window)
    assert "disk:randread_4k.iops per EUR/month" in price_keys(tab) and PRICE_LINE in tab.view.price_text()

    # cleared: gone from the table, the line, the CSV and the PDF
    dialog = tab.prices.open_dialog()
    qtbot.waitExposed(dialog)
    qtbot.mouseClick(dialog.clear_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: price_keys(tab) == [], timeout=10_000)
    assert tab.view.price_text() == "" and tab.status_label.text() == "No prices: no figures per price"
    csv = csv_file(window, tab, qtbot, tmp_path / "cleared.csv")
    assert "per price" not in csv and "Hetzner" not in csv
    text = pdf_text(window, tab, qtbot, tmp_path / "cleared.pdf")
    assert "per price" not in text and "Price of" not in text


def test_an_inventory_price_is_shown_and_can_be_left_out_of_one_comparison(window, tab, workbench, qtbot):
    workbench.store.hosts.add(HostRecord(name="new-server", price=HostPrice(90.0, "USD", "once")))
    tab.compare(tab.run_ids())
    qtbot.waitUntil(lambda: "disk:randread_4k.iops per USD/once" in price_keys(tab), timeout=20_000)
    wait_idle(qtbot, window)
    assert "new-server: 90 $ once (date not given; source not given)" in tab.view.price_text()

    dialog = tab.prices.open_dialog()
    qtbot.waitExposed(dialog)
    group = dialog.groups["new-server"]
    assert (group.amount_spin.value(), group.currency_edit.text()) == (90.0, "USD")   # from the inventory
    group.amount_spin.setValue(0.0)
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: price_keys(tab) == [], timeout=10_000)
    assert tab.prices.prices == {"new-server": None} and tab.view.price_text() == ""

    # "no price here" is saved with the comparison; the inventory keeps its price
    tab.save_comparison()
    qtbot.waitUntil(lambda: tab.saved is not None, timeout=20_000)
    tab.clear()
    tab.open_saved(workbench.store.comparisons.list()[0].id)
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=20_000)
    wait_idle(qtbot, window)
    assert price_keys(tab) == [] and workbench.store.hosts.get("new-server").price.amount == 90.0


def test_prices_in_saved_options_are_read_back_and_malformed_ones_left_out() -> None:
    options = prices_to_options({"new-server": None, "old-server": HostPrice(10.0, "EUR")})
    assert prices_from_options(options) == {"new-server": None, "old-server": HostPrice(10.0, "EUR")}
    assert prices_from_options({"prices": {"x": {"amount": -3, "currency": "EUR"}, "y": "cheap"}}) == {}
    assert prices_from_options({"prices": "nonsense"}) == prices_from_options(None) == {}
    assert prices_to_options({}) == {}
