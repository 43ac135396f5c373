"""Per-interval rates as the agent cuts them (whole intervals, slow ops spread over the intervals they
span, fio's per-worker logs summed) and as the workbench stores them (spread, series, consistency)."""
from __future__ import annotations

import math

import pytest

from app.engine.consistency import PhaseSample, consistency_results, mean_over
from app.engine.result_rates import stored_results, without_rates
from remote.agent import disk_fio
from remote.agent.common import bucket_counts, interval_count, rate_interval, rates, spread_spans
from remote.agent.mail_stats import accept_rates


def test_interval_is_one_second_or_a_fifth_of_a_short_window() -> None:
    assert rate_interval(30.0) == 1.0 and interval_count(30.0, 1.0) == 30
    assert interval_count(7.9, 1.0) == 7   # a partial last second would read low: left out
    assert rate_interval(0.3683) * 5 == pytest.approx(0.3683)
    assert interval_count(0.3683, rate_interval(0.3683)) == 5
    assert interval_count(0.0, 1.0) == 0


def test_bucket_counts_keep_the_last_event_and_drop_what_is_outside() -> None:
    times = [-0.1, 0.0, 0.5, 1.2, 1.9, 2.0]
    assert bucket_counts(times, 0.0, 2, 1.0) == [2.0, 3.0]   # 2.0 ends the window: counted in the last
    assert bucket_counts([5.0], 0.0, 2, 1.0) == [0.0, 0.0]


def test_slow_ops_are_shared_between_the_intervals_they_span() -> None:
    # one op from 0.5 to 1.5 s: half in each second; one op inside the second interval
    assert spread_spans([(0.5, 1.5), (1.6, 1.9)], 0.0, 2, 1.0) == pytest.approx([0.5, 1.5])
    # the last op (1.8-2.1 s) is two thirds inside the window
    assert sum(spread_spans([(0.2 * i, 0.2 * i + 0.3) for i in range(10)], 0.0, 2, 1.0)) == pytest.approx(9 + 2 / 3)


def test_accept_rates_add_up_to_the_accepted_messages() -> None:
    times = [0.01 * i for i in range(101)]   # 101 accepts over 1 s
    out = accept_rates(times, 0.0, 1.0, 1_700_000_000.0)
    assert out["interval_s"] == pytest.approx(0.2) and out["t0"] == 1_700_000_000.0
    assert math.fsum(v * 0.2 for v in out["values"]) == pytest.approx(101)
    assert accept_rates([0.0], 0.0, 0.0, 1.0) == {}


def test_fio_logs_of_every_worker_are_summed_per_interval(tmp_path) -> None:
    # two workers, 200 ms windows; the second worker missed the last window: it is left out
    (tmp_path / "job_iops.1.log").write_text("202, 100, 0, 0, 0\n406, 110, 0, 0, 0\n606, 90, 0, 0, 0\n")
    (tmp_path / "job_iops.2.log").write_text("200, 50, 0, 0, 0\n403, 60, 0, 0, 0\n")
    (tmp_path / "job_bw.1.log").write_text("202, 400, 0, 0, 0\n406, 440, 0, 0, 0\n")
    (tmp_path / "job_bw.2.log").write_text("200, 200, 0, 0, 0\nbroken line\n403, 240, 0, 0, 0\n")
    job = {"runtime": 1.0}
    out = disk_fio.interval_rates(job, str(tmp_path), {"end_ms": 1_700_000_001_000, "seconds": 1.0})
    assert out["iops"]["values"] == pytest.approx([150.0, 170.0])
    assert out["mbps"]["values"] == pytest.approx([600 * 1024 / 1e6, 680 * 1024 / 1e6])
    assert out["iops"]["t0"] == pytest.approx(1_700_000_000.0) and out["iops"]["interval_s"] == pytest.approx(0.2)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert disk_fio.interval_rates(job, str(empty), {}) == {}   # fio wrote no log: no rates


def test_fio_command_asks_for_the_logs_only_with_a_prefix() -> None:
    job = {"name": "randread_4k", "file": "/d/f.dat", "rw": "randread", "bs": 4096, "size": 1 << 20, "workers": 1,
           "runtime": 10.0, "warmup": 1.0}
    assert not any("log" in arg for arg in disk_fio.command(job, True))
    argv = disk_fio.command(job, True, "/run/logs/job")
    assert {"--write_iops_log=/run/logs/job", "--write_bw_log=/run/logs/job", "--log_avg_msec=1000"} <= set(argv)


def _events(t0: float) -> list[dict]:
    return [
        {"seq": 1, "t": t0, "type": "start"},
        {"seq": 2, "t": t0 + 1, "type": "phase_start", "phase": "prepare"},
        {"seq": 3, "t": t0 + 2, "type": "phase_end", "phase": "prepare"},
        {"seq": 4, "t": t0 + 2, "type": "phase_start", "phase": "randread_4k"},
        {"seq": 5, "t": t0 + 4, "type": "phase_end", "phase": "randread_4k"},
        {"seq": 6, "t": t0 + 4, "type": "result", "test": "disk", "metric": "randread_4k.iops", "value": 1000.0,
         "unit": "IOPS", "metadata": {"engine": "fio", "direct": True},
         "rates": rates([900.0, 1100.0], 1.0, t0 + 2)},
        {"seq": 7, "t": t0 + 4, "type": "result", "test": "disk", "metric": "randread_4k.lat_p50", "value": 0.1,
         "unit": "ms", "metadata": {"engine": "fio"}},
        {"seq": 8, "t": t0 + 4, "type": "result", "test": "disk", "metric": "randread_4k.lat_p99", "value": 0.5,
         "unit": "ms", "metadata": {"engine": "fio"}},
        {"seq": 9, "t": t0 + 4, "type": "result", "test": "disk", "metric": "broken.iops", "value": 1.0,
         "unit": "IOPS", "metadata": {}, "rates": {"interval_s": 0, "t0": "soon", "values": [1, "x"]}},
    ]


def test_stored_results_carry_spread_series_and_consistency() -> None:
    t0 = 1_700_000_000.0
    telemetry = [PhaseSample(t0 + i, 1.0, 2.0 if 2 < i <= 4 else 50.0) for i in range(1, 8)]
    stored = stored_results(_events(t0), "disk", origin=t0, telemetry=telemetry)
    results = {r.metric: r for r in stored.results}
    spread = results["randread_4k.iops"].spread
    assert (spread.n, spread.mean, spread.min, spread.max, spread.interval_s) == (2, 1000.0, 900.0, 1100.0, 1.0)
    assert results["broken.iops"].spread is None   # rates that make no sense are left out, never a crash
    [series] = stored.series
    assert (series.name, series.unit, series.t, series.values) == ("rate.randread_4k.iops", "IOPS", [3.0, 4.0],
                                                                   [900.0, 1100.0])
    assert results["randread_4k.iops.cv"].value == round(100 * math.sqrt(20000) / 1000, 3)
    assert results["randread_4k.p99_over_p50"].value == 5.0
    steal = results["randread_4k.steal"]
    assert steal.value == 2.0 and steal.metadata["direct"] is True   # the job's labels go with it
    assert "prepare.steal" not in results
    assert all(isinstance(e.get("rates"), (str, type(None))) for e in without_rates(_events(t0)))


def test_steal_is_weighted_by_how_much_of_each_interval_lies_in_the_phase() -> None:
    samples = [PhaseSample(10.0, 1.0, 0.0), PhaseSample(11.0, 1.0, 30.0)]
    assert mean_over(samples, 9.5, 10.5) == (15.0, 2)
    assert mean_over(samples, 20.0, 21.0) is None
    assert consistency_results([], [], samples) == []
