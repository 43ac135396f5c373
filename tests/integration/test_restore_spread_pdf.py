"""The PDF never shows a restore time as if it were exact: a single run's figure says where its spread
would come from."""
from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pypdf import PdfReader

from app.report.content import ReportOptions, gather
from app.report.pdf_writer import write_pdf
from app.summary.spread_basis import FROM_REPEATS_ONLY
from tests.fixtures.comparison_runs import store_three_servers

pytestmark = pytest.mark.integration


def test_restore_figures_in_the_pdf_say_spread_from_repeats_only(qapp, workbench) -> None:
    ids = store_three_servers(workbench.store)
    restores = [run_id for key, run_id in ids.items() if key.endswith(":restore")]
    disks = [run_id for key, run_id in ids.items() if key.endswith(":disk")]
    path = Path(workbench.home) / "restore.pdf"
    write_pdf(gather(workbench, restores, None, ReportOptions(title="Restore", date=date(2026, 11, 21))), path)
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(str(path)).pages)
    assert text.count(FROM_REPEATS_ONLY) >= 3, text       # each server's restore figures
    write_pdf(gather(workbench, disks, None, ReportOptions(title="Disk", date=date(2026, 11, 21))), path)
    text = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(str(path)).pages)
    assert FROM_REPEATS_ONLY not in text                  # measured spreads: nothing to say
