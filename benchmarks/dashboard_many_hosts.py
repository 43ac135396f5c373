"""GUI-thread time from "100 hosts added" to an idle event loop, panels built when shown vs all at once.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/dashboard_many_hosts.py [--hosts 100]

Both ways run in this process on a shown 1280x720 dashboard in Grid mode, each host fed one sample as
it is added (the order a run's start delivers them). "All at once" looks every panel up as its host is
added (which builds it: the way the dashboard worked before panels were built lazily); "when shown"
lets the dashboard build what the grid shows. Timed: adding the hosts plus every event-loop pass until
nothing is left to do. Prints both figures in seconds, the ratio, and how many panels each built.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from remote.telemetry.sample import TelemetrySample  # noqa: E402
from widgets.dashboard import Dashboard  # noqa: E402


def _sample(t: float, i: int) -> TelemetrySample:
    util = float(i % 100)
    return TelemetrySample(t, 1.0, cpu={"user": 10.0, "system": 5.0, "iowait": 1.0, "idle": 84.0},
                           load=(0.5, 0.4, 0.3),
                           disks={"sda": {"util": util, "r/s": util * 10, "w/s": 3.0, "rkB/s": 400.0, "wkB/s": 40.0}})


def _settle(app: QApplication, board: Dashboard) -> float:
    """Run the event loop until a pass finds nothing to do (no panel left to build in view); the longest
    pass in seconds (how long the window did not answer at once)."""
    quiet, longest = 0, 0.0
    while quiet < 3:
        start = time.perf_counter()
        app.processEvents()
        took = time.perf_counter() - start
        longest = max(longest, took)
        busy = board.filler._timer.isActive() or took > 0.005
        quiet = 0 if busy else quiet + 1
    return longest


def run(app: QApplication, hosts: int, eager: bool) -> tuple[float, float, int]:
    board = Dashboard()
    board.resize(1280, 720)
    board.show()
    app.processEvents()
    start = time.perf_counter()
    for i in range(hosts):
        name = f"node{i:03d}"
        board.add_host(name)
        board.add_sample(name, _sample(1000.0, i))
        if eager:
            board.panels[name]
    longest = _settle(app, board)
    elapsed = time.perf_counter() - start
    built = len(board.panels.built)
    board.clear()
    board.close()
    board.deleteLater()
    app.processEvents()
    return elapsed, longest, built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv)
    lazy, lazy_pass, lazy_built = run(app, args.hosts, eager=False)
    eager, eager_pass, eager_built = run(app, args.hosts, eager=True)
    print(f"{args.hosts} hosts, Grid shown at 1280x720, GUI thread from the first host added to an idle loop "
          "(longest event-loop pass after the hosts were added):")
    print(f"  panels when shown : {lazy:7.2f} s  ({lazy_built} panels built, longest pass {lazy_pass:.2f} s)")
    print(f"  panels all at once: {eager:7.2f} s  ({eager_built} panels built, longest pass {eager_pass:.2f} s)")
    print(f"  ratio (all at once / when shown): {eager / lazy:.1f}x")


if __name__ == "__main__":
    main()
