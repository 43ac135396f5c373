"""Verdicts: is a server ahead of the reference on a figure, a tie, or can't we tell yet.

The method (written out with its measured error rates in docs/verdicts.md):

- The factor is the ratio of the medians, oriented so that > 1 means better ("times as good").
- Its range comes from how far the NEXT run could land, never from how steady one run was:
  - both servers repeated the test at least MIN_BOOTSTRAP_RUNS times ("repeats"): a percentile
    bootstrap of the ratio of medians (scipy.stats.bootstrap, 95 %). With three runs each this range
    is exactly from the worst pairing of runs to the best one, so it neither collapses nor explodes
    with skewed runs; how many run pairs one server won (complete separation: all of them) is counted
    with scipy.stats.mannwhitneyu;
  - otherwise ("noise_floor"): the figure's noise floor (app.compare.noise_floors, the run-to-run
    variation measured on real hosts), widened by the CPU steal the run saw, gives a log-normal range
    of FLOOR_Z standard errors; a server that repeated the test fewer times than that uses the larger
    of its measured spread and the floor. Where a host's own earlier repeats (a few runs) stand in for the
    floor, Student's t with the Welch-Satterthwaite degrees of freedom replaces FLOOR_Z.
- The noise threshold (the idea of criterion.rs): a difference is named only when the whole range lies
  beyond the between-run noise: with repeats, the spread they measured, never below the floor (three runs
  can agree closely by chance); with a single run, MIN_NOISE_PERCENT, since its range is built from the
  floor already.
- Three verdicts: ahead/behind when it does; a tie when the whole range lies within ±TIE_LIMIT_PERCENT
  ("tie (within ±z)"); can't tell yet otherwise, with what would settle it.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

AHEAD, BEHIND, TIE, CANT_TELL, REFERENCE = "ahead", "behind", "tie", "cant_tell", "reference"
VERDICTS = (REFERENCE, AHEAD, BEHIND, TIE, CANT_TELL)
BASIS_REPEATS, BASIS_FLOOR = "repeats", "noise_floor"

CONFIDENCE = 0.95              # of the bootstrap range (repeats)
FLOOR_Z = 2.576                # standard errors of the floor range (two-sided 99 %): one run says little
FLOOR_LEVEL = 0.995            # FLOOR_Z's quantile, for Student's t where a spread was measured over few runs
MIN_BOOTSTRAP_RUNS = 3
MIN_NOISE_PERCENT = 1.0        # no benchmark run repeats closer than this
TIE_LIMIT_PERCENT = 25.0       # a range wider than this is "can't tell yet", not a tie
STEAL_TO_SETTLE = 5.0          # % CPU steal at which "measure when the host is quiet" is said
BOOTSTRAP_RESAMPLES = 2000
MOST_REPEATS_SUGGESTED = 20

METHOD = (
    "A server is named ahead (or behind) only when the difference exceeds how far the next run could land. "
    "The factor is the ratio of the medians of its runs to the reference's (the baseline, else the leader), "
    "written so that above 1 means better. With three or more repeats on both sides its range is a 95 % "
    "bootstrap interval of that ratio (with three runs each: from the worst pairing of runs to the best); "
    "with fewer, the figure's noise floor — its run-to-run variation measured on real hosts (or the host's own "
    "earlier repeats, where they varied more), widened by the CPU steal the run saw — gives a "
    f"{FLOOR_Z:g}-standard-error range (two-sided 99 %; Student's t at the same level where a host's own "
    "repeats stand in, for how few runs measured them). Ahead: the whole range lies beyond the run-to-run noise (with "
    "repeats, the spread they measured and never less than the floor; with a single run, whose range "
    f"carries the floor already, ±{MIN_NOISE_PERCENT:g} %). Tie: the whole range lies within "
    f"±{TIE_LIMIT_PERCENT:g} %. Otherwise: can't tell yet, with what would settle it. How steady a single "
    "run was (its per-second rates) is shown beside the figure but never decides a verdict."
)
LEGEND = ("In verdicts, the factor is against the reference named (the baseline, else the leader), above 1 "
          "better; (lo–hi) and ±z are the range the factor could take from run to run, not a standard deviation.")


def tie_rule() -> str:
    """The method in one paragraph, for the report's methodology and the CLI."""
    return METHOD


TIE_RULE = METHOD


@dataclass(frozen=True)
class Runs:
    """What a verdict knows of one server's figure."""

    values: tuple[float, ...]     # the figure of each run (one for a single run)
    floor_log_sd: float           # the figure's noise floor as sd of log(figure)
    steal_percent: float = 0.0    # the most CPU steal its runs saw
    label: str = ""               # the server, for "steal 12 % on honA"
    # the degrees of freedom floor_log_sd was measured with: the shipped floor counts as known (many runs on
    # real hosts); a host's own few repeats stand in for it with runs - 1 (app.compare.host_noise)
    floor_df: float = math.inf

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return float(np.median(self.values))


@dataclass(frozen=True)
class Verdict:
    kind: str                     # one of VERDICTS
    factor: float | None          # times as good as the reference (> 1 better)
    lo: float | None
    hi: float | None
    basis: str                    # BASIS_REPEATS or BASIS_FLOOR
    settle: str | None = None     # what would settle a can't-tell
    noise_percent: float = 0.0    # the threshold a difference had to exceed
    pairs_won: int | None = None  # run pairs this server won (repeats), of pairs_total
    pairs_total: int | None = None

    @property
    def within_percent(self) -> float | None:
        """A tie's half-width: the largest difference its range allows, in %."""
        if self.lo is None or self.hi is None:
            return None
        return 100.0 * (max(self.hi, 1.0 / self.lo) - 1.0)

    def text(self, against: str, with_settle: bool = True) -> str:
        """ "ahead of honA by 1.8x (1.6–2.0)", "0.46x of honA (0.42–0.50)", "tie with honA (within ±4.1 %)",
        "can't tell yet vs honA (0.71–1.9x): run 3 more repeats on each"."""
        if self.kind == REFERENCE:
            return "reference"
        factor, lo, hi = same_decimals(self.factor, self.lo, self.hi)
        if self.kind == AHEAD:
            return f"ahead of {against} by {factor}x ({lo}–{hi})"
        if self.kind == BEHIND:
            return f"{factor}x of {against} ({lo}–{hi})"
        if self.kind == TIE:
            return f"tie with {against} (within {within_text(self.within_percent or 0.0)})"
        settle = f": {self.settle}" if self.settle and with_settle else ""
        if self.lo is None:   # no range at all: the reason is the verdict, so it is always said
            reason = f": {self.settle}" if self.settle else ""
            return (f"can't tell yet vs {against}" if against else "can't tell yet") + reason
        return f"can't tell yet vs {against} {range_text(self.lo, self.hi)}" + settle


RANGE_SAID = (0.01, 100.0)   # beyond these a range's end says "below"/"above": 0.0014–495x reads as a fault


def range_text(lo: float | None, hi: float | None) -> str:
    """ "(0.71–1.9x)"; a range too wide to mean anything beyond its ends: "(from below 0.01x to above 100x)"."""
    low, high = RANGE_SAID
    if lo is not None and hi is not None and (lo < low or hi > high):
        lo_text = f"below {low:g}" if lo < low else factor_text(lo)
        hi_text = f"above {high:g}" if hi > high else factor_text(hi)
        return f"(from {lo_text}x to {hi_text}x)"
    return f"({factor_text(lo)}–{factor_text(hi)}x)"


def factor_text(value: float | None) -> str:
    """ "0.46", "1.06", "3.7", "12": two significant figures, and two decimals near 1 where ties are read."""
    if value is None or not math.isfinite(value):
        return "?"
    if value >= 10:
        return f"{value:.0f}"
    if value >= 2:
        return f"{value:.1f}"
    return f"{value:.2f}" if value >= 0.1 else f"{value:.2g}"


def _decimals(value: float) -> int:
    return 0 if value >= 10 else 1 if value >= 2 else 2 if value >= 0.1 else 3


def same_decimals(factor: float | None, lo: float | None, hi: float | None) -> tuple[str, str, str]:
    """A factor and its range with one number of decimals, enough for the factor and the low end:
    "2.03 (1.89–2.10)", "0.27 (0.12–0.29)", "67 (38–116)"."""
    if factor is None or lo is None or hi is None or not all(map(math.isfinite, (factor, lo, hi))):
        return factor_text(factor), factor_text(lo), factor_text(hi)
    places = max(_decimals(factor), _decimals(lo))
    return f"{factor:.{places}f}", f"{lo:.{places}f}", f"{hi:.{places}f}"


def within_text(percent: float) -> str:
    """ "±4.1 %", "±12 %": two significant figures."""
    if not math.isfinite(percent):
        return "±∞ %"
    return f"±{percent:.1f} %" if percent < 10 else f"±{percent:.0f} %"


def tie_text(percent: float) -> str:
    return f"tie (within {within_text(percent)})"


def _log_sd(logs: np.ndarray) -> float:
    return float(np.std(logs, ddof=1)) if len(logs) > 1 else 0.0


def _median_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(x, axis=axis) - np.median(y, axis=axis)


def _bootstrap(gx: np.ndarray, gr: np.ndarray) -> tuple[float, float]:
    # a fixed seed: the same runs give the same range in the window, the CSV and the PDF
    found = stats.bootstrap((gx, gr), _median_diff, vectorized=True, paired=False, confidence_level=CONFIDENCE,
                            n_resamples=BOOTSTRAP_RESAMPLES, method="percentile", rng=np.random.default_rng(0))
    low, high = float(found.confidence_interval.low), float(found.confidence_interval.high)
    point = float(_median_diff(gx, gr))
    # percentiles of a discrete statistic can miss the point by rounding: the range always holds it
    return min(low, point), max(high, point)


def judge(x: Runs, reference: Runs, higher_is_better: bool) -> Verdict:
    """The verdict of server x against the reference on one figure."""
    if x.n == 0 or reference.n == 0 or min(*x.values, *reference.values) <= 0 \
            or not all(math.isfinite(v) for v in (*x.values, *reference.values)):
        basis = BASIS_REPEATS if min(x.n, reference.n) >= MIN_BOOTSTRAP_RUNS else BASIS_FLOOR
        return Verdict(CANT_TELL, None, None, None, basis, "a figure of 0 (or none) cannot be compared as a ratio")
    sign = 1.0 if higher_is_better else -1.0
    gx, gr = sign * np.log(np.asarray(x.values)), sign * np.log(np.asarray(reference.values))
    point = float(np.median(gx) - np.median(gr))
    pairs_won = pairs_total = None
    if x.n >= MIN_BOOTSTRAP_RUNS and reference.n >= MIN_BOOTSTRAP_RUNS:
        basis = BASIS_REPEATS
        low, high = _bootstrap(gx, gr)
        # the noise a difference must exceed: what the repeats measured, never below the figure's floor
        # (three runs can agree closely by chance)
        noise = max(math.sqrt((_log_sd(gx) ** 2 + _log_sd(gr) ** 2) / 2.0),
                    math.sqrt((x.floor_log_sd ** 2 + reference.floor_log_sd ** 2) / 2.0))
        u = stats.mannwhitneyu(gx, gr, alternative="two-sided").statistic
        pairs_total = x.n * reference.n
        # ties between runs count half, as U does; whole pairs are what a reader counts
        pairs_won = int(math.floor(float(u)))
    else:
        basis = BASIS_FLOOR
        terms = [(sd ** 2 / side.n, df) for side, logs in ((x, gx), (reference, gr))
                 for sd, df in [_side_spread(side, logs)]]
        half = _floor_quantile(terms) * math.sqrt(sum(var for var, _df in terms))
        low, high = point - half, point + half
        # the range is built from the floor already: requiring it to clear the floor once more would ask a
        # single run for a 1.6x difference at a 10 % floor, and miss a real 2x one on a busy host
        noise = 0.0
    noise = max(noise, math.log1p(MIN_NOISE_PERCENT / 100.0))
    factor, lo, hi = math.exp(point), math.exp(low), math.exp(high)
    tie_limit = math.log1p(TIE_LIMIT_PERCENT / 100.0)
    if low > noise:
        kind = AHEAD
    elif high < -noise:
        kind = BEHIND
    elif max(abs(low), abs(high)) <= tie_limit:
        kind = TIE
    else:
        kind = CANT_TELL
    settle = _settle(x, reference, low, high, noise, tie_limit) if kind == CANT_TELL else None
    return Verdict(kind, factor, lo, hi, basis, settle, 100.0 * math.expm1(noise), pairs_won, pairs_total)


def _floor_quantile(terms: Sequence[tuple[float, float]]) -> float:
    """The range's multiple of its standard error: FLOOR_Z when both spreads are known, else Student's t at the
    same two-sided 99 % with the Welch-Satterthwaite degrees of freedom of the sum (a spread measured over
    three runs is itself uncertain; the other side's known floor adds certainty, so two sides each measured
    over three runs have 4 degrees of freedom together, not 2)."""
    estimated = sum(var ** 2 / df for var, df in terms if math.isfinite(df) and df > 0)
    if estimated <= 0:
        return FLOOR_Z
    df = sum(var for var, _df in terms) ** 2 / estimated
    return float(stats.t.ppf(FLOOR_LEVEL, df))


def _side_spread(side: Runs, logs: np.ndarray) -> tuple[float, float]:
    """One server's run-to-run spread (sd of log) and its degrees of freedom: the floor widened by its steal
    (with the floor's degrees of freedom), or what its runs measured when that is larger (two runs' own spread
    used as it is) or when it has three runs or more."""
    floor = side.floor_log_sd + math.log1p(max(side.steal_percent, 0.0) / 100.0)
    measured = _log_sd(logs)
    if side.n >= MIN_BOOTSTRAP_RUNS:
        return measured, side.floor_df
    return (measured, math.inf) if measured > floor else (floor, side.floor_df)


def _settle(x: Runs, reference: Runs, low: float, high: float, noise: float, tie_limit: float) -> str:
    """What would turn a can't-tell into a verdict: more repeats, a quiet host, or both."""
    parts = []
    for side in (x, reference):
        if side.steal_percent >= STEAL_TO_SETTLE:
            parts.append(f"steal {side.steal_percent:.0f} % on {side.label or 'a server'}: measure when the host "
                         "is quiet")
    half, centre = (high - low) / 2.0, (high + low) / 2.0
    needed = max(abs(centre) - noise, tie_limit - abs(centre))   # the half-width that would decide it
    runs = min(x.n, reference.n)
    if runs < MIN_BOOTSTRAP_RUNS:   # below three runs each the range rests on the floor: measure it instead
        more = MIN_BOOTSTRAP_RUNS - runs
        parts.append(f"run {more} more repeat{'s' if more != 1 else ''} on each")
    elif needed <= 0:
        parts.append("the difference is about the size of the run-to-run noise: more repeats will hardly "
                     "settle it")
    else:
        want = max(MIN_BOOTSTRAP_RUNS, math.ceil(runs * (half / needed) ** 2))
        more = want - runs
        if more > MOST_REPEATS_SUGGESTED:
            parts.append(f"more than {MOST_REPEATS_SUGGESTED} more repeats on each would be needed: the "
                         "difference is within the run-to-run noise")
        else:
            parts.append(f"run {more} more repeat{'s' if more != 1 else ''} on each")
    return "; ".join(parts)


def best_index(medians: Sequence[float], higher_is_better: bool) -> int:
    """The leader: the best median (the first of equal ones)."""
    order = sorted(range(len(medians)), key=lambda i: medians[i], reverse=higher_is_better)
    return order[0]
