"""The revision graph read from the migration files agrees with Alembic's, and a store that needs no
upgrade opens without importing Alembic (its import is most of a second of CPU at every start)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from storage.migrate import MIGRATIONS_DIR, alembic_config, head_revision, known_revisions
from storage.revisions import head_of, read_revisions

ROOT = Path(__file__).resolve().parents[2]


def test_head_and_known_revisions_are_alembics() -> None:
    scripts = ScriptDirectory.from_config(alembic_config())
    assert head_revision() == scripts.get_current_head()
    assert known_revisions() == {script.revision for script in scripts.walk_revisions()}
    graph = read_revisions(MIGRATIONS_DIR / "versions")
    for script in scripts.walk_revisions():
        down = script.down_revision
        assert graph[script.revision] == ((down,) if isinstance(down, str) else tuple(down or ()))


def test_two_heads_are_refused(tmp_path: Path) -> None:
    for name, down in (("a", None), ("b", "a"), ("c", "a")):
        (tmp_path / f"{name}.py").write_text(f"revision = {name!r}\ndown_revision = {down!r}\n")
    (tmp_path / "__init__.py").write_text("")
    graph = read_revisions(tmp_path)
    assert graph == {"a": (), "b": ("a",), "c": ("a",)}
    with pytest.raises(RuntimeError, match="one head"):
        head_of(graph)


def test_a_store_at_the_newest_revision_opens_without_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    code = ("import sys; from storage.db import open_store; s = open_store(sys.argv[1]); s.close(); "
            "print('alembic' in sys.modules)")
    first = subprocess.run([sys.executable, "-c", code, url], cwd=ROOT, capture_output=True, text=True, check=True)
    again = subprocess.run([sys.executable, "-c", code, url], cwd=ROOT, capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "True"     # a new store is made by the migrations
    assert again.stdout.strip() == "False"    # the next start only reads its revision
