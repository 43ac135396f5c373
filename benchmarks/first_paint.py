"""Time to first paint: from starting `benchbay` (the GUI) to its first painted window, and to the main window's.

    python benchmarks/first_paint.py [--runs 5] [--runs-stored 200]

Each run is a fresh Python process, as a user's start is: it runs the real start-up path
(app.gui.application.run_gui with the Workbench opened as `benchbay` opens it) on a store in a temporary
home holding --runs-stored stored runs, and notes the moments the start window ("Opening Benchbay…") and
the main window receive their first Paint event, and how long making the main window blocks the GUI thread
(after the imports and the store, which load in a thread); the process quits after the main window's. The
reference, in the same script, is a process that imports PySide6 and paints an empty QMainWindow: the
floor no Qt application can beat on this machine. Prints min / median / max seconds over --runs starts,
the ratio of the medians to the reference and the load average. Goal: < 1.5 s on a quiet machine.
Also the CPU seconds (user + system) each start used up to that paint: unlike the seconds, they hardly
change with the machine's load, so they compare two versions on a busy machine.
Uses QT_QPA_PLATFORM as set (offscreen when unset; under xvfb-run, the X server).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD_BENCHBAY = r"""
import sys, time
sys.path.insert(0, {root!r})
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

app = QApplication(sys.argv[:1])

class FirstPaint(QObject):
    seen = set()

    def eventFilter(self, obj, event):
        name = type(obj).__name__
        if event.type() == QEvent.Type.Paint and name in ("StartWindow", "MainWindow") and name not in self.seen:
            self.seen.add(name)
            print(f"PAINT {{time.time():.6f}} {{name}}", flush=True)
            print(f"CPU {{time.process_time():.6f}}", flush=True)   # every thread's, up to this paint
            if name == "MainWindow":
                QTimer.singleShot(0, app.quit)
                app.removeEventFilter(self)
        return False

spy = FirstPaint()
app.installEventFilter(spy)

# how long the GUI thread is blocked making the main window (after the start window; the imports and the
# store open in a thread before it): the part lazy tabs shorten
import app.gui.start_window as start_window
load_in_thread = start_window.load_in_thread

def timed_load(work, done, failed, parent):
    def built(result):
        began = time.perf_counter()
        done(result)
        print(f"BUILT {{time.perf_counter() - began:.6f}}", flush=True)
    return load_in_thread(work, built, failed, parent)

start_window.load_in_thread = timed_load
from app.cli import main
sys.exit(main(["--home", {home!r}, "gui"]))
"""

CHILD_REFERENCE = r"""
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

app = QApplication(sys.argv[:1])

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and isinstance(obj, QMainWindow):
            print(f"PAINT {time.time():.6f}", flush=True)
            print(f"CPU {time.process_time():.6f}", flush=True)
            QTimer.singleShot(0, app.quit)
            app.removeEventFilter(self)
        return False

spy = FirstPaint()
app.installEventFilter(spy)
window = QMainWindow()
window.resize(1240, 680)
window.show()
sys.exit(app.exec())
"""


def seconds_to_paint(code: str, env: dict[str, str]) -> dict[str, float]:
    """Seconds from the process's start to the first paint of each window it names."""
    began = time.time()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    painted: dict[str, float] = {}
    for line in done.stdout.splitlines():
        if line.startswith("CPU "):
            painted["cpu"] = float(line.split()[1])   # the last: at the main window's paint
        if line.startswith("BUILT "):
            painted["built"] = float(line.split()[1])
        if line.startswith("PAINT "):
            _word, when, *name = line.split()
            painted[name[0] if name else "window"] = float(when) - began
    if "cpu" not in painted:
        raise RuntimeError(f"no paint (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return painted


def fill_store(home: Path, db_url: str, runs: int) -> None:
    sys.path.insert(0, str(ROOT))
    from app.workbench import Workbench
    from tests.fixtures.comparison_runs import store_two_servers

    bench = Workbench(home=home, db_url=db_url)
    try:
        for _ in range(max(1, runs // 6)):
            store_two_servers(bench.store)
    finally:
        bench.close()


def spread(values: list[float]) -> str:
    return f"min {min(values):.2f} s  median {statistics.median(values):.2f} s  max {max(values):.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="starts of each (at least 3)")
    parser.add_argument("--runs-stored", type=int, default=200, help="stored runs in the test store")
    args = parser.parse_args()
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env["BENCHBAY_HOME"] = str(home)
        env["BENCHBAY_DB"] = f"sqlite:///{Path(tmp) / 'store.sqlite3'}"
        fill_store(home, env["BENCHBAY_DB"], args.runs_stored)
        load_before = os.getloadavg()
        first, main_window, reference, built, cpu, reference_cpu = [], [], [], [], [], []
        for _ in range(max(3, args.runs)):
            painted = seconds_to_paint(CHILD_REFERENCE, env)
            reference.append(painted["window"])
            reference_cpu.append(painted["cpu"])
            painted = seconds_to_paint(CHILD_BENCHBAY.format(root=str(ROOT), home=str(home)), env)
            built.append(painted.pop("built"))
            cpu.append(painted.pop("cpu"))
            first.append(min(painted.values()))
            main_window.append(painted["MainWindow"])
        load_after = os.getloadavg()
    print(f"platform {env['QT_QPA_PLATFORM']}, {len(first)} starts each, {args.runs_stored} stored runs, "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"empty Qt window (reference):       {spread(reference)}")
    print(f"Benchbay, first window painted:    {spread(first)}")
    print(f"Benchbay, main window painted:     {spread(main_window)}")
    print(f"main window made (GUI thread):     {spread(built)}")
    print(f"CPU to the main window's paint:    {spread(cpu)} (empty window: {statistics.median(reference_cpu):.2f} s)")
    for what, values in (("first window", first), ("main window", main_window)):
        ratio = statistics.median(values) / statistics.median(reference)
        goal = "met" if statistics.median(values) < 1.5 else "missed"
        print(f"{what}: {ratio:.2f}x the empty window's median; goal < 1.5 s: {goal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
