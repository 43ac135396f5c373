"""A stored mail storm over time, read from its results' metadata.

The agent keeps its accepts per whole second (from the first attempt) and the (seconds, depth) pairs of
its queue polls in the metadata of two results, so a stored or imported run draws them again.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.summary.base import result_field
from widgets.results_data import MailSeries


def mail_series(results: Iterable[Any]) -> MailSeries:
    """Accepts per second and queue depth of a mail storm's results; empty lists when the run has none
    (another test, or no queue tool on the host)."""
    accepts: list[float] = []
    queue: list[list[float]] = []
    for result in results:
        if result_field(result, "test") != "mailstorm":
            continue
        meta = result_field(result, "metadata") or {}
        metric = result_field(result, "metric")
        if metric == "accepted_per_s" and isinstance(meta.get("per_second"), list):
            accepts = [float(v) for v in meta["per_second"] if isinstance(v, (int, float))]
        elif metric == "queue_max" and isinstance(meta.get("series"), list):
            queue = [p for p in meta["series"] if isinstance(p, (list, tuple)) and len(p) == 2
                     and all(isinstance(v, (int, float)) for v in p)]
    return MailSeries(seconds=[float(i) for i in range(len(accepts))], accepts=accepts,
                      polled_at=[float(t) for t, _ in queue], depths=[float(d) for _, d in queue])
