"""The built-in Redis generator's bulk key draws (remote/agent/resp_keys.py): every key of the keyspace, evenly,
drawn afresh for every batch (no pool reused), the same sequence from the same seed."""
from __future__ import annotations

import random
from collections import Counter

from scipy import stats

from remote.agent import resp_keys
from remote.agent.resp_keys import KeyDraws


def test_keys_are_in_the_keyspace_and_cover_it_evenly() -> None:
    draws = KeyDraws(random.Random(7), 1000)
    keys = [k for _ in range(20_000) for k in draws.take(16)]    # 320,000 keys: many bulk draws
    assert min(keys) >= 0 and max(keys) < 1000
    counts = Counter(keys)
    assert len(counts) == 1000
    # uniform: a chi-square test that a fair draw fails once in a million
    assert stats.chisquare([counts[k] for k in range(1000)]).pvalue > 1e-6


def test_a_batch_takes_fresh_keys_across_a_refill() -> None:
    draws = KeyDraws(random.Random(3), 10_000_000)
    first = [draws.take(16) for _ in range(resp_keys.BULK // 16)]
    second = [draws.take(16) for _ in range(resp_keys.BULK // 16)]
    assert len(set(first) & set(second)) == 0        # 16 keys of ten million: a repeat would be the pool again
    assert all(len(batch) == 16 for batch in first + second)


def test_a_batch_that_does_not_fit_the_rest_of_the_pool_starts_a_new_one() -> None:
    draws = KeyDraws(random.Random(5), 50)
    draws.take(resp_keys.BULK - 3)
    batch = draws.take(16)
    assert len(batch) == 16 and all(0 <= k < 50 for k in batch)


def test_the_same_seed_gives_the_same_keys_and_another_seed_others() -> None:
    one, two, other = (KeyDraws(random.Random(s), 10_000) for s in (11, 11, 12))
    assert [one.take(16) for _ in range(10)] == [two.take(16) for _ in range(10)]
    assert [one.take(16) for _ in range(10)] != [other.take(16) for _ in range(10)]
