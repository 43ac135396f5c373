"""`benchbay --help` and each command load only what they use: the store, SSH, Qt and the report wait."""
from __future__ import annotations

import subprocess
import sys

import pytest

from app.cli import build_parser
from app.cli.commands import COMMANDS, command_named
from app.cli.common import GROUP_PREFIX
from app.engine.hosts_map import GROUP_PREFIX as ENGINE_GROUP_PREFIX


def loaded_after(code: str) -> set[str]:
    """The top-level packages a fresh interpreter has imported after running `code`."""
    script = f"import sys\n{code}\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    return set(done.stdout.split())


def test_help_loads_neither_the_store_nor_ssh_nor_qt() -> None:
    loaded = loaded_after("from app.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert not loaded & {"sqlalchemy", "alembic", "paramiko", "PySide6", "numpy"}, loaded


def test_a_command_that_draws_nothing_loads_no_qt(tmp_path) -> None:
    loaded = loaded_after(f"from app.cli import main\nmain(['--home', {str(tmp_path)!r}, '--db', "
                          f"'sqlite:///{tmp_path}/s.db', 'host', 'list'])")
    assert "sqlalchemy" in loaded and "PySide6" not in loaded


@pytest.mark.parametrize(("argv", "word"), [
    (["host", "list"], "host"),
    (["--db", "sqlite:///x.db", "-v", "run", "@rack3"], "run"),
    (["--home=/x", "compare", "1", "2"], "compare"),
    (["--help"], None),
    ([], None),
])
def test_the_command_word_is_found_past_the_global_options(argv: list[str], word: str | None) -> None:
    assert command_named(argv) == word


def test_help_lists_the_same_commands_whether_loaded_or_not() -> None:
    assert build_parser(()).format_help() == build_parser().format_help()
    assert list(COMMANDS) == ["host", "runs", "monitor", "run", "export", "import", "compare"]


def test_the_group_prefix_is_the_engines() -> None:
    assert GROUP_PREFIX == ENGINE_GROUP_PREFIX
