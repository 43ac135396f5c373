"""The customer PDF as a customer gets it: its text, its page sizes, and every page drawn (pdftoppm)."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
from datetime import date
from pathlib import Path

import pytest

pytest.importorskip("pypdf")
from pypdf import PdfReader  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from app.report.content import ReportError, ReportOptions, gather  # noqa: E402
from app.report.pdf_writer import write_pdf  # noqa: E402
from storage.records import ResultSample  # noqa: E402
from tests.fixtures.comparison_runs import disk_results, facts, store_two_servers  # noqa: E402

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
    assert len(reader.pages) == pages >= 5
    for page in reader.pages:
        assert (round(float(page.mediabox.width)), round(float(page.mediabox.height))) == SIZES[page_size]
    text = _text(path)
    first = text[0]
    assert "Mail platform renewal" in first and "Example GmbH" in first and "J. Admin" in first
    assert "Random read 4 KiB: new-server 3.4x old-server" in first
    assert "Mail storm accepted: new-server 5.4x old-server" in first
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
                     "value / baseline", "The production box, bought in 2019.", "Both were idle."):
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


def test_wide_tables_split_into_several_without_losing_a_column(qapp, workbench, tmp_path: Path) -> None:
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
    for header in ("Random read 4 KiB, best of sweep (IOPS)", "Sequential read (MB/s)", "Sequential write (MB/s)",
                   "Sync write 4 KiB p99 (ms)", "Sync write 1 MiB (MB/s)", "64,000 (16 workers)"):
        assert header in results, header


def test_a_short_table_moves_whole_to_the_next_page_instead_of_leaving_a_stub(qapp, tmp_path) -> None:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPdfWriter

    from app.report.pdf_pages import Flow, cell, table

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
