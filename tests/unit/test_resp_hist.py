"""The built-in Redis generator reports latency percentiles as redis-benchmark prints them: its HdrHistogram's
buckets (8 µs wide below 16.4 ms) and its percentile rule (rank rounded, the bucket's highest value)."""
from __future__ import annotations

from remote.agent import resp_load
from remote.agent.resp_hist import LatencyHistogram, bucket_of


def _hist(*pairs: tuple) -> LatencyHistogram:
    hist = LatencyHistogram()
    for seconds, n in pairs:
        hist.add({bucket_of(seconds): n})
    return hist


def test_a_reply_is_reported_at_the_top_of_its_8_microsecond_bucket() -> None:
    # redis-benchmark prints 0.103 ms for replies that took 100 µs (HdrHistogram bucket 96..103 µs)
    assert resp_load.summarize(_hist((100e-6, 1000)))["p50"] == 0.103
    assert resp_load.summarize(_hist((96e-6, 1000)))["p50"] == 0.103
    assert resp_load.summarize(_hist((104e-6, 1000)))["p50"] == 0.111


def test_buckets_widen_above_16_milliseconds_as_redis_benchmarks_do() -> None:
    assert _hist((20.000e-3, 1)).percentile_ms(50.0) == 20.015   # 16 µs wide from 16.384 ms
    assert _hist((40.000e-3, 1)).percentile_ms(50.0) == 40.031   # 32 µs wide from 32.768 ms


def test_the_percentile_rank_is_rounded_not_raised() -> None:
    # 158 fast replies and 2 slow: p99 is rank int(0.99 x 160 + 0.5) = 158, a fast one (a rank rounded up,
    # 159, would report the slow ones as p99: ten times redis-benchmark's figure)
    hist = _hist((100e-6, 158), (1e-3, 2))
    assert hist.percentile_ms(99.0) == 0.103
    assert hist.percentile_ms(99.9) == 1.007


def test_workers_seconds_merge_from_their_json_lines() -> None:
    merged = LatencyHistogram().add({str(bucket_of(100e-6)): 3}).add({bucket_of(100e-6): 1, bucket_of(2e-3): 4})
    assert merged.count == 8
    assert merged.percentile_ms(50.0) == 0.103   # rank int(4 + 0.5) = 4: the last at 100 µs
    assert merged.percentile_ms(99.0) == 2.007
    assert resp_load.summarize(LatencyHistogram()) == {"p50": None, "p99": None, "p999": None}
