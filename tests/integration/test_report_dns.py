"""Stored dns runs in the customer PDF: the latency distribution drawn from the stored points, the share
never answered, the counts, the verdicts and the slowest names."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pypdf")
from pypdf import PdfReader  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402

from app.report.content import ReportOptions, gather  # noqa: E402
from app.report.pdf_dns import Axes, curve_points, key_text  # noqa: E402
from app.report.pdf_writer import write_pdf  # noqa: E402
from tests.fixtures.dns_runs import store_dns_runs  # noqa: E402

pytestmark = pytest.mark.integration


def _text(path: Path) -> str:
    return " ".join(" ".join(page.extract_text().split()) for page in PdfReader(str(path)).pages)


def test_two_resolvers_in_the_pdf(qapp, workbench) -> None:
    ids = store_dns_runs(workbench.store, ("office-gw",))
    data = gather(workbench, ids, None, ReportOptions(title="Resolvers"))
    assert {(line.label, line.pass_) for line in data.dns} == {
        ("10.0.0.2:53", "cold"), ("10.0.0.2:53", "warm"), ("9.9.9.9:53", "cold"), ("9.9.9.9:53", "warm")}
    # the chart draws exactly the stored points: each drawn point maps back to its (ms, share)
    stored = {(r.metadata["resolver"], r.metadata["pass"]): r.metadata["cdf"]
              for r in workbench.run_detail(ids[0]).results if r.metric == "p50_ms"}
    axes = Axes(QRectF(40.0, 20.0, 400.0, 180.0), 0.01, 10_000.0)
    for line in data.dns:
        drawn = [axes.back(point) for point in curve_points(line, axes)]
        want = stored[(line.resolver, line.pass_)]
        assert len(drawn) == len(want)
        assert [v for point in drawn for v in point] == pytest.approx([v for p in want for v in p], rel=1e-9,
                                                                      abs=1e-12)
    path = Path(workbench.home) / "dns.pdf"
    write_pdf(data, path)
    text = _text(path)
    assert "Latency distribution of every query" in text
    local = next(x for x in data.dns if x.label == "10.0.0.2:53")
    assert key_text(local) == "10.0.0.2:53, cold — never answered 0.16 %"
    assert "10.0.0.2:53, cold — never answered 0.16 %" in text
    assert "cold pass, timeouts: 10.0.0.2:53 more than 9.9.9.9:53 (8 vs 0, p = 0.0078)" in text
    # one run each, 7x apart: past the dns p50's noise floor (resources/noise_floors.json)
    assert "cold pass, p50: 10.0.0.2:53 leader; 9.9.9.9:53 0.146x of 10.0.0.2:53 (" in text
    assert "lost0.void.example. timeout" in text and "slow0.odd.example." in text
    assert "NXDOMAIN" in text and "4,992" in text
    assert "Latencies run from the first send to the answer's read, as dnsperf times them, and cover" in text


def test_a_report_without_dns_has_no_dns_block(qapp, workbench) -> None:
    from tests.fixtures.comparison_runs import store_two_servers

    ids = store_two_servers(workbench.store)
    data = gather(workbench, list(ids.values()), None, ReportOptions())
    assert data.dns == ()
