"""Performance per price: set on a host (inventory) or for one comparison; shown in the table and the CSV
with its date and source, and nowhere when no price is set."""
from __future__ import annotations

import csv
import io
import json

import pytest

from app.cli import main
from app.compare.model import RunInput, build, compare_runs
from app.compare.prices import parse_price, prices_from_options
from app.compare.table import csv_text, text_table
from storage.errors import StoreError
from storage.records import HostPrice, HostRecord
from tests.fixtures.comparison_runs import store_two_servers
from tests.unit.test_compare_ties import cpu, record

EUR_MONTH = HostPrice(200.0, "EUR", "month", "2026-11-01", "Hetzner price list")


def _runs() -> list[RunInput]:
    return [RunInput(record(1, "old"), None, cpu(1000.0, [990.0, 1010.0, 1000.0])),
            RunInput(record(2, "new"), None, cpu(4000.0, [3980.0, 4020.0, 4000.0]), price=EUR_MONTH)]


def test_figures_per_price_unit_with_the_price_date_and_source() -> None:
    comparison = build(_runs(), prices={"old": HostPrice(100.0, "EUR", "month", "2026-10-15", "quote 4711")})
    keys = [m.key for m in comparison.metrics]
    assert keys == ["cpu:single", "cpu:multi", "cpu:multi per EUR/month"]   # headline figures only
    column = comparison.metrics[-1]
    assert (column.label, column.unit) == ("CPU all cores per price", "ops/s per €/month")
    old, new = comparison.rows
    assert old.cells[column.key].value == 10.0 and new.cells[column.key].value == 20.0
    assert new.cells[column.key].best and new.cells[column.key].note == "200 €/month"
    assert comparison.price_lines() == ["old: 100 €/month (as of 2026-10-15; source: quote 4711)",
                                        "new: 200 €/month (as of 2026-11-01; source: Hetzner price list)"]

    assert "CPU all cores per price: new leads with 20.0 ops/s per €/month; old: 0.50x of new (0.35–0.72)." \
        in comparison.winners()
    table = text_table(comparison).text()
    assert "CPU all cores per price (ops/s per €/month)" in table
    assert "100 €/month (2026-10-15)" in table and "*20.0" in table

    rows = list(csv.DictReader(io.StringIO(csv_text(comparison))))
    assert [row["price"] for row in rows] == ["100.0", "200.0"]
    assert [row["price date"] for row in rows] == ["2026-10-15", "2026-11-01"]
    assert [row["price source"] for row in rows] == ["quote 4711", "Hetzner price list"]
    assert [row["CPU all cores per price (ops/s per €/month)"] for row in rows] == ["10.0", "20.0"]


def test_no_price_no_price_figures_anywhere() -> None:
    comparison = build([RunInput(r.record, r.facts, r.results) for r in _runs()])
    assert all("price" not in m.key and "price" not in m.label for m in comparison.metrics)
    assert comparison.price_lines() == [] and "price" not in comparison.summary()
    assert "price" not in text_table(comparison).text().lower()
    assert "price" not in csv_text(comparison).lower()


def test_different_currencies_and_periods_are_not_compared() -> None:
    comparison = build(_runs(), prices={"old": HostPrice(5000.0, "USD", "once")})
    priced = [m for m in comparison.metrics if "per price" in m.label]
    assert [m.unit for m in priced] == ["ops/s per $", "ops/s per €/month"]
    for item in priced:
        cells = [row.cells[item.key] for row in comparison.rows if item.key in row.cells]
        assert len(cells) == 1 and not cells[0].best
    assert comparison.rows[0].cells[priced[0].key].text == "0.2"   # small figures keep their digits


def test_price_text_and_options() -> None:
    assert parse_price("120 EUR/month", "2026-11-01", "list") == HostPrice(120.0, "EUR", "month", "2026-11-01",
                                                                           "list")
    assert parse_price("3400 USD/once").period == "once"
    assert parse_price("99.5 EUR").period == "month"
    for bad in ("", "EUR 120", "-5 EUR", "0 EUR/month", "12 EUR/year", "1e400 EUR"):
        with pytest.raises(ValueError):
            parse_price(bad)
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        parse_price("1 EUR", date="1.11.2026")
    options = {"prices": {"db1": {"amount": 80, "currency": "EUR", "period": "month"}, "db2": {"amount": "x"},
                          "db3": "cheap"}}
    assert prices_from_options(options) == {"db1": HostPrice(80.0, "EUR", "month")}
    assert prices_from_options({}) == {} and prices_from_options({"prices": []}) == {}


def test_the_inventory_keeps_a_price_until_it_is_cleared(workbench) -> None:
    hosts = workbench.store.hosts
    hosts.add(HostRecord("db1", address="192.0.2.1", price=EUR_MONTH))
    assert hosts.get("db1").price == EUR_MONTH
    hosts.update("db1", HostRecord("db1", address="192.0.2.2"))   # an edit without a price keeps it
    assert hosts.get("db1").price == EUR_MONTH and hosts.get("db1").address == "192.0.2.2"
    assert workbench.get_host("db1").address == "192.0.2.2"
    hosts.update("db1", HostRecord("db1-renamed", address="192.0.2.2"))
    assert hosts.get("db1-renamed").price == EUR_MONTH
    hosts.set_price("db1-renamed", None)
    assert hosts.get("db1-renamed").price is None
    with pytest.raises(StoreError, match="positive amount"):
        hosts.set_price("db1-renamed", HostPrice(-1.0, "EUR"))
    with pytest.raises(StoreError, match="per month or once"):
        hosts.add(HostRecord("db2", price=HostPrice(1.0, "EUR", "year")))


def test_compare_reads_the_inventory_price(workbench) -> None:
    ids = store_two_servers(workbench.store)
    workbench.store.hosts.add(HostRecord("new-server", address="192.0.2.9"))
    workbench.store.hosts.set_price("new-server", EUR_MONTH)
    comparison = compare_runs(workbench, [ids["old_cpu"], ids["new_cpu"]])
    assert [row.price for row in comparison.rows] == [None, EUR_MONTH]
    assert comparison.rows[1].cells["cpu:multi per EUR/month"].value == pytest.approx(41_000.0 / 200.0)


@pytest.fixture
def stored(cli_env):
    from app.workbench import Workbench

    bench = Workbench(home=cli_env["home"], db_url=f"sqlite:///{cli_env['db']}")
    try:
        return store_two_servers(bench.store)
    finally:
        bench.close()


def test_cli_host_price_then_compare(stored, capsys, tmp_path) -> None:
    assert main(["host", "add", "new-server", "--address", "192.0.2.9", "--price", "200 EUR/month",
                 "--price-date", "2026-11-01", "--price-source", "Hetzner price list"]) == 0
    capsys.readouterr()
    assert main(["host", "list", "--json"]) == 0
    listed = {h["name"]: h for h in json.loads(capsys.readouterr().out)}
    assert listed["new-server"]["price"] == {"amount": 200.0, "currency": "EUR", "period": "month",
                                             "date": "2026-11-01", "source": "Hetzner price list"}
    assert listed["local"]["price"] is None

    table = tmp_path / "t.csv"
    assert main(["compare", str(stored["old_cpu"]), str(stored["new_cpu"]), "--price", "old-server=50 EUR/month",
                 "--csv", str(table)]) == 0
    out = capsys.readouterr().out
    assert "CPU all cores per price (ops/s per €/month)" in out
    assert "new-server: 200 €/month (as of 2026-11-01; source: Hetzner price list)" in out
    assert "old-server: 50 €/month (date not given; source not given)" in out
    assert "price source" in table.read_text()

    assert main(["host", "edit", "new-server", "--no-price"]) == 0
    capsys.readouterr()
    assert main(["compare", str(stored["old_cpu"]), str(stored["new_cpu"])]) == 0
    assert "price" not in capsys.readouterr().out.lower()


def test_cli_refuses_a_bad_price_with_what_to_write(stored, capsys) -> None:
    assert main(["host", "add", "db9", "--address", "192.0.2.9", "--price", "cheap"]) == 2
    err = capsys.readouterr().err
    assert "AMOUNT CURRENCY/month" in err and "'120 EUR/month'" in err
    assert main(["host", "list", "--json"]) == 0
    assert "db9" not in capsys.readouterr().out   # nothing stored
    assert main(["host", "add", "db9", "--address", "192.0.2.9", "--price-date", "2026-11-01"]) == 2
    assert "--price-date and --price-source go with --price" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(stored["old_cpu"]), "--price", "old-server"])
    assert exc.value.code == 2 and "HOST=PRICE, e.g. 'db1=120 EUR/month'" in capsys.readouterr().err
    assert main(["host", "edit", "local", "--price", "5 EUR/month"]) == 2
    assert "cannot be edited" in capsys.readouterr().err
