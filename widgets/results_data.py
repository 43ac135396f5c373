"""What the results view shows of one stored run, already worded and formatted.

app builds a ResultsPage from a run, its results and its warnings; the view only lays it out, so the
meaning of the figures (labels, rounding, caveats, the sweep's knee) lives in one place beside the
command line's text of the same run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Align(str, Enum):
    LEFT = "left"
    RIGHT = "right"
    CENTER = "center"


class Highlight(str, Enum):
    NONE = ""
    CAUTION = "caution"   # a figure to read with care (e.g. cached I/O: not the disk alone)


@dataclass(frozen=True)
class CellData:
    text: str
    tip: str = ""
    align: Align = Align.RIGHT
    highlight: Highlight = Highlight.NONE


@dataclass(frozen=True)
class TableData:
    headers: tuple[str, ...] = ()
    rows: list[list[CellData]] = field(default_factory=list)


@dataclass(frozen=True)
class BarChart:
    """One small bar chart: the latency percentiles of one job."""
    key: str
    title: str
    labels: tuple[str, ...]
    heights: list[float]


@dataclass(frozen=True)
class SweepData:
    """IOPS per worker count of a concurrency sweep, and what it means in one sentence."""
    workers: list[int] = field(default_factory=list)
    iops: list[float] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class MailSeries:
    """A mail storm over time: accepts per whole second, and the queue depth at each poll."""
    seconds: list[float] = field(default_factory=list)
    accepts: list[float] = field(default_factory=list)
    polled_at: list[float] = field(default_factory=list)
    depths: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class ResultsPage:
    run_id: int
    host_name: str
    test: str
    status: str
    subtitle: str = ""                  # a muted second title line (e.g. the CPU test's library versions)
    badges: tuple[str, ...] = ()        # labels that change what the numbers mean (synthetic, non-durable)
    warnings: tuple[str, ...] = ()
    summary_lines: tuple[str, ...] = ()
    summary_title: str = "How steady the run was"   # the heading above summary_lines
    table: TableData = field(default_factory=TableData)
    latency: tuple[BarChart, ...] = ()
    sweep: SweepData = field(default_factory=SweepData)
    mail: MailSeries | None = None
