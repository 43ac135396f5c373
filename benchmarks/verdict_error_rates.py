"""How often each verdict method names a winner where there is none, and misses a real difference.

    .venv/bin/python benchmarks/verdict_error_rates.py [--trials 1000] [--seed 1]

Draws runs of two servers with log-normal run-to-run noise (a relative sd picked per trial from 5-10 %),
and in the "skewed" cases an occasional outlier run (5 % of runs 2.2x high, as the 3,422 / 3,710 / 8,053
IOPS runs of one disk). Server B is identical to A, or truly 2x or 4x better. Each single run also has
five per-interval rates that wander 1-5 % around its figure (how steady the run was), which is what the
old rule used for single runs. Compared at n = 1 run each (the new method uses the figure's noise floor,
10 %) and n = 3 runs each.

Methods:
- old: the t-table overlap rule Benchbay used before (median ± t(n-1)·sd/sqrt(n) for repeats, half the
  5th-95th percentile range of the per-interval rates for a single run, at least ±1 %); a win when the
  ranges do not overlap, a tie otherwise (the old rule had no "can't tell").
- new: app.compare.ties.judge.

Prints per case: false wins (B named ahead or behind when identical), missed differences (B not named
ahead when it is 2x/4x better), wrong direction, ties and can't-tells, in % of trials.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.compare.noise_floors import NoiseFloor  # noqa: E402
from app.compare.ties import AHEAD, BEHIND, CANT_TELL, TIE, Runs, judge  # noqa: E402

FLOOR = NoiseFloor("cpu:multi", 10.0, 0, 0, "simulation")
OUTLIER_SHARE, OUTLIER_FACTOR = 0.05, 2.2


def draw(rng: np.random.Generator, level: float, n: int, sd: float, skewed: bool) -> np.ndarray:
    runs = level * np.exp(rng.normal(0.0, sd, n))
    if skewed:
        runs = np.where(rng.random(n) < OUTLIER_SHARE, runs * OUTLIER_FACTOR, runs)
    return runs


def old_margin(runs: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """(value, margin) under the old rule."""
    if len(runs) >= 2:
        value = float(np.median(runs))
        t = float(stats.t.ppf(0.975, len(runs) - 1))
        return value, max(0.01 * value, t * float(np.std(runs, ddof=1)) / math.sqrt(len(runs)))
    value = float(runs[0])
    rates = value * (1 + rng.normal(0.0, rng.uniform(0.01, 0.05), 5))
    p5, p95 = np.percentile(rates, [5, 95])
    return value, max(0.01 * value, (p95 - p5) / 2.0)


def old_verdict(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> str:
    (va, ma), (vb, mb) = old_margin(a, rng), old_margin(b, rng)
    if abs(va - vb) <= ma + mb:
        return TIE
    return AHEAD if vb > va else BEHIND


def new_verdict(a: np.ndarray, b: np.ndarray) -> str:
    return judge(Runs(tuple(b), FLOOR.log_sd), Runs(tuple(a), FLOOR.log_sd), higher_is_better=True).kind


def run_case(rng: np.random.Generator, trials: int, n: int, factor: float, skewed: bool) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {"old": {}, "new": {}}
    for _ in range(trials):
        sd = rng.uniform(0.05, 0.10)
        a, b = draw(rng, 100.0, n, sd, skewed), draw(rng, 100.0 * factor, n, sd, skewed)
        for method, kind in (("old", old_verdict(a, b, rng)), ("new", new_verdict(a, b))):
            counts[method][kind] = counts[method].get(kind, 0) + 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"{args.trials} trials per case; run-to-run noise 5-10 % (log-normal); skewed: {OUTLIER_SHARE:.0%} of "
          f"runs {OUTLIER_FACTOR}x high; single runs judged with a {FLOOR.rsd_percent:g} % floor")
    print()
    header = f"{'case':<28} {'n':>2} {'method':<6} {'false win':>9} {'missed':>7} {'wrong way':>9} " \
             f"{'tie':>6} {'can`t tell':>10}"
    print(header.replace("`", "'"))
    for skewed in (False, True):
        for factor in (1.0, 2.0, 4.0):
            for n in (1, 3):
                counts = run_case(rng, args.trials, n, factor, skewed)
                name = ("identical" if factor == 1 else f"B truly {factor:g}x better") \
                    + (", skewed" if skewed else "")
                for method in ("old", "new"):
                    c = counts[method]

                    def pct(k: int) -> str:
                        return f"{100.0 * k / args.trials:.1f} %"
                    wins = c.get(AHEAD, 0) + c.get(BEHIND, 0)
                    false_win = pct(wins) if factor == 1 else "-"
                    missed = pct(args.trials - c.get(AHEAD, 0)) if factor > 1 else "-"
                    wrong = pct(c.get(BEHIND, 0)) if factor > 1 else "-"
                    print(f"{name:<28} {n:>2} {method:<6} {false_win:>9} {missed:>7} {wrong:>9} "
                          f"{pct(c.get(TIE, 0)):>6} {pct(c.get(CANT_TELL, 0)):>10}")
    print()
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
