"""A database load from two client hosts: the total each second is the sum of the clients' seconds, each
client's share of the step, the knee of the totals."""
from __future__ import annotations

import pytest

from app.engine.dbload_totals import dbload_total
from app.summary.dbload_series import dbload_of
from storage.records import ResultSample


def _client(per_step: list[list[float]], clients: int = 1) -> list[ResultSample]:
    out = []
    for step, seconds in enumerate(per_step):
        meta = {"step": step, "clients": clients * 2 ** step, "engine": "pgbench 15.19", "workload": "select-only",
                "rate": None, "per_second": seconds, "per_second_by_op": {"txn": seconds}}
        ordered = sorted(seconds)
        out.append(ResultSample("dbload", "ops_per_s", ordered[len(ordered) // 2], "ops/s", meta))
    return out


def test_the_total_of_each_second_is_the_sum_of_the_clients() -> None:
    a = dbload_of(_client([[100, 110, 90], [200, 210, 190], [220, 230, 210]]))
    b = dbload_of(_client([[100, 90, 110], [180, 200, 200], [200, 190, 200]]))
    total = dbload_total({"c1": a, "c2": b})
    assert [s.per_second for s in total.steps] == [(200, 200, 200), (380, 410, 390), (420, 420, 410)]
    assert [s.ops for s in total.steps] == [200, 390, 420]
    assert [s.clients for s in total.steps] == [2, 4, 8]
    first = total.steps[0]
    assert first.shares == {"c1": pytest.approx(0.5), "c2": pytest.approx(0.5)}
    assert total.steps[1].shares["c1"] == pytest.approx(600 / 1180)
    assert total.knee == 2 and total.knee_text().startswith("knee at 8 clients in all")


def test_a_client_short_of_seconds_is_said_and_counts_nothing_there() -> None:
    a = dbload_of(_client([[100, 100, 100], [300, 300, 300]]))
    b = dbload_of(_client([[100, 100], [300, 300, 300]]))
    total = dbload_total({"c1": a, "c2": b})
    assert total.steps[0].per_second == (200, 200, 100)
    assert total.steps[0].short == {"c2": 1}
    assert "c2 reported 1 second fewer" in total.steps[0].shares_text()
    assert total.knee is None and total.knee_text() == "no knee within the sweep"
