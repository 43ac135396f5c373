"""Links that die without a reset, over a real sshd host behind a veth pair (tests.fixtures.netns).

The server's end of the link is set down: packets vanish, nothing answers, the socket stays ESTABLISHED,
as behind a firewall that drops or a VPN that sleeps. `benchbay run` must drop such a connection without
waiting on it, say so in one line within its stall limit, and reconnect once the link is back; when the
link stays away past the reconnect budget, the run (which goes on on its host) is stored as "lost link"
and collected complete by the next start of Benchbay.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from remote.run_link import STALL_LIMIT
from storage.db import open_store
from tests.fixtures.lost_runs import wait_for
from tests.fixtures.store import write_settings

pytestmark = pytest.mark.integration
INTERVAL = 1.0
GUARD_SLACK = 15.0    # the guard looks once a second; a loaded machine is slow to notice and to print
EARLY = 0.25 * INTERVAL   # a tick this much before its slot is none the sampler made (its clock and uptime's
                          # may part by a few hundredths over a run)


class _Lines:
    """A process's stderr, read as it comes, each line with when it came."""

    def __init__(self, stream) -> None:
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def first(self, text: str) -> tuple[float, str] | None:
        return next(((at, line) for at, line in self.lines if text in line), None)

    def text(self) -> str:
        return "\n".join(line for _at, line in self.lines)


class _WakeDelays:
    """How late this machine wakes a sleeping thread, measured beside a run: the scheduling delay that the
    host's sampler (a process on this same machine) may have met too. A loaded machine wakes late."""

    NAP = 0.1

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._measure, daemon=True)
        self._thread.start()

    def _measure(self) -> None:
        while not self._stop.is_set():
            began = time.monotonic()
            time.sleep(self.NAP)
            self.worst = max(self.worst, time.monotonic() - began - self.NAP)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.worst


def tick_lateness(t: list[float], interval: float) -> list[float]:
    """How late each tick after the first came behind its slot, replaying the sampler's schedule
    (sampler.sh): slots lie at start + k * interval; a tick late by a whole interval or more starts the slots
    again from itself. A lost tick shows as the next one late by a whole interval; a tick twice, as one early."""
    late = []
    slot = t[0] + interval
    for when in t[1:]:
        late.append(when - slot)
        slot = slot + interval if when - slot < interval else when + interval
    return late


def _wait_for(what: str, check, timeout: float):
    return wait_for(what, check, timeout, poll=0.2)


def _stored(bench_paths, run_id: int | None = None):
    store = open_store(f"sqlite:///{bench_paths['db']}")
    try:
        runs = store.runs.list()
        run_id = run_id if run_id is not None else max(r.id for r in runs)
        detail = store.runs.get(run_id)
        events = store.runs.events(run_id)
        series = [s for s in store.runs.series(run_id) if s.name == "cpu.user" and s.device == ""]
        return detail, events, (series[0].t if series else [])
    finally:
        store.close()


def _run_dir(host) -> Path | None:
    found = [p for p in host.run_root.glob("*/events.jsonl")]
    return found[0].parent if found else None


def _measuring(run_dir: Path) -> bool:
    """The agent began its measure phase (and the workbench has had a moment to read that far)."""
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    return any(e.get("type") == "phase_start" and e.get("phase") == "measure" for e in events)


def _idle(host, measure: int):
    phases = f'[["warmup","Warm-up",1],["measure","Measure",{measure}]]'
    return host.benchbay("run", host.name, "--test", "idle", "--set", f"phases={phases}", "--interval", str(INTERVAL))


def _stop(proc, far_host) -> None:
    far_host.set_link(True)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _start_then_cut(far_host, measure: int):
    """`benchbay run` of the idle test, its link cut 3 ticks into the measurement: (the process, its stderr
    and stdout lines, the run directory on the host, when the link went down). On failure nothing is left."""
    proc = _idle(far_host, measure)
    try:
        err, out = _Lines(proc.stderr), _Lines(proc.stdout)
        run_dir = _wait_for("the run on the host", lambda: _run_dir(far_host), 60)
        _wait_for("the measurement", lambda: _measuring(run_dir), 60)
        time.sleep(3 * INTERVAL)
        far_host.set_link(False)
        return proc, err, out, run_dir, time.monotonic()
    except BaseException:
        _stop(proc, far_host)
        raise


def _complete(events, t, measure: int, wake_delay: float) -> None:
    """Every agent event once and in order, a sample every tick across the outage: each tick in its slot of
    the sampler's schedule, never early, and late by less than the machine's scheduling let it be. On a quiet
    machine (wake-ups late by hundredths) a tick late by 0.8 interval fails: a lost tick is one whole interval
    late. Only when this machine itself woke sleepers late by ~half an interval is a tick allowed that late."""
    seqs = [e["seq"] for e in events if e["seq"] is not None]
    assert seqs == list(range(1, len(seqs) + 1))
    late = tick_lateness(list(t), INTERVAL)
    allowed = max(0.8 * INTERVAL, 2 * wake_delay + 0.1)
    assert late and min(late) > -EARLY, f"a tick {-min(late):.2f} s before its slot"
    worst = max(late)
    assert worst < allowed, f"a tick {worst:.2f} s late (a lost one?); wake-ups here were {wake_delay:.2f} s late"
    assert len(t) >= (measure + 1) / INTERVAL


def test_a_silently_dead_link_is_dropped_said_and_reconnected(far_host, bench_paths) -> None:
    write_settings(bench_paths["home"], connect_timeout=3)
    measure = 70
    delays = _WakeDelays()
    proc, err, _out, run_dir, down_at = _start_then_cut(far_host, measure)
    try:
        said = _wait_for("the line that the link went silent", lambda: err.first("disconnected"),
                         STALL_LIMIT + 20.0 + GUARD_SLACK)
        assert said[0] - down_at <= STALL_LIMIT + 20.0 + GUARD_SLACK
        time.sleep(max(0.0, down_at + STALL_LIMIT + 10.0 - time.monotonic()))   # gone for 40 s in all
        far_host.set_link(True)
        proc.wait(timeout=240)
    finally:
        wake_delay = delays.stop()
        _stop(proc, far_host)
    assert proc.returncode == 0, err.text()
    assert "Traceback" not in err.text() and "WARNING" not in err.text()
    disconnected = [line for _at, line in err.lines if "disconnected" in line]
    assert len(disconnected) == 1, err.text()          # one line, not one per retry
    assert "reconnecting for up to" in disconnected[0]
    assert err.first("reconnected after"), err.text()
    detail, events, t = _stored(bench_paths)
    assert detail.run.status == "done" and detail.results
    assert [e["type"] for e in events].count("reconnected") == 1
    _complete(events, t, measure, wake_delay)
    assert not run_dir.exists()


def test_a_link_gone_past_the_budget_is_lost_link_then_collected_complete(far_host, bench_paths) -> None:
    budget = 10.0
    write_settings(bench_paths["home"], connect_timeout=3, reconnect_budget=budget)
    measure = 45
    delays = _WakeDelays()   # until the run ends on the host: its sampler ticks until then
    proc, err, out, run_dir, down_at = _start_then_cut(far_host, measure)
    try:
        # what the product promises: the stall limit, then the reconnect budget (each attempt bounded)
        promised = STALL_LIMIT + budget + 3.0 + GUARD_SLACK + 20.0
        proc.wait(timeout=promised + 60)
        ended_at = time.monotonic()
        assert ended_at - down_at <= promised, err.text()
        assert proc.returncode == 1, err.text()
        assert "Traceback" not in err.text()
        _wait_for("the summary", lambda: out.first(f"{far_host.name}: lost link"), 10)
        [line] = [line for _at, line in out.lines if line.startswith(f"{far_host.name}: lost link")]
        assert "could not reconnect within 10 s" in line and "collected when it answers again" in line
        detail, _events, _t = _stored(bench_paths)
        run_id = detail.run.id
        assert detail.run.status == "lost link" and not detail.results
        # the host goes on alone, with nobody watching
        _wait_for("the run to end on the host", lambda: b'"done"' in (run_dir / "events.jsonl").read_bytes(),
                  measure + 60)
    finally:
        wake_delay = delays.stop()
        _stop(proc, far_host)

    # the next start of Benchbay collects it, without a hand command
    monitor = far_host.benchbay("monitor", far_host.name, "--seconds", "1")
    _out, err_text = monitor.communicate(timeout=120)
    assert monitor.returncode == 0, err_text
    assert f"run {run_id} on {far_host.name}: re-attached after its link was lost; stored as done" in err_text
    detail, events, t = _stored(bench_paths, run_id)
    assert detail.run.status == "done" and detail.run.error == ""
    [result] = [r for r in detail.results if r.metric == "elapsed"]
    assert measure <= result.value < measure + 5
    _complete(events, t, measure, wake_delay)
    assert not run_dir.exists()


def test_the_schedule_check_tells_a_late_tick_from_a_lost_one() -> None:
    """The check above fails on what it is for: late ticks on the grid pass, a lost or doubled tick does not."""
    on_time = [100.0 + k + 0.01 * (k % 3) for k in range(10)]
    late = on_time[:4] + [104.6] + on_time[5:]                       # 0.6 s late, the next one back in its slot
    lost = on_time[:4] + on_time[5:]                                 # tick 4 never stored
    twice = on_time[:5] + [on_time[4] + 0.01] + on_time[5:]          # tick 4 stored twice
    restarted = on_time[:4] + [105.3] + [106.3 + k for k in range(5)]   # 1.3 s late: the slots start again
    assert max(tick_lateness(on_time, 1.0)) < 0.05
    assert 0.55 < max(tick_lateness(late, 1.0)) < 0.65 and min(tick_lateness(late, 1.0)) >= 0
    assert max(tick_lateness(lost, 1.0)) > 0.95
    assert min(tick_lateness(twice, 1.0)) < -0.9
    assert sorted(tick_lateness(restarted, 1.0))[-2] < 0.05   # after the restart, on the new slots
