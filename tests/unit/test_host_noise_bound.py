"""A host's own repeats widen a single run's range by their spread, itself widened for how few runs measured it
(Student's t): three runs say little about how far the next one lands."""
from __future__ import annotations

import math

import pytest
from scipy.stats import norm, t

from app.compare.host_noise import log_sd, small_sample
from app.compare.ties import BEHIND, CANT_TELL, FLOOR_Z, Runs, judge

P99_FLOOR = math.sqrt(math.log1p(0.856 ** 2))   # disk:randread_4k.lat_p99's floor, 85.6 % rsd
CPU_FLOOR = math.sqrt(math.log1p(0.10 ** 2))


def test_the_widening_is_students_t_at_the_floor_ranges_confidence() -> None:
    assert abs(FLOOR_Z - norm.ppf(0.995)) < 0.001
    assert small_sample(1.0, 3) == pytest.approx(t.ppf(0.995, 2) / FLOOR_Z)   # 3.85
    assert small_sample(1.0, 3) > small_sample(1.0, 5) > small_sample(1.0, 20) > small_sample(1.0, 1000) > 1.0
    assert small_sample(1.0, 1000) == pytest.approx(1.0, abs=0.01)


def test_identical_twins_single_runs_a_hundred_times_apart_are_not_named() -> None:
    # twin-b's three p99s (ms): two as twin-a's, one 12x; its lone run judged against a twin-a run 107x lower
    twin_b = [2.0, 2.4, 25.0]
    spread = log_sd(twin_b)
    judged, reference = 25.0, 25.0 / 107
    as_measured = judge(Runs((judged,), max(P99_FLOOR, spread)), Runs((reference,), P99_FLOOR), False)
    assert as_measured.kind == BEHIND   # the spread as measured: a false winner among identical hosts
    widened = max(P99_FLOOR, small_sample(spread, len(twin_b)))
    assert judge(Runs((judged,), widened), Runs((reference,), P99_FLOOR), False).kind == CANT_TELL


@pytest.mark.parametrize("runs", [[100.0, 101.0, 103.0], [100.0, 104.0, 107.0]])
def test_half_a_cpu_is_still_behind_a_whole_one_from_single_runs(runs) -> None:
    # a whole CPU whose three repeats agreed within 2 % or 7 %: a lone half-CPU run (2x) is still behind
    host = max(CPU_FLOOR, small_sample(log_sd(runs), len(runs)))
    assert judge(Runs((50.0,), CPU_FLOOR), Runs((100.0,), host), True).kind == BEHIND
