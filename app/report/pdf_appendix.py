"""The closing pages: how each test was run, in sentences, then the appendix of caveats and definitions."""
from __future__ import annotations

from app.compare.noise_floors import floor_for
from app.compare.ties import tie_rule
from app.report.consistency import CONSISTENCY_MEANS
from app.report.content import ReportData
from app.report.pdf_pages import BODY, H1, H2, H3, SMALL, Flow

RATIOS_DEFINED = ("Ratios say how many times as good as the baseline a figure is: value / baseline where higher "
                  "is better (IOPS, MB/s, msg/s, CPU scores), baseline / value for times and latencies. So 3.4x "
                  "always means 3.4 times as good, and 0.50x half as good.")
UTIL_MEANING = ("%util is the share of time the disk had at least one request in flight. On a single spinning "
                "disk 100% means saturated; SSDs, NVMe drives and RAID arrays serve many requests at once, so they "
                "can show 100% with capacity to spare: read %util there together with IOPS and latency.")
ALIGNMENT = ("Telemetry curves are aligned on the start of each test (t = 0, dashed line); negative times are the "
             "moments before the test began.")
SECRETS = "Secret parameters (passwords) are never stored or shown."


def methodology_section(flow: Flow, data: ReportData) -> None:
    flow.heading("Methodology", H1, after=4.0)
    for method in data.methods:
        flow.text(method.label, H3, after=1.0, keep=24.0)
        flow.text(method.text, BODY, after=7.0)
    if len(data.comparison.rows) > 1:
        flow.text("Verdicts", H3, after=1.0, keep=24.0)
        flow.text(tie_rule(), BODY, after=3.0)
        floors = floor_sentences(data)
        if floors:
            flow.bullets(floors, BODY)
        flow.gap(4.0)
    if data.steadiness:
        flow.text("Consistency", H3, after=1.0, keep=24.0)
        flow.text(CONSISTENCY_MEANS, BODY, after=7.0)
    if data.comparison.baseline is not None:
        flow.text("Ratios", H3, after=1.0, keep=24.0)
        flow.text(RATIOS_DEFINED, BODY, after=7.0)
    telemetry = [text for text, shown in (
        (ALIGNMENT, any(not o.name.startswith("mail.") for o in data.overlays)),
        (UTIL_MEANING, any(o.name == "disk.util" for o in data.overlays))) if shown]
    if telemetry:
        flow.text("Telemetry", H3, after=1.0, keep=24.0)
        flow.text(" ".join(telemetry), BODY, after=7.0)
    flow.text(SECRETS, SMALL, after=4.0)
    appendix(flow, data)


def appendix(flow: Flow, data: ReportData) -> None:
    if not data.caveats:
        flow.text("Caveats", H3, after=1.0, keep=24.0)
        flow.text("None of the known caveats applies to these runs.", BODY)
        return
    flow.heading("Appendix: caveats", H2, before=10.0, after=3.0)
    labels = {method.test: method.label for method in data.methods}
    flow.bullets([f"{labels.get(note.test, note.test)} · {note.line}" for note in data.caveats], BODY)


def floor_sentences(data: ReportData) -> list[str]:
    """Where a noise floor stood in for repeats, and what the floor is: one sentence per figure."""
    out = []
    for key in dict.fromkeys(s.figure for s in data.comparison.standings if s.basis == "noise_floor"):
        whom = [s.row for s in data.comparison.standings if s.figure == key and s.basis == "noise_floor"]
        label = next(s.label for s in data.comparison.standings if s.figure == key)
        floor = floor_for(key)
        out.append(f"{label}: single runs of {', '.join(whom)} were judged with the noise floor of "
                   f"±{floor.rsd_percent:g} % run to run, widened by the CPU steal each run saw. {floor.how}")
    return out
