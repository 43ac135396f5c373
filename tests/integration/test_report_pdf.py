"""The customer PDF as a customer gets it: its text, its page sizes, and every page drawn (pdftoppm)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("pypdf")
from pypdf import PdfReader  # noqa: E402
from PySide6.QtGui import QColor, QImage  # noqa: E402

from app.report.content import ReportError, ReportOptions, gather  # noqa: E402
from app.report.pdf_writer import write_pdf  # noqa: E402
from storage.records import ResultSample  # noqa: E402
from tests.fixtures.comparison_runs import (  # noqa: E402
    THREE,
    disk_results,
    facts,
    store_same_cpu_three_times,
    store_three_servers,
    store_two_servers,
)
from widgets.host_colours import host_colour  # noqa: E402

pytestmark = pytest.mark.integration

SIZES = {"A4": (595, 842), "Letter": (612, 792)}


def _text(path: Path) -> list[str]:
    """Per page, the words joined by single spaces (the PDF places words, not sentences)."""
    return [" ".join(page.extract_text().split()) for page in PdfReader(str(path)).pages]


def _pictures(page) -> int:
    """Image XObjects drawn on the page (without decoding them)."""
    objects = (page.get("/Resources") or {}).get("/XObject") or {}
    return sum(1 for ref in objects.values() if ref.get_object().get("/Subtype") == "/Image")


def _pdftoppm() -> str:
    found = shutil.which("pdftoppm")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("pdftoppm (poppler-utils) is not installed")
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    return found


@pytest.fixture
def report(qapp, workbench):
    ids = store_two_servers(workbench.store)

    def make(page_size: str = "A4", **options) -> tuple[Path, int]:
        data = gather(workbench, list(ids.values()), ids["old_disk"],
                      ReportOptions(title="Mail platform renewal", customer="Example GmbH", author="J. Admin",
                                    date=date(2026, 11, 21), page_size=page_size, notes="Both were idle.",
                                    **options))
        path = Path(workbench.home) / f"report-{page_size}.pdf"
        return path, write_pdf(data, path)
    return make


@pytest.mark.parametrize("page_size", ["A4", "Letter"])
def test_the_pdf_holds_servers_figures_ratios_and_caveats(report, page_size: str) -> None:
    path, pages = report(page_size)
    reader = PdfReader(str(path))
    assert len(reader.pages) == pages and 2 <= pages <= 5
    for page in reader.pages:
        assert (round(float(page.mediabox.width)), round(float(page.mediabox.height))) == SIZES[page_size]
    text = _text(path)
    first = text[0]
    assert "Mail platform renewal" in first and "Example GmbH" in first and "J. Admin" in first
    assert "Random read 4 KiB: old-server (baseline) 5,000 IOPS" in first
    assert "new-server: ahead of old-server by 3.4" in first
    assert "Mail storm accepted: old-server (baseline) 11.0 msg/s" in first
    assert "new-server: ahead of old-server by 5.4" in first
    assert "caveat: synthetic" in first
    for number, page in enumerate(text, start=1):
        assert f"Page {number} of {pages}" in page
        assert "Mail platform renewal · 2026-11-21" in page
    everything = " ".join(text)
    for expected in ("old-server", "new-server", "17,000", "5,000", "45,000", "41,000", "59.0", "250x", "6.8x",
                     "AMD EPYC 9354P", "Intel Xeon E5-2620 v4", "Debian GNU/Linux 12", "kernel 6.1.0-18-",
                     "Cached I/O (no O_DIRECT)", "write cache?", "may be absorbing them",
                     "Synthetic mail storm: no MTA was listening", "higher is better", "lower is better",
                     "fio 3.33", "zlib 1.2.13", "%util of the busiest disk", "seconds since the test started",
                     "value / baseline", "The production box, bought in 2019.", "Both were idle.",
                     "exceeds how far the next run could land", "noise floor"):
        assert expected in everything, expected
    assert "hunter2" not in everything


def test_every_page_renders_to_a_picture_with_something_on_it(report, tmp_path: Path) -> None:
    path, pages = report("A4")
    subprocess.run([_pdftoppm(), "-r", "40", "-png", str(path), str(tmp_path / "page")], check=True, timeout=60)
    images = sorted(tmp_path.glob("page-*.png"))
    assert len(images) == pages
    for image_path in images:
        image = QImage(str(image_path))
        assert not image.isNull()
        inked = sum(1 for y in range(0, image.height(), 2) for x in range(0, image.width(), 2)
                    if image.pixelColor(x, y).lightness() < 200)
        assert inked > 300, f"{image_path.name} is nearly blank ({inked} dark pixels)"


def test_a_logo_goes_on_the_title_page_and_a_bad_one_is_refused(report, tmp_path: Path) -> None:
    logo = tmp_path / "logo.png"
    image = QImage(120, 60, QImage.Format.Format_RGB32)
    image.fill(0xC0392B)
    assert image.save(str(logo))
    path, _pages = report("A4", logo_path=str(logo))
    reader = PdfReader(str(path))
    assert _pictures(reader.pages[0]) == 1
    assert sum(_pictures(page) for page in reader.pages[1:]) == 0   # charts are vector, not pictures
    broken = tmp_path / "broken.png"
    broken.write_text("not an image")
    with pytest.raises(ReportError, match="cannot read the logo"):
        report("A4", logo_path=str(broken))


def test_written_from_a_worker_thread_and_atomically(report, workbench) -> None:
    done: dict[str, object] = {}

    def work() -> None:
        try:
            done["result"] = report("Letter")
        except Exception as exc:  # handed to the test thread
            done["error"] = exc

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(60)
    assert "error" not in done, done.get("error")
    path, pages = done["result"]
    assert len(PdfReader(str(path)).pages) == pages
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_many_figures_read_as_rows_and_none_is_lost(qapp, workbench, tmp_path: Path) -> None:
    store = workbench.store
    ids = []
    for host in ("storage-node-with-a-rather-long-name-01", "storage-node-with-a-rather-long-name-02"):
        run_id = store.runs.create(host, "disk", {"size": "2G"})
        store.runs.add_facts(run_id, facts(host, "Xeon", 8, 32, "sda", False))
        extra = [ResultSample("disk", name, value, unit, {"engine": "fio", "engine_version": "fio-3.33"})
                 for name, value, unit in (("seqread_1m.mbps", 512.0, "MB/s"), ("seqwrite_1m.mbps", 480.0, "MB/s"),
                                           ("syncwrite_4k.lat_p99", 1.9, "ms"), ("syncwrite_1m.mbps", 95.0, "MB/s"),
                                           ("sweep_randread_4k_w16.iops", 64_000.0, "IOPS"))]
        store.runs.add_results(run_id, disk_results(20_000, 0.4, 900, 800.0, False) + extra)
        store.runs.finish(run_id, "done")
        ids.append(run_id)
    path = tmp_path / "wide.pdf"
    write_pdf(gather(workbench, ids, ids[0]), path)
    results = " ".join(_text(path)[1:])
    for figure in ("Random read 4 KiB, best of sweep IOPS, higher is better", "Sequential read MB/s, higher is better",
                   "Sequential write", "Sync write 4 KiB p99 ms, lower is better", "Sync write 1 MiB",
                   "64,000", "(16 workers)", "storage-node-with-a-rather-long-name-02"):
        assert figure in results, figure


@pytest.fixture
def three_servers(qapp, workbench):
    ids = store_three_servers(workbench.store)

    def make(run_ids: list[int] | None = None, baseline: int | None = ids["db-02:disk"],
             prices: dict | None = None) -> tuple[Path, int, object]:
        data = gather(workbench, run_ids or list(ids.values()), baseline,
                      ReportOptions(title="Database platform renewal", customer="Example GmbH",
                                    date=date(2026, 11, 21)), prices)
        path = Path(workbench.home) / "three.pdf"
        return path, write_pdf(data, path), data
    make.ids = ids
    return make


def test_three_servers_and_four_tests_fit_seven_pages_with_each_caveat_twice(three_servers) -> None:
    # page 1 names every server's standing on every headline figure; the tables say each verdict
    path, pages, data = three_servers()
    assert pages <= 7
    everything = " ".join(_text(path))
    assert data.caveats
    for note in data.caveats:   # beside its figures, and in the appendix: no more, no less
        assert everything.count(note.text) == 2, note.text
    assert "Appendix: caveats" in everything
    for heading in ("Disk", "CPU", "Mail storm", "Restore", "Methodology", "Verdicts"):
        assert heading in everything
    assert "CPU · CPU" not in everything and "CPU single core" not in everything    # titles do not repeat
    assert "Single core ops/s, higher is better" in everything
    assert "per price" not in everything and "Price of" not in everything      # no price set: no price figures


def test_figures_per_price_when_prices_are_set_with_their_date_and_source(three_servers) -> None:
    from app.compare.prices import parse_price

    prices = {"db-01": parse_price("420 EUR/month", "2026-11-01", "Hetzner price list"),
              "db-02": parse_price("90 EUR/month", "2026-11-01", "Hetzner price list")}
    path, _pages, _data = three_servers(prices=prices)
    everything = " ".join(_text(path))
    assert "Performance per price" in everything
    assert "Price of db-01: 420 €/month (as of 2026-11-01; source: Hetzner price list)" in everything
    assert "Random read 4 KiB per price IOPS per €/month, higher is better" in everything    # charted
    assert "Price of cloud-vm" not in everything


def test_the_methodology_speaks_in_sentences_not_key_value_pairs(three_servers) -> None:
    path, _pages, _data = three_servers()
    everything = " ".join(_text(path))
    assert not re.search(r"\b\w+=\S", everything), re.search(r"\b\w+=\S", everything)
    assert "for 5 s each after a 1 s warm-up" in everything
    for raw in ("margin", "readahead_kb", "read-ahead", "sink_confirmed", "queue_poll"):
        assert raw not in everything, raw


def test_a_figure_only_one_server_has_gets_no_bar_chart(three_servers) -> None:
    ids = three_servers.ids
    path, _pages, _data = three_servers([ids["db-01:mailstorm"], ids["db-01:restore"], ids["db-02:cpu"],
                                         ids["cloud-vm:cpu"]], None)
    alone = " ".join(_text(path))
    assert "Accepted (msg/s)" in alone and "61.0" in alone          # the figure, in its table
    assert "msg/s, higher is better" not in alone                   # ... but no chart of one bar
    assert "s, lower is better" not in alone
    assert "All cores ops/s, higher is better" in alone             # two servers: a chart
    path, _pages, _data = three_servers()
    assert "msg/s, higher is better" in " ".join(_text(path))


def test_the_same_machine_three_times_names_no_winner_on_any_page(qapp, workbench) -> None:
    ids = store_same_cpu_three_times(workbench.store)
    path = Path(workbench.home) / "tie.pdf"
    write_pdf(gather(workbench, ids, None, ReportOptions(title="Same machine")), path)
    everything = " ".join(_text(path))
    outcome = everything.partition("Summary")[0]
    # single runs 2 % apart: within how far the next run could land, so no one is ahead, and one run each
    # cannot show a tie either: page 1 says what would settle it
    assert "CPU all cores:" in outcome and "can't tell yet vs" in outcome and "run 2 more repeats on each" in outcome
    assert "ahead of" not in everything and "x of " not in everything
    # page 1 and every cell of both columns but the leaders'
    assert everything.count("can't tell yet vs") >= 2 + 2 * 2
    assert "were judged with the noise floor" in everything


def test_bars_and_curves_wear_the_servers_window_colours(three_servers, tmp_path: Path) -> None:
    path, _pages, _data = three_servers()
    # the page with the disk bar charts (it moves with the length of page 1 and the tables)
    # the charts come after the table, whose rows read the same: the last page that holds the words
    number = max(i for i, page in enumerate(_text(path), start=1)
                 if "Random read 4 KiB IOPS, higher is better" in page)
    subprocess.run([_pdftoppm(), "-r", "40", "-f", str(number), "-l", str(number), "-png", str(path),
                    str(tmp_path / "page")], check=True, timeout=60)
    [picture] = tmp_path.glob("page-*.png")
    image = QImage(str(picture))
    pixels = [image.pixelColor(x, y) for y in range(image.height()) for x in range(image.width())]
    for host in THREE:
        colour = QColor(host_colour(host, THREE))
        near = sum(1 for p in pixels if abs(p.red() - colour.red()) + abs(p.green() - colour.green())
                   + abs(p.blue() - colour.blue()) < 40)
        assert near > 40, f"{host}'s colour {colour.name()} is not on the disk page ({near} pixels)"


def test_a_short_table_moves_whole_to_the_next_page_instead_of_leaving_a_stub(qapp, tmp_path) -> None:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPdfWriter

    from app.report.pdf_pages import Flow
    from app.report.pdf_tables import cell, table

    writer = QPdfWriter(str(tmp_path / "flow.pdf"))
    writer.setResolution(72)     # as the report does: one unit is one point
    flow = Flow(writer, QRectF(0, 0, 400, 300))
    rows = [[cell(f"server-{i}"), cell("1,000")] for i in range(4)]
    flow.y = 250.0      # 50 pt left: the heading and the header row fit, the rows do not

    def block() -> None:
        flow.heading("Mail storm")
        table(flow, ["Server", "msg/s"], rows)

    flow.together(block)
    assert len(flow.pages) == 2 and flow.pages[0] == []
    assert flow.y < 250.0      # all of it on the new page, from its top

    # a block longer than a page still breaks: there is no other way
    flow = Flow(writer, QRectF(0, 0, 400, 300))
    long_rows = [[cell(f"server-{i}"), cell("1,000")] for i in range(40)]
    flow.y = 100.0
    flow.together(lambda: table(flow, ["Server", "msg/s"], long_rows))
    assert flow.pages[0] != [] and len(flow.pages) > 2


def test_odd_runs_make_a_report_that_says_what_is_missing(qapp, workbench, tmp_path: Path) -> None:
    store = workbench.store
    odd = store.runs.create("odd-host", "disk", {"params": {"tests": "randread_4k", "runtime": "soon",
                                                            "file_size": "2G", "sweep_workers": 4}})
    store.runs.finish(odd, "failed", error="the test directory is full")
    idle = store.runs.create("odd-host", "idle", {"params": "not a mapping"})
    mail = store.runs.create("mail-host", "mailstorm", {"params": {"messages": "many", "size": None}})
    store.runs.add_results(mail, [ResultSample("mailstorm", "accepted_per_s", 5.0, "msg/s",
                                               {"per_second": ["x", None, 3.0], "synthetic": True})])
    store.runs.finish(mail, "done")
    path = tmp_path / "odd.pdf"
    pages = write_pdf(gather(workbench, [odd, idle, mail]), path)
    everything = " ".join(_text(path))
    assert pages >= 2
    assert "No figure of this test was stored for the compared runs." in everything
    assert "failed" in everything and "unfinished" in everything
    assert "Random read 4 KiB for soon each" in everything and "2 GiB test file" in everything


def test_a_coloured_square_stays_with_the_server_name_when_a_cell_wraps(qapp, tmp_path) -> None:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPdfWriter

    from app.report.pdf_pages import CELL_BOLD, Flow, Style
    from app.report.pdf_results import SWATCH

    writer = QPdfWriter(str(tmp_path / "wrap.pdf"))
    writer.setResolution(72)
    flow = Flow(writer, QRectF(0, 0, 400, 300))
    line = [(SWATCH, Style(8.5, bold=True)), ("cloud-vm", CELL_BOLD), (" baseline server", CELL_BOLD)]
    laid = flow.lay_lines([line], flow.width_of(SWATCH + "cloud-vm", CELL_BOLD) + 2.0)
    assert "".join(text for text, _style in laid[0]) == SWATCH + "cloud-vm"
    assert ["".join(t for t, _s in row) for row in laid[1:]] == ["baseline", "server"]


@pytest.mark.parametrize("page_size", ["A4", "Letter"])
def test_no_report_ends_on_a_page_of_a_few_lines(qapp, workbench, tmp_path: Path, page_size: str) -> None:
    # two servers' disk, CPU and mail storm runs without notes: laid out as it was, the last caveat
    # of the appendix went onto a fourth page of its own
    ids = store_two_servers(workbench.store)
    data = gather(workbench, list(ids.values()), None,
                  ReportOptions(title="Server comparison", date=date(2026, 11, 26), page_size=page_size))
    path = tmp_path / "report.pdf"
    pages = write_pdf(data, path)
    subprocess.run([_pdftoppm(), "-r", "30", "-png", "-f", str(pages), "-l", str(pages), str(path),
                    str(tmp_path / "last")], check=True, timeout=60)
    [image_path] = tmp_path.glob("last-*.png")
    image = QImage(str(image_path))
    footer = image.height() - int(image.height() * 84 / SIZES[page_size][1])   # the footer's band
    inked = [y for y in range(0, footer) if any(image.pixelColor(x, y).lightness() < 200
                                                for x in range(0, image.width(), 2))]
    used = (max(inked) - min(inked)) / footer
    assert pages == 1 or used >= 0.2, f"page {pages} of {pages} holds {used:.0%} of a page"


def test_a_percent_axis_stops_at_100_also_for_a_reading_a_hair_over_it() -> None:
    from app.report.pdf_charts import percent_ticks

    assert percent_ticks(0.0, 100.4)[-1] == 100.0 and percent_ticks(0.0, 99.0)[-1] == 100.0
    assert percent_ticks(0.0, 30.0)[-1] < 100.0   # a quiet disk keeps a scale it can be read on
    assert percent_ticks(0.0, 180.0)[-1] >= 180.0   # several cores' CPU %: the data decides
