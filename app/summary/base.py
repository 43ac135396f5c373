"""What every summary of a run is made of, without Qt: results read as tuples, numbers as a person writes
them, and aligned tables.

Results are ResultSample objects or dicts with test, metric, value, unit, metadata (as stored and as
`benchbay run --json` prints them).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.catalogue.caveats import RunEvidence
from widgets.format import number as format_number

MISSING = "-"       # no value, in the command line's tables
NO_VALUE = "—"      # no value, in the window


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def text(self, indent: str = "") -> str:
        """Columns aligned: text left, numbers right."""
        widths = [max([len(h)] + [len(r[i]) for r in self.rows]) for i, h in enumerate(self.headers)]
        numeric = [all(_looks_numeric(r[i]) for r in self.rows) and bool(self.rows) for i in range(len(widths))]

        def line(cells: Sequence[str]) -> str:
            parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)]
            return (indent + "  ".join(parts)).rstrip()

        return "\n".join([line(self.headers)] + [line(r) for r in self.rows])


def _looks_numeric(text: str) -> bool:
    return text == MISSING or bool(re.fullmatch(r"[-+]?[\d,]+(\.\d+)?x?( ±[\d.]+ %)?", text))


def result_field(result: Any, name: str) -> Any:
    """A field of a result, whether it is a ResultSample or a dict as `benchbay run --json` prints it."""
    return result.get(name) if isinstance(result, Mapping) else getattr(result, name, None)


def warning_messages(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """The messages of a run's warning events, in order."""
    return [str(e["message"]) for e in events if e.get("type") == "warning" and e.get("message")]


def result_parts(result: Any) -> tuple[str, str, float, str, dict]:
    return (str(result_field(result, "test") or ""), str(result_field(result, "metric") or ""),
            float(result_field(result, "value") or 0.0), str(result_field(result, "unit") or ""),
            dict(result_field(result, "metadata") or {}))


def number(value: float | None, decimals: int | None = None, missing: str = MISSING) -> str:
    """widgets.format.number with the command line's "-" for a missing value: one formatter for every view."""
    return format_number(value, decimals, missing)


def run_evidence(results: Iterable[Any], facts: Mapping[str, Any] | None = None, status: str | None = None,
                 error: str = "") -> RunEvidence:
    """What the catalogue's caveat rules look at, from results as stored or as `benchbay run --json` prints them."""
    parsed = tuple(map(result_parts, results))
    return RunEvidence(parsed, facts) if status is None else RunEvidence(parsed, facts, status, error)
