"""Many runs starting at once take turns: a bounded number connect and upload at a time, spread out."""
from __future__ import annotations

import threading
import time

import pytest

from app.engine.orchestrator import RunControl
from app.engine.pool import NotStarted, StartGate, default_slots
from remote.command_timeouts import BUSY


def _start_many(gate: StartGate, count: int, hold: float) -> tuple[int, list[float]]:
    """`count` runs through the gate, each holding its turn `hold` s; (most at once, when each began)."""
    lock = threading.Lock()
    inside, most, began = [0], [0], []

    def one() -> None:
        turn = gate.enter("h")
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            began.append(time.monotonic())
        time.sleep(hold)
        with lock:
            inside[0] -= 1
        turn.leave()

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not any(t.is_alive() for t in threads)
    return most[0], sorted(began)


def test_no_more_hosts_start_at_once_than_the_gate_has_slots() -> None:
    most, began = _start_many(StartGate(slots=3, spacing=0.0), count=12, hold=0.05)
    assert most == 3 and len(began) == 12


def test_starts_are_spread_not_all_in_the_same_instant() -> None:
    before = time.monotonic()
    _most, began = _start_many(StartGate(slots=10, spacing=0.04), count=6, hold=0.0)
    # the k-th start is never earlier than k spacings after the first could begin; later is a busy machine's
    # scheduling, not the gate (so the gaps between two starts seen by the threads prove nothing)
    assert all(at >= before + k * 0.04 - 0.001 for k, at in enumerate(began)), [at - before for at in began]


def test_a_host_that_hangs_in_its_start_up_holds_one_slot_and_the_others_go_on() -> None:
    gate = StartGate(slots=2, spacing=0.0)
    stuck = gate.enter("hung-host")   # never leaves during the test
    most, began = _start_many(gate, count=6, hold=0.02)
    assert most == 1 and len(began) == 6
    stuck.leave()


def test_a_run_cancelled_while_it_waits_for_its_turn_leaves_at_once_without_starting() -> None:
    gate = StartGate(slots=1, spacing=0.0)
    holder = gate.enter("first")
    control = RunControl()
    threading.Timer(0.2, control.cancel).start()
    began = time.monotonic()
    with pytest.raises(NotStarted, match="waiting-host: stopped before it started"):
        gate.enter("waiting-host", control)
    assert time.monotonic() - began < 1.5
    assert gate.waiting == 0
    holder.leave()
    gate.enter("next").leave()   # its slot was not lost


def test_a_starting_run_counts_as_busy_until_it_leaves_its_turn() -> None:
    gate = StartGate(slots=2, spacing=0.0)
    before = len(BUSY)
    turn = gate.enter("h")
    assert len(BUSY) == before + 1
    turn.leave()
    turn.leave()   # twice is harmless
    assert len(BUSY) == before
    assert default_slots(cpus=2) == 24 and default_slots(cpus=1) == 12
