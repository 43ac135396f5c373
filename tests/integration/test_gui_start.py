"""Starting the window the way the README says: with no display, and on a real X server."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


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


def test_window_opens_on_a_real_x_server(tmp_path: Path) -> None:
    if not shutil.which("xvfb-run") or not shutil.which("xwininfo"):
        if os.environ.get("CI"):
            pytest.fail("xvfb-run/xwininfo missing: install xvfb and x11-utils (run-tests.sh does)")
        pytest.skip("xvfb-run/xwininfo not installed")
    script = (
        f"{sys.executable} main.py & app=$!; "
        "for i in $(seq 1 60); do xwininfo -root -tree | grep -q '\"Benchbay' && break; sleep 0.5; done; "
        "xwininfo -root -tree | grep '\"Benchbay'; alive=$(kill -0 $app 2>/dev/null && echo alive); "
        "kill $app; wait $app; echo \"$alive\""
    )
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", "sh", "-c", script], cwd=ROOT,
                         env=_env(tmp_path), capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert '"Benchbay' in out.stdout, out.stdout + out.stderr
    assert out.stdout.strip().endswith("alive"), out.stdout + out.stderr
