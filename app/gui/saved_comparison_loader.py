"""Reading a saved comparison back for the Compare tab (in a worker): its runs by uid, and those missing."""
from __future__ import annotations

from dataclasses import dataclass

from app.compare.model import RunInput, load_inputs
from app.workbench import Workbench
from storage.records import SavedComparison


@dataclass(frozen=True)
class OpenedComparison:
    """A saved comparison read back: the runs still in this store, and the uids that are not."""

    saved: SavedComparison
    inputs: list[RunInput]
    baseline_run_id: int | None
    missing_uids: list[str]


def open_saved_comparison(bench: Workbench, comparison_id: int) -> OpenedComparison:
    """Runs by uid (a comparison may come from another laptop's store); missing runs are reported, not fatal."""
    saved = bench.get_comparison(comparison_id)
    ids: dict[str, int] = {}
    missing = []
    for uid in saved.run_uids:
        detail = bench.run_by_uid(uid)
        if detail is None:
            missing.append(uid)
        else:
            ids[uid] = detail.run.id
    inputs = load_inputs(bench, list(ids.values())) if ids else []
    return OpenedComparison(saved, inputs, ids.get(saved.baseline_uid or ""), missing)


def missing_runs_text(uids: list[str], total: int) -> str:
    shown = ", ".join(uid[:8] for uid in uids[:4]) + (", …" if len(uids) > 4 else "")
    return (f"{len(uids)} of the {total} saved runs are not in this store (uid {shown}); "
            "import them from a JSON export to see them again")
