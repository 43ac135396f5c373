"""Redraw cost of the many-hosts overview: 100 hosts, one row each with three sparklines.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/overview_redraw.py [--hosts 100] [--frames 400]

Feeds every host one telemetry sample per simulated second (1 s ticks, the newest 5 minutes kept),
as a live run does, and times what the overview's paint timer does on screen: draw again the visible
rows whose data changed (four paint ticks per simulated second, so a quarter of the hosts change per
tick), and the worst case, every visible row at once. Also times one revision of the order (once a
second), a frame where every visible row moved (drawn from its cached picture), the worst case where
every visible row is drawn from its data, and all rows at once (a window taller than the list).
Prints p50 / p99 / max milliseconds per frame; the goal is p99 < 16 ms (a 60 Hz frame).
"""
from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QPoint  # noqa: E402
from PySide6.QtGui import QPixmap, QRegion  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from remote.telemetry.sample import TelemetrySample  # noqa: E402
from widgets.host_overview import ROW_HEIGHT, HostOverview  # noqa: E402
from widgets.host_series import HostSeries  # noqa: E402

PAINTS_PER_SECOND = 4     # the overview's paint timer (PAINT_MS = 250)
HISTORY_S = 300           # samples each host has before the timing starts


def _sample(t: float, phase: float, level: float) -> TelemetrySample:
    util = max(0.0, min(100.0, level + 30 * math.sin(t / 9 + phase) + random.random() * 8))
    busy = max(0.0, min(100.0, level / 2 + random.random() * 20))
    disks = {"sda": {"util": util, "r/s": util * 40, "w/s": util * 7, "rkB/s": util * 900, "wkB/s": util * 200},
             "sdb": {"util": util / 3, "r/s": util, "w/s": 1.0, "rkB/s": 10.0, "wkB/s": 10.0}}
    return TelemetrySample(t, 1.0, cpu={"user": busy * 0.7, "system": busy * 0.3, "iowait": 2.0,
                                        "idle": 100 - busy - 2}, disks=disks)


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def _line(what: str, times: list[float]) -> str:
    ms = [1000 * t for t in times]
    return (f"{what}: p50 {_percentile(ms, 50):.2f} ms, p99 {_percentile(ms, 99):.2f} ms, max {max(ms):.2f} ms "
            f"({len(ms)} frames)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--width", type=int, default=1180)
    parser.add_argument("--height", type=int, default=640)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    random.seed(7)
    hosts = {}
    shapes = {}
    for i in range(args.hosts):
        series = HostSeries(f"rack{i // 20 + 1}-node{i % 20 + 1:02d}", capacity=HISTORY_S)
        shapes[series.name] = (random.random() * 6, random.random() * 70)
        for k in range(HISTORY_S):
            series.add_sample(_sample(1000.0 + k, *shapes[series.name]))
        series.state = "running"
        hosts[series.name] = series
    overview = HostOverview()
    overview.resize(args.width, args.height)
    overview.set_sources(hosts)
    overview.show()
    for _ in range(20):
        app.processEvents()
    visible_rows = overview.scroll.viewport().height() // ROW_HEIGHT + 1

    names = list(hosts)
    changed_times, moved_times, all_times, rank_times = [], [], [], []
    now = 1000.0 + HISTORY_S
    for frame in range(args.frames):
        # a quarter of the hosts get their sample before each paint tick: all of them once a second
        quarter = frame % PAINTS_PER_SECOND
        for name in names[quarter::PAINTS_PER_SECOND]:
            hosts[name].add_sample(_sample(now, *shapes[name]))
        if quarter == PAINTS_PER_SECOND - 1:
            now += 1.0
            began = time.perf_counter()
            overview.rank()
            rank_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        overview.frame()
        changed_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        overview.frame(everything=True)       # rows moved (a new order): drawn from their pictures
        moved_times.append(time.perf_counter() - began)
        overview.rows.forget_pictures()
        began = time.perf_counter()
        overview.frame(everything=True)       # the worst case: every visible row drawn from its data
        all_times.append(time.perf_counter() - began)
        app.processEvents()

    whole = []
    rows = overview.rows
    for _ in range(20):
        rows.forget_pictures()
        began = time.perf_counter()
        target = QPixmap(rows.width(), rows.height())
        rows.render(target, QPoint(0, 0), QRegion(rows.rect()))
        whole.append(time.perf_counter() - began)

    print(f"# overview of {args.hosts} hosts, {args.width}x{args.height} px ({visible_rows} rows visible), "
          f"{HISTORY_S} s of 1 s samples each, sparklines of the last 60 s")
    print(_line("frame as the paint timer draws it (the rows whose data changed)", changed_times))
    print(_line("frame, every visible row moved (new order)", moved_times))
    print(_line("frame, every visible row drawn from its data (worst case)", all_times))
    print(_line("revising the order (once a second)", rank_times))
    print(_line(f"all {args.hosts} rows at once", whole))
    usual = _percentile([1000 * t for t in changed_times], 99)
    worst = _percentile([1000 * t for t in all_times], 99)
    print(f"goal p99 < 16 ms per frame: {'met' if usual < 16 else 'NOT met'} ({usual:.2f} ms as the timer draws; "
          f"{worst:.2f} ms when every visible row is drawn from its data)")
    overview.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
