"""Frame time of the live dashboard with an hour of data: 8 hosts x 3600 samples, offscreen.

    python benchmarks/redraw_cost.py [--mode grid|overlay|both] [--frames 300] [--hosts 8] [--samples 3600]

Loads `hosts` hosts with `samples` synthetic samples each (1 s apart, two disks, every key) into a
1400x900 Dashboard, then renders `frames` frames, each timed from the new samples to the end of the
paint: what the ~30 Hz timer does (one setData per changed curve, move the x window, fit y), then
QApplication.processEvents() (the paint of everything that changed) and a forced repaint().

Two workloads:
  live   30 frames per simulated second; every host sends 1 sample per second, the hosts spread over
         the second as real monitors are (most frames have nothing new and cost almost nothing)
  burst  every frame brings a new sample from every host at once (every curve changes, every frame):
         the worst case, one second of simulated time per frame
Each for the default window (last 5 minutes) and the whole hour. Prints median and p99 ms per frame;
the goal is < 16 ms. Qt's offscreen platform paints in software, as a desktop without GL would.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.fixtures.telemetry import synthetic_samples  # noqa: E402
from widgets.dashboard import MODE_GRID, MODE_OVERLAY, Dashboard  # noqa: E402

T0 = 1_700_000_000.0
FPS = 30


def measure(mode: str, window: float | None, hosts: int, samples: int, frames: int,
            burst: bool) -> tuple[list[float], int]:
    """Milliseconds per frame, and the number of curves drawn from data."""
    app = QApplication.instance() or QApplication([])
    board = Dashboard(window=window, mode=mode)
    board.resize(1400, 900)
    board.show()
    names = [f"host-{i + 1}" for i in range(hosts)]
    extra = frames if burst else frames // FPS + 2
    streams = {name: synthetic_samples(samples + extra, t0=T0, seed=i) for i, name in enumerate(names)}
    for name in names:
        board.add_samples(name, streams[name][:samples])
    # the groups' own timers would draw between our frames: the benchmark drives every frame itself
    board.grid_group.set_active(False)
    board.overlay_group.set_active(False)
    for _ in range(3):   # layout, first paint
        app.processEvents()
        board.frame()
        board.repaint()
    curves = sum(len(plot.curve_keys()) for plot in board.active_group.plots)
    sent = dict.fromkeys(names, samples)
    times = []
    for frame in range(frames):
        began = time.perf_counter()
        for index, name in enumerate(names):
            # burst: one per frame; live: host i's sample lands in frame i*FPS/hosts of every second
            due = samples + frame + 1 if burst else samples + (frame + FPS - index * FPS // hosts) // FPS
            while sent[name] < due:
                board.add_sample(name, streams[name][sent[name]])
                sent[name] += 1
        board.frame()
        app.processEvents()
        board.repaint()
        times.append((time.perf_counter() - began) * 1000)
    board.close()
    board.deleteLater()
    app.processEvents()
    return times, curves


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("grid", "overlay", "both"), default="both")
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--samples", type=int, default=3600)
    args = parser.parse_args()
    modes = [MODE_GRID, MODE_OVERLAY] if args.mode == "both" else [args.mode]
    print(f"{args.hosts} hosts x {args.samples} samples (1 s apart) preloaded, {args.frames} frames per line, "
          "1400x900 offscreen (software paint)")
    for burst in (False, True):
        for mode in modes:
            for window, what in ((300.0, "last 5 min"), (None, "whole run")):
                times, curves = measure(mode, window, args.hosts, args.samples, args.frames, burst)
                print(f"{'burst' if burst else 'live':5s} {mode:8s} {what:10s} {curves:3d} curves: "
                      f"median {statistics.median(times):6.2f} ms/frame, p99 {p99(times):6.2f} ms, "
                      f"max {max(times):6.2f} ms  {'(< 16 ms)' if p99(times) < 16 else '(over 16 ms)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
