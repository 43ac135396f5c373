"""Starting the window the way the README says: with no display, and on a real X server."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures.processes import stop_group
from tests.fixtures.xserver import require_x_tools

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration
WINDOW_SECONDS = 180.0   # the test's own limit (pytest-timeout) is 300 s


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["BENCHBAY_HOME"] = str(tmp_path / "home")
    env["BENCHBAY_DB"] = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    return env


def test_without_a_display_it_says_what_to_do(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "main.py"], cwd=ROOT, env=_env(tmp_path), capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 1
    assert "xvfb-run" in out.stderr and "benchbay --help" in out.stderr
    assert "Aborted" not in out.stderr and "core dumped" not in out.stderr


def _window_titles(display: str) -> list[str]:
    tree = subprocess.run(["xwininfo", "-root", "-tree"], env={**os.environ, "DISPLAY": display},
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return [line for line in tree.stdout.splitlines() if '"Benchbay' in line]


def test_window_opens_on_a_real_x_server(tmp_path: Path, x_display: str, started) -> None:
    require_x_tools("xwininfo")
    app = started([sys.executable, "main.py"], cwd=ROOT, env={**_env(tmp_path), "DISPLAY": x_display},
                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # a busy machine takes long to load Qt: wait for the window (or the app's end), not for a fixed time
    end = time.monotonic() + WINDOW_SECONDS
    while not (titles := _window_titles(x_display)) and app.poll() is None and time.monotonic() < end:
        time.sleep(0.5)
    alive = app.poll() is None
    stop_group(app)   # the fixture would too; here to read what it said
    said = app.stdout.read()
    assert titles, f"no Benchbay window within {WINDOW_SECONDS:.0f} s; the app said:\n{said}"
    assert alive, f"the app ended with its window open: {app.returncode}\n{said}"
