"""How steady each server was, beside its headline figures, as the comparison says it (app.compare.steadiness)."""
from __future__ import annotations

from collections.abc import Mapping

from app.compare.model import Comparison, RunInput
from app.compare.steadiness import CONSISTENCY_MEANS as CONSISTENCY_MEANS  # the appendix explains the words


def consistency(comparison: Comparison, inputs: Mapping[int, RunInput]) -> dict[tuple[str, str], str]:
    """(row label, figure key) -> the steadiness text of that row's figure; headline figures only."""
    del inputs   # the comparison's cells already carry it
    return {(row.label, item.key): cell.steadiness for item in comparison.metrics if item.headline
            for row in comparison.rows if (cell := row.cells.get(item.key)) is not None and cell.steadiness}
