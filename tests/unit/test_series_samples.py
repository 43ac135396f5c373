"""A stored run read back as samples: only its telemetry makes samples, whatever other series it stores."""
from __future__ import annotations

from app.engine.result_rates import stored_results
from remote.telemetry.sample import samples_to_series, series_to_samples
from tests.fixtures.engine_runs import busy_samples, cpu_test_events

T0 = 1_700_000_000.0


def test_rate_series_at_their_own_times_add_no_samples() -> None:
    samples = busy_samples(40, T0)
    rates = stored_results(cpu_test_events(T0 + 2.0, 34.0), "cpu", T0).series
    assert rates and {s.name for s in rates} == {"rate.single", "rate.multi"}
    back = series_to_samples([*samples_to_series(samples, T0), *rates], T0)
    assert [s.t for s in back] == [s.t for s in samples]
    assert [s.load for s in back] == [s.load for s in samples]
    assert min(s.load[0] for s in back) >= 10.7          # no zero load from a rate's moment
    assert all(s.cpu == x.cpu and s.disks == x.disks for s, x in zip(back, samples, strict=True))
