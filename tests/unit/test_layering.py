"""House rules a reviewer would otherwise have to catch: Qt-free core, no auto-accepted host keys."""
from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "qtpy", "shiboken6")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


QT_FREE = ["remote", "storage", "app/catalogue", "app/compare", "app/engine", "app/summary", "app/util",
           "app/errors.py", "app/workbench.py", "app/report/content.py", "app/report/methodology.py",
           "app/report/figures.py", "app/report/consistency.py", "widgets/format.py",
           "widgets/results_data.py", "widgets/host_colours.py", "widgets/run_estimate.py",
           "app/cli/run_progress.py"]


@pytest.mark.parametrize("package", QT_FREE)
def test_core_packages_do_not_import_qt(package: str) -> None:
    path = ROOT / package
    offenders = [
        f"{py.relative_to(ROOT)}: {name}"
        for py in ([path] if path.is_file() else path.rglob("*.py"))
        for name in _imports(py)
        if name.split(".")[0] in QT_MODULES
    ]
    assert offenders == []


def test_importing_every_core_module_loads_no_qt() -> None:
    modules = []
    for package in QT_FREE:
        if package.endswith(".py"):   # the GUI and the CLI share these: they must not pull Qt in
            modules.append(package[:-3].replace("/", "."))
            continue
        prefix = package.replace("/", ".") + "."
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=prefix):
            if ".agent" in info.name or ".migrations" in info.name:
                continue  # the agent runs elsewhere; migrations import alembic's runtime context
            modules.append(info.name)
    assert "remote.transport" in modules and "storage.db" in modules
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_agent_imports_only_the_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names)
    offenders = [
        f"{py.relative_to(ROOT)}: {name}"
        for py in (ROOT / "remote" / "agent").rglob("*.py")
        for name in _imports(py)
        if name.split(".")[0] not in stdlib
    ]
    assert offenders == []


def test_no_policy_accepts_unknown_host_keys() -> None:
    offenders = []
    for package in ("app", "widgets", "remote", "storage"):
        for py in (ROOT / package).rglob("*.py"):
            text = py.read_text(encoding="utf-8")
            if "AutoAddPolicy" in text or "WarningPolicy" in text:
                offenders.append(str(py.relative_to(ROOT)))
    assert offenders == []
