"""One detached run on one host: start, tail by offset, keep alive, reconnect, cancel, clean up.

The host side runs by itself in a private run directory (see the run directory protocol in
DESIGN.md): the sampler (a shell loop, no python needed) and, for agent tests, the agent. This
class only reads what they write, renews RUN/deadline while connected, and removes RUN at the end.
The sh it sends is in remote.run_scripts; ending a run is remote.run_ending, re-attaching
remote.run_reattach.
Not thread-safe: one worker owns a session (and its transport).
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from remote.agent import benches
from remote.agent.run_secrets import SECRETS_FIFO
from remote.agent_package import build_agent
from remote.agent_run import AGENT_FILE
from remote.clock_offset import ClockOffset
from remote.command_timeouts import BUSY, FLOOR, ResponseTimes, crowd, poll_period, scaled_timeout
from remote.errors import RemoteCommandError, RemoteError
from remote.run_clock import LagWatch, measure_run_clock
from remote.run_ending import RunEnding
from remote.run_kill import kill_run_script
from remote.run_link import DEFAULT_RECONNECT_BUDGET, STALL_LIMIT, Link, RunLost  # noqa: F401 - callers catch RunLost
from remote.run_liveness import RunLiveness
from remote.run_reattach import RunVanished, read_agent_pid, renew_deadline  # noqa: F401 - callers catch RunVanished
from remote.run_scripts import boot_id_in, deadline_command, start_script
from remote.run_start import look_around, put_run_files, start_checked
from remote.run_tail import EventTail, SampleTail, workbench_event
from remote.telemetry.sample import TelemetrySample
from remote.transport import Transport

log = logging.getLogger(__name__)

MONITOR = "monitor"                 # telemetry only: no agent, no python on the host
DEFAULT_MARGIN = 300.0              # seconds a run outlives its expected duration without a workbench
KEEPALIVE_EVERY = 10.0              # seconds between deadline renewals (less with a short margin)
KEEPALIVE_CEILING = 60.0            # ... and at most, however many runs this workbench drives
REMOTE_TIMEOUT = FLOOR              # the least a small command gets; RunSession.command_timeout scales it
PROBE_ROUND_TRIPS = 1               # small commands timed before the start (remote.command_timeouts); each
                                    # later command and read is timed too, so one is enough to begin with
SMALL_READ = 64 * 1024              # a read up to this size times a round trip, not a transfer
TICK_BYTES = 8 * 1024               # bytes one telemetry tick takes in samples.raw, generously (3-6 KB seen)

class Control(Protocol):
    @property
    def stopped(self) -> bool: ...

    @property
    def cancelled(self) -> bool: ...

    def wait(self, timeout: float) -> bool: ...


class RunLeft(RemoteError):
    """The workbench stopped following a run and left it to its host, to be collected later: nothing is read
    further, stored or removed there (a control whose `left` is true asks for it)."""


class _NoControl:
    stopped = False
    cancelled = False

    def wait(self, timeout: float) -> bool:
        time.sleep(timeout)
        return False


class _Tailing:
    """The transport as a Tail reads it: through tail_bytes (files kept open) where the transport has it."""

    def __init__(self, transport: Transport) -> None:
        self._read = getattr(transport, "tail_bytes", None) or transport.get_bytes

    def get_bytes(self, remote_path: str, offset: int = 0, limit: int | None = None) -> bytes:
        return self._read(remote_path, offset, limit)


class RunSession(RunEnding, RunLiveness):
    def __init__(
        self,
        transport: Transport,
        test: str,
        params: dict[str, Any] | None = None,
        interval: float = 1.0,
        run_id: str = "",
        duration: float | None = None,
        margin: float = DEFAULT_MARGIN,
        connect: Callable[[], Transport] | None = None,
        reconnect_budget: float = DEFAULT_RECONNECT_BUDGET,
        on_sample: Callable[[TelemetrySample], None] | None = None,
        on_event: Callable[[dict], None] | None = None,
        control: Control | None = None,
        parser: Any = None,
        computer: Any = None,
        files: tuple[tuple[str, bytes], ...] = (),
    ) -> None:
        self.host = transport.name
        self.files = tuple(files)    # (plain name, content): into the run directory with the agent
        self.test = test
        self.uses_agent = test != MONITOR
        self.params = benches.validate(test, params or {}) if self.uses_agent else dict(params or {})
        self.interval = float(interval)
        self.run_id = run_id
        self.duration = duration
        self.margin = float(margin)
        self.reconnect_budget = float(reconnect_budget)
        self._on_sample = on_sample
        self._on_event = on_event
        self.control: Control = control or _NoControl()
        self.link = Link(transport, connect, reconnect_budget, on_event=self.add_event,
                         give_up=lambda: self.control.cancelled or self.control.stopped, sleep=self.control.wait)
        self._parser = parser
        self._computer = computer
        self.expected = benches.expected_seconds(test, self.params) if self.uses_agent else duration
        self.run_dir = ""
        self.samples: list[TelemetrySample] = []
        self.events: list[dict[str, Any]] = []     # the agent's and the workbench's, as they came
        self.done: dict[str, Any] | None = None
        self.failure = ""                          # why the run failed on the workbench's side
        self.deadline = 0.0
        self.boot_id = ""                          # the host's boot id when the run began: a reboot changes it
        self.clock: ClockOffset | None = None       # the host's clock minus ours, measured at (re)start
        self._lag = LagWatch(self.interval)
        self._poll_period: float | None = None    # None: as remote.command_timeouts.poll_period says
        self._keepalive_every = min(KEEPALIVE_EVERY, max(1.0, self.margin / 3))
        self._done_at = self._last_data = self._last_sample = self._last_keepalive = self._last_check = 0.0
        self._sampler_warned = False
        self._removed = False
        self.response_times = ResponseTimes()
        BUSY.add(self)

    # -- how long a small command may take (remote.command_timeouts) -------------------------------

    @property
    def command_timeout(self) -> float:
        """The limit of one small command now; the stall guard waits a little longer than that."""
        timeout = scaled_timeout(self.response_times.slowest, len(BUSY))
        self.link.stall_limit = max(STALL_LIMIT, timeout + 10.0)
        return timeout

    @property
    def keepalive_every(self) -> float:
        """Seconds between deadline renewals: stretched with many runs (each renewal is a command), but
        always at least three renewals within the margin, so one missed renewal never ends the run."""
        crowded = self._keepalive_every * crowd(len(BUSY))
        return min(max(self._keepalive_every, min(crowded, KEEPALIVE_CEILING)), max(1.0, self.margin / 3))

    @property
    def poll_period(self) -> float:
        """Seconds between two polls: longer while this workbench drives many runs (its own CPU is the limit)."""
        return self._poll_period if self._poll_period is not None else poll_period(self.interval)

    @poll_period.setter
    def poll_period(self, seconds: float) -> None:
        self._poll_period = seconds

    def probe(self, count: int = PROBE_ROUND_TRIPS) -> float | None:
        """Time a few empty commands on the fresh connection; the slowest round trip (s)."""
        for _ in range(count):
            self.response_times.timed(lambda: self.transport.run(":", timeout=self.command_timeout))
        return self.response_times.slowest

    # -- start -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Upload what the run needs and start it detached; returns once it runs on the host."""
        from remote.telemetry.compute import TelemetryComputer
        from remote.telemetry.parse import RawTickParser
        from remote.telemetry.sampler import SAMPLER_FILE, sampler_script, start_command

        agent = build_agent() if self.uses_agent else b""
        # room for the uploads and the telemetry of the expected duration, else another candidate or one line
        telemetry = int((self.expected or 0.0) / self.interval) * TICK_BYTES
        # where the run directory can go, and the host's python3, in one round trip: the first command, timed
        probed, python = self.response_times.timed(
            lambda: look_around(self.transport, self.uses_agent, timeout=self.command_timeout))
        self.run_dir = run_dir = self.transport.make_private_dir(
            need_bytes=len(agent) + len(sampler_script()) + telemetry + sum(len(d) for _n, d in self.files),
            probed=probed)
        self.event_tail = EventTail(f"{run_dir}/events.jsonl")
        self.sample_tail = SampleTail(f"{run_dir}/samples.raw", self._parser or RawTickParser(),
                                      self._computer or TelemetryComputer())
        secrets: dict[str, str] = {}
        try:
            uploads = [(sampler_script(), f"{run_dir}/{SAMPLER_FILE}", 0o700)]
            if python:
                uploads.append((agent, f"{run_dir}/{AGENT_FILE}", 0o600))
                secrets = {k: v for k, v in self.params.items() if k in benches.SECRET_PARAMS and v}
                spec = {"test": self.test, "params": {k: v for k, v in self.params.items() if k not in secrets},
                        "run_id": self.run_id}
                if secrets:   # never in a file: written into a fifo the agent reads once (run_secrets)
                    spec["secrets"] = SECRETS_FIFO
                uploads.append((json.dumps(spec).encode(), f"{run_dir}/spec.json", 0o600))
                uploads += [(data, f"{run_dir}/{name}", 0o600) for name, data in self.files]
            unchecked = put_run_files(self.transport, uploads)
            # a monitor's sampler ends the measurement itself: a slow link cannot make it longer
            sampler = start_command(run_dir, self.interval, seconds=None if self.uses_agent else self.duration)
            script = start_script(run_dir, self._deadline_command(0.0, (self.expected or 0.0) + self.margin),
                                  sampler, python, bool(secrets),
                                  kill_run_script(run_dir) if python else "")
            stdin = (json.dumps(secrets) + "\n").encode() if secrets else None
            result = start_checked(self.transport, script, stdin, [(data, path) for data, path, _mode in uploads],
                                   unchecked, timeout=self.command_timeout)
            found = [w for w in result.text().split() if w.startswith("deadline=")]
            if not result.ok or not found:
                raise RemoteCommandError(f"{self.host}: could not start the run: "
                                         f"{result.error_text() or result.text().strip() or 'no output'}")
            self.deadline = float(found[-1].split("=", 1)[1])
            self.boot_id = boot_id_in(result.text().split())
        except BaseException:
            self._remove_quietly()
            raise
        self._last_data = self._last_sample = self._last_keepalive = self._last_check = time.monotonic()
        choice = self.transport.run_dir_choice
        note = choice.note() if choice is not None and choice.path == run_dir else ""
        self.add_event(workbench_event("started", run_dir=run_dir, deadline=self.deadline, interval=self.interval,
                                       run_dir_note=note))
        self.measure_clock()
        if choice is not None and choice.path == run_dir and choice.passed_over:
            self.add_event(workbench_event("warning", message=note))

    def measure_clock(self) -> None:
        """How far the host's clock is from ours (remote.run_clock), said when it is far off."""
        self.clock = measure_run_clock(self.transport, self.host, self.add_event)

    def _deadline_command(self, floor: float, add: float) -> str:
        """RUN/deadline = max(floor, host uptime + add) (remote.run_scripts.deadline_command)."""
        return deadline_command(self.run_dir, floor, add)

    # -- re-attaching ----------------------------------------------------------------------------

    def resume(self, run_dir: str, deadline: float, boot_id: str = "") -> None:
        """Take over a run whose workbench went away: renew its deadline, read its files again from 0.

        Raises RunVanished when the host no longer has the run directory.
        """
        from remote.telemetry.compute import TelemetryComputer
        from remote.telemetry.parse import RawTickParser

        self.run_dir, self.deadline = run_dir, float(deadline)
        self.event_tail = EventTail(f"{run_dir}/events.jsonl")
        self.sample_tail = SampleTail(f"{run_dir}/samples.raw", self._parser or RawTickParser(),
                                      self._computer or TelemetryComputer())
        self.deadline, self.boot_id = renew_deadline(self.link, run_dir, self.deadline, self.margin,
                                                     lambda: self.command_timeout, boot_id)
        self._removed = False
        self._last_data = self._last_sample = self._last_keepalive = self._last_check = time.monotonic()
        self.add_event(workbench_event("reattached", run_dir=run_dir, deadline=self.deadline, interval=self.interval))
        self.measure_clock()

    def read_agent_pid(self) -> int | None:
        """The agent's pid as the host recorded it (None for a monitor, or when it is not there yet)."""
        if not self.uses_agent:
            return None
        return read_agent_pid(self.transport, self.run_dir)

    # -- the loop --------------------------------------------------------------------------------

    def run(self) -> str:
        """Poll until the run ends, is stopped or cancelled; clean up; returns the final status."""
        try:
            while True:
                if getattr(self.control, "left", False):
                    raise RunLeft(f"{self.host}: the run was left to its host, to be collected later")
                self.poll()
                if self.finished:
                    break
                if self.control.cancelled or (self.control.stopped and self.uses_agent):
                    self.cancel()
                    return self.status
                if self.control.stopped:
                    break
                self.control.wait(self.poll_period)
            self.finish()
        finally:
            self.close()
        return self.status

    @property
    def status(self) -> str:
        if self.failure:
            return "failed"
        if self.done is not None:
            return str(self.done.get("status") or "failed")
        if self.control.cancelled or (self.control.stopped and self.uses_agent):
            return "cancelled"
        return "done"

    @property
    def error(self) -> str:
        if self.failure:
            return self.failure
        return str(self.done.get("error") or "") if self.done else ""

    @property
    def finished(self) -> bool:
        if self.failure:
            return True
        if self.uses_agent:
            if self.done is None:
                return False
            # one more tick after "done", so the telemetry covers the end of the test
            covered = bool(self.samples) and self.samples[-1].t >= float(self.done.get("t") or 0)
            return covered or time.monotonic() - self._done_at > 2 * self.interval + 2
        if self.duration is None or not self.samples:
            return False
        began = self.samples[0].t - self.samples[0].interval
        return self.samples[-1].t - began >= self.duration - self.interval / 2

    def poll(self) -> None:
        """One round: new events and samples, keepalive when due, a liveness check when quiet."""
        try:
            with self.link.watched():
                self._read_new()
                now = time.monotonic()
                if now - self._last_keepalive >= self.keepalive_every:
                    self._keepalive()
                quiet = max(5.0, 3 * self.interval)
                # an agent's events say nothing of the sampler: no ticks for as long is checked too
                no_ticks = self.uses_agent and not self._sampler_warned and now - self._last_sample > quiet
                if (self.done is None and (now - self._last_data > quiet or no_ticks)
                        and now - self._last_check > quiet):
                    self._check_alive()
        except RemoteError as exc:
            if not self.link.is_connection_problem(exc):
                raise
            self.link.reconnect(exc)
            self._last_data = self._last_sample = self._last_check = time.monotonic()

    def _read_new(self) -> None:
        got = False
        if self.uses_agent:
            data = self._timed_read(self.event_tail)
            got = bool(data)
            for event in self.event_tail.feed(data):
                self.add_event(event)
            while self.event_tail.problems:
                self.add_event(self.event_tail.problems.pop(0))
        data = self._timed_read(self.sample_tail)
        if data:
            self._last_sample = time.monotonic()
        for sample in self.sample_tail.feed(data):
            self.samples.append(sample)
            self._call(self._on_sample, sample)
        if data and self.samples:
            slow = self._lag.check(self.samples[-1].t, self.clock, self.reconnects, time.time(), time.monotonic())
            if slow:
                self.add_event(workbench_event("warning", message=slow))
        if got or (data and not self.uses_agent):   # the sampler's ticks say nothing of the agent's health
            self._last_data = time.monotonic()

    def _timed_read(self, tail: EventTail | SampleTail) -> bytes:
        started = time.monotonic()
        data = tail.read(_Tailing(self.transport))
        if len(data) <= SMALL_READ:
            self.response_times.record(time.monotonic() - started)
        return data

    def add_event(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if event.get("type") == "done" and event.get("seq") is not None and self.done is None:
            self.done = event
            self._done_at = time.monotonic()
        self._call(self._on_event, event)

    def _call(self, callback: Callable | None, value: Any) -> None:
        if callback is None:
            return
        try:
            callback(value)
        except Exception:  # a broken display must not leave a run behind on the host
            log.exception("%s: run callback failed", self.host)

    def _keepalive(self) -> None:
        self._last_keepalive = time.monotonic()   # also when it failed: retried at the next due time
        command = self._deadline_command(self.deadline, self.margin)
        self.response_times.timed(lambda: self.transport.run(command, timeout=self.command_timeout))

    @property
    def transport(self) -> Transport:
        """The current connection (a new one after each reconnect)."""
        return self.link.transport

    @property
    def reconnects(self) -> int:
        return self.link.reconnects

    def close(self) -> None:
        """Stop the stall guard; the transport stays open (the caller closes it)."""
        self.link.stop_guard()
        BUSY.discard(self)
