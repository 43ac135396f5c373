"""The migrations' revision graph, read from the migration files' own lines without importing Alembic.

Opening a store asks first "does it hold the newest revision?", and nearly always it does. Importing
Alembic to answer costs most of a second of CPU at every start (and the window waits for the store):
the files are read here instead, and Alembic is imported only when a migration runs.
"""
from __future__ import annotations

import ast
from pathlib import Path


def _constant(node: ast.expr) -> str | tuple[str, ...] | None:
    value = ast.literal_eval(node)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"not a revision: {value!r}")


def read_revisions(versions: Path) -> dict[str, tuple[str, ...]]:
    """revision -> the revisions it follows (its down_revision), for every migration file in `versions`."""
    graph: dict[str, tuple[str, ...]] = {}
    for path in sorted(versions.glob("*.py")):
        found: dict[str, str | tuple[str, ...] | None] = {}
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name in ("revision", "down_revision"):
                    found[name] = _constant(node.value)
        revision = found.get("revision")
        if not isinstance(revision, str):
            continue   # __init__.py and helpers: no revision of their own
        down = found.get("down_revision")
        graph[revision] = (down,) if isinstance(down, str) else tuple(down or ())
    return graph


def head_of(graph: dict[str, tuple[str, ...]]) -> str:
    """The one revision no other follows; a graph with none or several heads is a packaging mistake."""
    followed = {parent for parents in graph.values() for parent in parents}
    heads = sorted(set(graph) - followed)
    if len(heads) != 1:
        raise RuntimeError(f"the migrations must have one head, not {heads or 'none'}")
    return heads[0]
