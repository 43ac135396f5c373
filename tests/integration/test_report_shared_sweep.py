"""A comparison of shared-storage totals in the customer PDF: the sweep curve with its knee, and a methodology
that says how the sweep ran and for how long."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pypdf")
from pypdf import PdfReader  # noqa: E402

from app.report.content import ReportOptions, gather  # noqa: E402
from app.report.pdf_writer import write_pdf  # noqa: E402
from tests.fixtures.shared_sweeps import START, store_sweep  # noqa: E402

pytestmark = pytest.mark.integration


def _text(path: Path) -> str:
    return " ".join(" ".join(page.extract_text().split()) for page in PdfReader(str(path)).pages)


def test_two_storage_systems_get_their_sweep_curves_and_a_true_methodology(qapp, workbench) -> None:
    efs = store_sweep(workbench, "/mnt/efs", 900.0)
    nas = store_sweep(workbench, "/mnt/nas", 3000.0, hosts=("nas-a", "nas-b"), start=START + 600)
    data = gather(workbench, [efs.total_run_id, nas.total_run_id], None, ReportOptions(title="Shared storage"))
    [sweep_efs, sweep_nas] = data.sweeps
    assert [p.shape for p in sweep_efs.points] == ["1×1", "1×2", "2×1", "1×4", "2×2", "1×8", "2×4", "2×8"]
    assert (sweep_efs.knee, sweep_nas.knee) == ("c2t8", None)
    path = Path(workbench.home) / "shared.pdf"
    assert write_pdf(data, path) <= 3
    text = _text(path)
    assert "Sweep: total op/s by step" in text and "knee" in text and "2×8" in text
    assert "default settings" not in text
    assert ("2 client hosts (nfs-a and nfs-b) wrote their own files in /mnt/efs together, in steps of 1 and 2 "
            "clients × 1, 2, 4 and 8 threads each, with 4 KiB requests on files opened O_WRONLY|O_DIRECT|O_SYNC") \
        in text
    assert "Each step ran for 10 s, 2 s after the one before" in text
    assert "first requests were within 1.0 ms of each other (± 4.0 ms)" in text
    # the runs last as long as their sweeps (8 steps of 10 s, 2 s apart), not "0 s"
    assert "TOTAL /mnt/efs (2 clients) for 1 min 34 s" in text


def test_a_report_without_shared_storage_has_no_sweep(qapp, workbench) -> None:
    from tests.fixtures.comparison_runs import store_two_servers

    ids = store_two_servers(workbench.store)
    data = gather(workbench, list(ids.values()), None, ReportOptions())
    assert data.sweeps == ()
