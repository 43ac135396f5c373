"""The arithmetic of the shared-storage test, with figures worked out by hand: the clock offset of one
exchange and the choice of the best, the totals per second, the start spread and the knee of the sweep."""
from __future__ import annotations

import pytest

from app.engine.shared_run import SharedOutcome
from app.engine.shared_totals import (
    ClientStep,
    StepTotal,
    client_bound,
    client_limit_text,
    find_knee,
    start_spread,
    step_total,
    sum_per_second,
)
from app.summary.shared import shared_text
from remote.clock_offset import ClockSample, best_offset, measure_offset, parse_clock
from remote.errors import RemoteCommandError
from remote.local_transport import LocalTransport


def test_one_exchange_gives_offset_and_half_the_round_trip_as_its_bound() -> None:
    # sent at 100.000, the host read 105.004, the answer came at 100.006: midpoint 100.003
    sample = ClockSample(100.000, 105.004, 100.006)
    assert sample.rtt == pytest.approx(0.006)
    assert sample.offset == pytest.approx(5.001)
    clock = best_offset("h", [sample])
    assert clock.uncertainty == pytest.approx(0.003)
    assert clock.to_host(200.0) == pytest.approx(205.001)
    assert clock.to_ours(205.001) == pytest.approx(200.0)


def test_the_exchange_with_the_smallest_round_trip_is_kept() -> None:
    slow = ClockSample(0.0, 10.9, 1.0)        # rtt 1.0, offset 10.4 ± 0.5
    quick = ClockSample(2.0, 12.052, 2.1)     # rtt 0.1, offset 10.002 ± 0.05
    middling = ClockSample(3.0, 13.2, 3.4)    # rtt 0.4, offset 10.0 ± 0.2
    clock = best_offset("h", [slow, quick, middling])
    assert clock.offset == pytest.approx(10.002)
    assert clock.uncertainty == pytest.approx(0.05)
    assert clock.rounds == 3
    with pytest.raises(ValueError, match="no usable clock exchange"):
        best_offset("h", [ClockSample(5.0, 1.0, 4.0)])   # our clock went back


def test_a_date_without_nanoseconds_is_refused_with_the_reason() -> None:
    assert parse_clock("1700000000.123456789\n", "h") == pytest.approx(1700000000.123456789)
    with pytest.raises(RemoteCommandError, match="not seconds with nanoseconds"):
        parse_clock("1700000000.N", "h")
    with pytest.raises(RemoteCommandError, match="whole seconds only"):
        parse_clock("1700000000", "h")


def test_the_local_host_shares_our_clock() -> None:
    clock = measure_offset(LocalTransport(), rounds=4)
    assert abs(clock.offset) <= clock.uncertainty + 0.002
    assert clock.rounds == 4


def test_totals_per_second_are_the_sum_of_the_clients_same_second() -> None:
    assert sum_per_second([[10, 20, 30], [1, 2]]) == (11.0, 22.0, 30.0)
    assert sum_per_second([]) == ()


def _client(host: str, began: float, planned: float, offset: float, uncertainty: float,
            ops: tuple[float, ...] = (100.0, 120.0)) -> ClientStep:
    return ClientStep(host, ops, 4096, began, planned, offset, uncertainty)


def test_the_start_spread_is_taken_on_our_clock_with_the_two_largest_uncertainties() -> None:
    # A's clock is 5 s ahead, B's 1005 s ahead, C's is ours; all planned for 995.000 on our clock
    a = _client("a", 1000.010, 1000.000, 5.0, 0.001)       # began 995.010 on our clock
    b = _client("b", 2000.004, 2000.000, 1005.0, 0.002)     # began 995.004
    c = _client("c", 995.020, 995.000, 0.0, 0.003)          # began 995.020
    spread, uncertainty, late = start_spread([a, b, c])
    assert spread == pytest.approx(0.016)        # 995.020 - 995.004
    assert uncertainty == pytest.approx(0.005)   # 0.003 + 0.002
    assert late == pytest.approx(0.020)          # C, 20 ms after the plan
    assert start_spread([_client("a", None, 1.0, 0.0, 0.1)]) == (None, 0.0, None)  # type: ignore[arg-type]


def test_a_step_total_adds_op_s_and_mb_s_per_second() -> None:
    step = step_total("c2t1", 2, 1, [_client("a", 10.0, 10.0, 0.0, 0.0, (100.0, 300.0)),
                                     _client("b", 10.0, 10.0, 0.0, 0.0, (50.0, 150.0))])
    assert step.total_ops == (150.0, 450.0)
    assert step.ops == pytest.approx(300.0)
    assert step.total_mbps == pytest.approx((150 * 4096 / 1e6, 450 * 4096 / 1e6))
    assert step.start_spread == 0.0 and step.streams == 2


def _step(clients: int, threads: int, ops: float) -> StepTotal:
    return StepTotal(f"c{clients}t{threads}", clients, threads, {}, (ops,), (0.0,), ops, 0.0, 0.0, 0.0, 0.0)


def test_the_knee_is_the_first_step_that_adds_less_than_ten_percent() -> None:
    # 1 stream 100 -> 2 streams 190 (+90 %) -> 4 streams 300 (+58 %) -> 8 streams 320 (+6.7 %): knee
    knee = find_knee([_step(1, 1, 100), _step(1, 2, 190), _step(1, 4, 300), _step(2, 4, 320)])
    assert knee.step == "c2t4"
    assert "+7 % against the best step with fewer clients or threads (300 op/s at 1 client x 4 threads)" in knee.text


def test_steps_with_as_many_streams_are_not_compared_with_each_other() -> None:
    # c2t1 (150) has as many streams as c1t2 (200): no knee there; c2t2 (215) < 1.1 x 200: knee
    knee = find_knee([_step(1, 1, 100), _step(1, 2, 200), _step(2, 1, 150), _step(2, 2, 215)])
    assert knee.step == "c2t2"


def test_only_steps_it_adds_clients_or_threads_to_are_compared() -> None:
    # a sweep measured over sshfs (4 KiB): 1x4 (2636) is not held against 3x1 (3018), which it does not
    # extend; 3x4 (4130) is 14 % below 2x4 (4807), which it extends by a client: the knee
    steps = [_step(1, 1, 1692), _step(1, 4, 2636), _step(2, 1, 2431), _step(2, 4, 4807), _step(3, 1, 3018),
             _step(3, 4, 4130)]
    knee = find_knee(steps)
    assert knee.step == "c3t4"
    assert "-14 % against the best step with fewer clients or threads (4807 op/s at 2 clients x 4 threads)" \
        in knee.text


def test_a_drop_is_a_knee_and_steady_growth_has_none() -> None:
    assert find_knee([_step(1, 1, 100), _step(1, 2, 90)]).step == "c1t2"
    none = find_knee([_step(1, 1, 100), _step(2, 1, 200), _step(3, 1, 300)])
    assert none.step is None and none.text.startswith("no knee within the sweep")
    assert find_knee([_step(1, 1, 100)]).text == "no knee within the sweep (one step)"


def test_a_client_whose_cpus_were_busy_is_named_beside_the_step_and_the_knee() -> None:
    # the agent's CPU in the step, in cores, against the host's CPUs: 3.4 of 4 cores is 85 %, the limit may be its own
    busy = ClientStep("a", (500.0, 520.0), 4096, 10.0, 10.0, 0.0, 0.0, cpu_busy=(1.1 + 2.3) / 4)
    calm = ClientStep("b", (480.0, 500.0), 4096, 10.0, 10.0, 0.0, 0.0, cpu_busy=0.3)
    step = step_total("c2t8", 2, 8, [busy, calm])
    assert step.busiest == ("a", pytest.approx(0.85)) and client_bound(step)
    assert not client_bound(step_total("c2t1", 2, 1, [calm, _client("c", 10.0, 10.0, 0.0, 0.0)]))
    before = step_total("c1t8", 1, 8, [_client("a", 10.0, 10.0, 0.0, 0.0, (990.0, 1000.0))])
    outcome = SharedOutcome("g", ("a", "b"), [None, None], steps=[before, step], knee=find_knee([before, step]))
    text = shared_text(outcome)
    assert "    note: the test kept a's CPUs 85 % busy: this step's total may be the client's limit" in text
    assert text.count("note: the test kept") == 1
    assert outcome.knee.step == "c2t8" and "the knee may be the clients' own limit, not the storage's" in text


def test_the_methodology_names_a_step_whose_client_was_busy() -> None:
    from app.report.methodology_shared import shared_sentences
    from storage.records import ResultSample

    def total(step: str, threads: int, share: float | None) -> ResultSample:
        return ResultSample("shared-storage", f"{step}.ops", 900.0, "op/s",
                            {"step": step, "clients": 2, "threads": threads, "total": True,
                             "busiest_client": "a" if share else None, "busiest_cpu_share": share})

    sentences = shared_sentences({"hosts": ["a", "b"], "clients": [2], "threads": [1, 8], "bs": 4096},
                                 [total("c2t1", 1, 0.4), total("c2t8", 8, 0.92)])
    busy = [s for s in sentences if s.startswith("In the step of")]
    assert busy == ["In the step of 2 client(s) x 8 thread(s) the test kept a's CPUs 92 % busy: that step's total "
                    "may be the client's limit, not the storage's."]


def test_how_busy_a_client_was_takes_the_whole_host_or_the_test_alone_whichever_is_more() -> None:
    from app.engine.shared_run import _cpu_busy
    # the test's own CPU is small next to the kernel's writeback threads of O_SYNC writes: the host's share counts
    assert _cpu_busy({"cpu_user": 0.1, "cpu_system": 0.2, "cpus": 4, "host_cpu_busy": 0.75}) == pytest.approx(0.75)
    assert _cpu_busy({"cpu_user": 0.4, "cpu_system": 1.3, "cpus": 2}) == pytest.approx(0.85)   # an older agent
    assert _cpu_busy({"cpu_user": "?", "cpus": 2}) is None and _cpu_busy({}) is None


def test_a_client_near_its_engines_own_ceiling_is_named_whatever_its_cpus_did() -> None:
    # cached reads on a many-core client: the host was idle, but the engine could not have gone much faster
    near = ClientStep("a", (600.0, 700.0), 1, 10.0, 10.0, 0.0, 0.0, cpu_busy=0.05, engine_ceiling=1000.0)
    far = ClientStep("b", (100.0, 100.0), 1, 10.0, 10.0, 0.0, 0.0, cpu_busy=0.05, engine_ceiling=1000.0)
    step = step_total("c2t4", 2, 4, [near, far])
    assert step.nearest_ceiling == ("a", pytest.approx(0.65), 1000.0) and client_bound(step)
    assert client_limit_text(step) == ("a's engine ran at 65 % of what it reaches on that host with 4 threads and "
                                       "no storage at all (1000 op/s)")
    assert not client_bound(step_total("c1t4", 1, 4, [far]))


def test_the_engines_own_ceiling_is_measured_without_storage() -> None:
    from remote.agent.bench_shared import _engine_ceiling
    for rw in ("write", "read"):
        one, four = (_engine_ceiling({"rw": rw, "bs": 4096}, threads) for threads in (1, 4))
        assert one and one > 1000 and four and four > 1000, (rw, one, four)
