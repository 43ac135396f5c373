"""The Compare tab on stored dns runs: the latency distribution drawn from the stored points, the never
answered share at the right edge, the counts with their verdicts and the slowest names."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.fixtures.dns_runs import store_dns_runs
from widgets.resolver_colours import resolver_colours

pytestmark = pytest.mark.gui
FAR_P50 = "0.146x of 10.0.0.2:53 ("   # one run each, 7x apart: past the dns p50's noise floor


def _compare(window, workbench, qtbot, hosts):
    ids = store_dns_runs(workbench.store, hosts)
    tab = window.compare
    window.tabs.setCurrentWidget(tab)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(tab.picker.shown_runs()) == len(ids), timeout=20_000)
    tab.picker.select_ids(ids)
    qtbot.mouseClick(tab.picker.compare_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: tab.comparison is not None and bool(tab.view.dns.lines), timeout=20_000)
    return tab, ids


def test_two_resolvers_of_one_run_are_drawn_from_their_stored_points(make_window, workbench, qtbot):
    window = make_window()
    tab, (run_id,) = _compare(window, workbench, qtbot, ("office-gw",))
    panel = tab.view.dns
    assert panel.isVisibleTo(tab.view) and tab.view.dns_title.isVisibleTo(tab.view)
    stored = {(r.metadata["resolver"], r.metadata["pass"]): r.metadata["cdf"]
              for r in workbench.run_detail(run_id).results if r.metric == "p50_ms"}
    assert set(panel.chart.curves) == {(resolver, pass_) for resolver, pass_ in stored}
    for (resolver, pass_), points in stored.items():
        curve = panel.chart.curves[(resolver, pass_)]
        xs, ys = curve.xData, curve.yData   # as handed to the item (getData() gives the log-scaled x)
        assert list(xs) == [ms for ms, _share in points] and list(ys) == [share for _ms, share in points]
        # the warm pass dashed, the cold one solid
        style = panel.chart.curves[(resolver, pass_)].opts["pen"].style()
        assert (style == Qt.PenStyle.DashLine) == (pass_ == "warm")
    # the local resolver lost 8 of 5,000 queries in each pass: a bar from 1 - 0.16 % to 1 at the right edge
    for pass_ in ("cold", "warm"):
        bar = panel.chart.never[("10.0.0.2:53", pass_)]
        xs, ys = bar.xData, bar.yData
        assert list(ys) == [1.0 - 8 / 5000, 1.0] and xs[0] > max(p[0] for pts in stored.values() for p in pts)
    assert ("9.9.9.9:53", "cold") not in panel.chart.never
    assert "10.0.0.2:53, cold — never answered 0.16 %" in panel.chart.names
    assert "9.9.9.9:53, cold" in panel.chart.names
    # the counts and the verdicts under p50, p99 and timeouts
    table = panel.table
    rows = {(table.item(r, 0).text(), table.item(r, 1).text()): r for r in range(table.rowCount())}
    local = rows[("10.0.0.2:53", "cold")]
    far = rows[("9.9.9.9:53", "cold")]
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert table.item(local, headers.index("Timeouts")).text() == "8"
    assert table.item(local, headers.index("p50 ms")).text() == "2.48"
    assert table.item(far, headers.index("p50 ms")).text() == "17.0"
    verdicts = panel.verdicts.text()
    local_colour = resolver_colours(["10.0.0.2:53", "9.9.9.9:53"])["10.0.0.2:53"]   # the resolver's own colour
    assert f"timeouts: <span style='color:{local_colour}'>10.0.0.2:53</span> more than 9.9.9.9:53 (8 vs 0" in verdicts
    assert f"cold pass, p50: <span style='color:{local_colour}'>10.0.0.2:53</span> leader" in verdicts
    assert f"9.9.9.9:53</span> {FAR_P50}" in verdicts
    assert table.item(far, headers.index("NXDOMAIN")).text() == "160"
    # the slowest names, timeouts first
    text = panel.slowest.text()
    assert "lost0.void.example. timeout" in text and "slow0.odd.example." in text


def test_a_comparison_without_dns_runs_hides_the_section(make_window, workbench, qtbot):
    from tests.fixtures.comparison_runs import store_two_servers

    ids = store_two_servers(workbench.store)
    window = make_window()
    tab = window.compare
    window.reload_runs()
    qtbot.waitUntil(lambda: len(tab.picker.shown_runs()) == len(ids), timeout=20_000)
    tab.compare([ids["old_cpu"], ids["new_cpu"]])
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=20_000)
    assert not tab.view.dns.isVisibleTo(tab.view) and not tab.view.dns_title.isVisibleTo(tab.view)


def test_every_resolver_and_pass_of_every_run_is_a_row_as_in_the_csv(make_window, workbench, qtbot):
    import csv
    import io

    from app.compare.table import csv_text
    from widgets.dns_table import line_cells

    window = make_window()
    tab, _ids = _compare(window, workbench, qtbot, ("branch-a", "branch-b"))
    table = tab.view.dns.table
    shown = [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]
    # two hosts x two resolvers x cold and warm: eight rows, each the line's own cells
    assert len(shown) == 8 and shown == [line_cells(line) for line in tab.dns_lines]
    assert {(row[0], row[1]) for row in shown} == {(f"{host} → {resolver}", pass_) for host in ("branch-a", "branch-b")
                                                   for resolver in ("10.0.0.2:53", "9.9.9.9:53")
                                                   for pass_ in ("cold", "warm")}
    rows = list(csv.DictReader(io.StringIO(csv_text(tab.comparison, tab.dns_lines).partition("\n\n")[2])))
    assert [(r["dns line"], r["pass"], r["p99_ms"]) for r in rows] == \
        [(line.label, line.pass_, repr(line.latency["p99_ms"])) for line in tab.dns_lines]
