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

Then single runs judged with each host's own three earlier repeats in the store (app.compare.host_noise), the
run-to-run noise drawn per trial from 5-10 %, 10-20 % or 20-30 % (above the 10 % floor the host's spread
matters), identical or B truly 2x better, with and without outliers. The single run's range built four ways:
- floor: the floor alone, the host's repeats ignored;
- exact: the larger of the floor and the repeats' spread, that spread taken as exact (normal quantile);
- t(2) each: the spread widened on its own by t(2, 0.995)/z = 3.85x, then the larger of it and the floor;
- welch: the repeats' spread where larger than the floor, with Student's t at the Welch-Satterthwaite degrees
  of freedom of both sides (app.compare.standings, what Benchbay does).
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

from app.compare.host_noise import HostSpread, log_sd  # noqa: E402
from app.compare.metrics import Figure  # noqa: E402
from app.compare.noise_floors import NoiseFloor  # noqa: E402
from app.compare.standings import Entry, judged_runs  # noqa: E402
from app.compare.ties import AHEAD, BEHIND, CANT_TELL, FLOOR_LEVEL, FLOOR_Z, TIE, Runs, judge  # noqa: E402

FLOOR = NoiseFloor("cpu:multi", 10.0, 0, 0, "simulation")   # as the shipped cpu:multi floor
SPREAD_METHODS = ("floor", "exact", "t(2) each", "welch")
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


def spread_runs(method: str, value: float, repeats: np.ndarray) -> Runs:
    """One server's single run, its range built by `method` from its three earlier repeats."""
    spread = log_sd(list(repeats)) or 0.0
    floor = FLOOR.log_sd
    if method == "floor":
        return Runs((value,), floor)
    if method == "exact":
        return Runs((value,), max(floor, spread))
    if method == "t(2) each":
        return Runs((value,), max(floor, spread * float(stats.t.ppf(FLOOR_LEVEL, 2)) / FLOOR_Z))
    return judged_runs(Entry(0, "", Figure(value, {}, values=(value,)), host_spread=HostSpread(spread, len(repeats))),
                 FLOOR.key)


NOISE_BANDS = ((0.05, 0.10), (0.10, 0.20), (0.20, 0.30))


def spread_case(rng: np.random.Generator, trials: int, factor: float, skewed: bool,
                band: tuple[float, float]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {m: {} for m in SPREAD_METHODS}
    for _ in range(trials):
        sd = rng.uniform(*band)
        a_repeats, b_repeats = draw(rng, 100.0, 3, sd, skewed), draw(rng, 100.0 * factor, 3, sd, skewed)
        a, b = draw(rng, 100.0, 1, sd, skewed)[0], draw(rng, 100.0 * factor, 1, sd, skewed)[0]
        for method in SPREAD_METHODS:
            kind = judge(spread_runs(method, b, b_repeats), spread_runs(method, a, a_repeats), True).kind
            counts[method][kind] = counts[method].get(kind, 0) + 1
    return counts


def print_spread_cases(rng: np.random.Generator, trials: int) -> None:
    print()
    print("single runs with each host's three earlier repeats in the store")
    print(f"{'case':<28} {'noise':<9} {'method':<10} {'false win':>9} {'missed':>7} {'wrong way':>9} {'tie':>6} "
          f"{'can`t tell':>10}".replace("`", "'"))
    for skewed in (False, True):
        for band in NOISE_BANDS:
            for factor in (1.0, 2.0):
                _print_spread_case(rng, trials, factor, skewed, band)


def _print_spread_case(rng: np.random.Generator, trials: int, factor: float, skewed: bool,
                       band: tuple[float, float]) -> None:
    counts = spread_case(rng, trials, factor, skewed, band)
    name = ("identical" if factor == 1 else f"B truly {factor:g}x better") + (", skewed" if skewed else "")
    noise = f"{band[0] * 100:.0f}-{band[1] * 100:.0f} %"
    for method in SPREAD_METHODS:
        c = counts[method]
        wins = c.get(AHEAD, 0) + c.get(BEHIND, 0)
        print(f"{name:<28} {noise:<9} {method:<10} {_pct(wins, trials) if factor == 1 else '-':>9} "
              f"{_pct(trials - c.get(AHEAD, 0), trials) if factor > 1 else '-':>7} "
              f"{_pct(c.get(BEHIND, 0), trials) if factor > 1 else '-':>9} "
              f"{_pct(c.get(TIE, 0), trials):>6} {_pct(c.get(CANT_TELL, 0), trials):>10}")


def _pct(k: int, trials: int) -> str:
    return f"{100.0 * k / trials:.1f} %"


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
    print_spread_cases(rng, args.trials)
    print()
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
