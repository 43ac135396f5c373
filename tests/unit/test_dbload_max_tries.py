"""max_tries (pgbench's --max-tries): checked with the other parameters, and only for pgbench."""
from __future__ import annotations

import pytest

from remote.agent import bench_dbload, dbload_pgbench


def test_max_tries_defaults_to_one_try_and_takes_zero_for_until_the_step_ends() -> None:
    assert bench_dbload.validate({"engine": "postgresql"})["max_tries"] == 1
    assert bench_dbload.validate({"engine": "postgresql", "max_tries": "0"})["max_tries"] == 0


@pytest.mark.parametrize("engine", ["mysql", "redis"])
def test_max_tries_is_refused_for_engines_without_retries(engine: str) -> None:
    with pytest.raises(ValueError, match="max_tries is pgbench's"):
        bench_dbload.validate({"engine": engine, "max_tries": 5})


def test_max_tries_out_of_range_says_the_range() -> None:
    with pytest.raises(ValueError, match="max_tries must be a whole number 0-1000"):
        bench_dbload.validate({"engine": "postgresql", "max_tries": -1})


def test_the_pgbench_version_decides_whether_it_can_retry() -> None:
    assert dbload_pgbench.tool_major("pgbench 15.20") == 15
    assert dbload_pgbench.tool_major("pgbench 14.9") < dbload_pgbench.MAX_TRIES_SINCE
    assert dbload_pgbench.tool_major("pgbench") == 0
