"""Every import points the way of the picture in DESIGN.md, and no module imports its own importer.

    main.py -> app -> widgets, remote, storage
    widgets, remote and storage import none of each other; remote/agent imports only itself.

app reads the agent's own description of its tests (remote.agent.benches) and nothing else of the
agent's code. Imports inside functions and under TYPE_CHECKING count: they are arrows all the same.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "widgets", "remote", "storage")
AGENT = "remote.agent"
APP_READS_OF_THE_AGENT = {"remote.agent", "remote.agent.benches"}

# which layer may import which (a layer always may import itself)
MAY_IMPORT = {
    "main": {"app"},
    "app": {"widgets", "remote", "storage", AGENT},
    "widgets": set(),
    "remote": {AGENT},
    AGENT: set(),
    "storage": set(),
}


@dataclass(frozen=True)
class Arrow:
    source: str      # module that imports
    where: str       # its file, relative to the tree
    line: int
    target: str      # the Benchbay module imported

    def __str__(self) -> str:
        return f"{self.where}:{self.line} imports {self.target}"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources(root: Path) -> dict[str, Path]:
    modules = {_module_name(py, root): py for package in PACKAGES for py in sorted((root / package).rglob("*.py"))}
    modules["main"] = root / "main.py"
    return modules


def _arrows(root: Path = ROOT) -> list[Arrow]:
    modules = _sources(root)

    def known(name: str) -> str | None:
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in modules:
                return ".".join(parts[:end])
        return None

    arrows: list[Arrow] = []
    for source, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = source.split(".") if path.name == "__init__.py" else source.split(".")[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    prefix = package[: len(package) - (node.level - 1)]
                    base = ".".join(prefix + ([node.module] if node.module else []))
                # `from a import b` is an arrow to the module a.b when there is one, else to a
                names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            else:
                continue
            for name in dict.fromkeys(names):
                target = known(name)
                if target is not None and target != source:
                    arrows.append(Arrow(source, str(path.relative_to(root)), node.lineno, target))
    return arrows


def _layer(module: str) -> str:
    if module == "main":
        return "main"
    if module == AGENT or module.startswith(AGENT + "."):
        return AGENT
    return module.split(".")[0]


def test_every_import_points_the_way_of_the_picture() -> None:
    wrong = []
    for arrow in _arrows():
        source, target = _layer(arrow.source), _layer(arrow.target)
        if source == target:
            continue
        if target not in MAY_IMPORT[source]:
            wrong.append(f"{arrow}: {source} may not import {target}")
        elif source == "app" and target == AGENT and arrow.target not in APP_READS_OF_THE_AGENT:
            wrong.append(f"{arrow}: app reads the agent only through remote.agent.benches")
    assert wrong == [], "imports against the picture in DESIGN.md:\n" + "\n".join(wrong)


def _cycles(arrows: list[Arrow]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for arrow in arrows:
        graph[arrow.source].add(arrow.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_its_own_importer() -> None:
    arrows = _arrows()
    messages = []
    for component in _cycles(arrows):
        members = set(component)
        inside = [str(a) for a in arrows if a.source in members and a.target in members]
        messages.append(" <-> ".join(component) + ":\n    " + "\n    ".join(sorted(inside)))
    assert messages == [], "import cycles:\n" + "\n".join(messages)


def test_the_cycle_finder_sees_a_cycle() -> None:
    arrows = [Arrow("a", "a.py", 1, "b"), Arrow("b", "b.py", 2, "c"), Arrow("c", "c.py", 3, "a"),
              Arrow("c", "c.py", 4, "d")]
    assert _cycles(arrows) == [["a", "b", "c"]]


def test_the_walker_sees_every_kind_of_import(tmp_path: Path) -> None:
    # the rules above are only as good as the walker: lazy, TYPE_CHECKING, relative and `from a import b`
    files = {
        "main.py": "from app import cli\n",
        "app/__init__.py": "",
        "app/cli.py": "def main():\n    from widgets.view import View\n",
        "widgets/__init__.py": "",
        "widgets/view.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from storage.records import Run\n",
        "widgets/chart.py": "from . import view\nfrom .view import something\n",
        "remote/__init__.py": "", "storage/__init__.py": "", "storage/records.py": "import os\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    seen = {(a.source, a.line, a.target) for a in _arrows(tmp_path)}
    assert seen == {("main", 1, "app.cli"), ("app.cli", 2, "widgets.view"), ("widgets.view", 3, "storage.records"),
                    ("widgets.chart", 1, "widgets.view"), ("widgets.chart", 2, "widgets.view")}


def test_nothing_outside_the_workbench_reaches_into_the_store() -> None:
    allowed = {ROOT / "app" / "workbench.py", *(ROOT / "app" / "engine").rglob("*.py")}
    offenders = []
    for py in sorted((ROOT / "app").rglob("*.py")):
        if py in allowed:
            continue
        tree = ast.parse(py.read_text(encoding="utf-8"), filename=str(py))
        offenders += [f"{py.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                      if isinstance(node, ast.Attribute) and node.attr == "store"]
    assert offenders == [], "the store is the Workbench's: call a Workbench method instead at " + ", ".join(offenders)
