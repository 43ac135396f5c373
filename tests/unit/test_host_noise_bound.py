"""A host's own repeats stand in for a single run's noise floor where they varied more, and then with the few
degrees of freedom they were measured with (Student's t, Welch-Satterthwaite for the two sides together):
three runs say little about how far the next one lands, but a known floor on the other side says more."""
from __future__ import annotations

import math

import pytest
from scipy.stats import norm, t

from app.compare.host_noise import HostSpread, log_sd
from app.compare.metrics import Figure
from app.compare.standings import Entry, judged_runs
from app.compare.ties import BEHIND, CANT_TELL, FLOOR_LEVEL, FLOOR_Z, Runs, judge

P99_FLOOR = math.sqrt(math.log1p(0.856 ** 2))   # disk:randread_4k.lat_p99's floor, 85.6 % rsd
CPU_FLOOR = math.sqrt(math.log1p(0.10 ** 2))


def _half_width(x: Runs, reference: Runs) -> float:
    """The log half-width of the verdict's range (a factor of 1: the range is symmetric around 0)."""
    verdict = judge(x, reference, True)
    return math.log(verdict.hi)


def test_known_floors_on_both_sides_use_the_normal_quantile() -> None:
    assert abs(FLOOR_Z - norm.ppf(FLOOR_LEVEL)) < 0.001
    assert _half_width(Runs((1.0,), 0.1), Runs((1.0,), 0.1)) == pytest.approx(FLOOR_Z * math.sqrt(0.02))


def test_two_hosts_each_measured_over_three_runs_have_four_degrees_of_freedom_together() -> None:
    both = _half_width(Runs((1.0,), 0.2, floor_df=2), Runs((1.0,), 0.2, floor_df=2))
    assert both == pytest.approx(t.ppf(FLOOR_LEVEL, 4) * math.sqrt(0.08))
    # one side's measured spread against a known floor: between t(2) and the normal quantile, nearer t(2) the
    # more the measured side dominates
    one = _half_width(Runs((1.0,), 0.2, floor_df=2), Runs((1.0,), 0.1))
    quantile = one / math.sqrt(0.05)
    assert FLOOR_Z < quantile < t.ppf(FLOOR_LEVEL, 2)
    lopsided = _half_width(Runs((1.0,), 1.0, floor_df=2), Runs((1.0,), 0.1)) / math.sqrt(1.01)
    assert quantile < lopsided < t.ppf(FLOOR_LEVEL, 2)


def test_identical_twins_single_runs_a_hundred_times_apart_are_not_named() -> None:
    # twin-b's three p99s (ms): two as twin-a's, one 12x; its lone run judged against a twin-a run 107x lower
    twin_b = [2.0, 2.4, 25.0]
    spread = log_sd(twin_b)
    judged, reference = 25.0, 25.0 / 107
    as_known = judge(Runs((judged,), max(P99_FLOOR, spread)), Runs((reference,), P99_FLOOR), False)
    assert as_known.kind == BEHIND   # the spread taken as exact: a false winner among identical hosts
    measured = judge(Runs((judged,), spread, floor_df=2), Runs((reference,), P99_FLOOR), False)
    assert measured.kind == CANT_TELL


def _entry(value: float, spread: HostSpread | None) -> Entry:
    return Entry(0, "host", Figure(value, {}, values=(value,)), host_spread=spread)


@pytest.mark.parametrize("runs", [[100.0, 101.0, 103.0], [100.0, 104.0, 107.0], [100.0, 100.5, 88.0],
                                  [100.0, 112.0, 88.0]])
def test_half_a_cpu_is_still_behind_a_whole_one_from_single_runs(runs) -> None:
    # a whole CPU whose three repeats agreed within 2 %, 7 %, or one of them 12 % low (a busy machine: this
    # was can't tell while the host's spread was widened by t(2) on its own), or spread ±12 %: a lone
    # half-CPU run (2x) is behind
    whole = judged_runs(_entry(100.0, HostSpread(log_sd(runs), len(runs))), "cpu:single")
    half = judged_runs(_entry(50.0, HostSpread(log_sd([50.0, 49.0, 51.5]), 3)), "cpu:single")
    assert judge(half, whole, True).kind == BEHIND


def test_a_host_spread_below_the_floor_never_narrows_it() -> None:
    narrow = judged_runs(_entry(100.0, HostSpread(0.001, 3)), "cpu:single")
    assert narrow.floor_log_sd == pytest.approx(CPU_FLOOR, rel=0.05) and math.isinf(narrow.floor_df)
    wide = judged_runs(_entry(100.0, HostSpread(0.3, 3)), "cpu:single")
    assert wide.floor_log_sd == 0.3 and wide.floor_df == 2
