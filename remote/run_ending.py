"""How a run ends: stop the sampler, read what is left, remove RUN; cancel, abort, signal the agent.

A part of RunSession (remote.run_session), kept apart so each stays readable: the run's files and
processes on the host are removed on success, failure and cancel, and a stuck agent is killed.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from remote.run_kill import kill_run_script
from remote.run_link import Link
from remote.run_scripts import signal_agent_script, stop_sampler_script
from remote.run_tail import EventTail, SampleTail, workbench_event
from remote.transport import Transport

log = logging.getLogger(__name__)

CANCEL_GRACE = 5.0   # seconds the agent gets to stop cleanly before SIGKILL


class RunEnding:
    """The ending half of RunSession: relies on the attributes and reads RunSession defines."""

    host: str
    run_dir: str
    uses_agent: bool
    done: dict[str, Any] | None
    events: list[dict[str, Any]]
    link: Link
    event_tail: EventTail
    sample_tail: SampleTail
    _removed: bool
    transport: Transport
    command_timeout: float

    def _read_new(self) -> None:
        raise NotImplementedError

    def add_event(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Stop the sampler, read what is left, remove RUN."""
        self._retrying(self._stop_sampler)
        self._retrying(self._drain)
        self._retrying(self._remove)

    def _retrying(self, step: Callable[[], None]) -> None:
        self.link.retrying(lambda _transport: step())

    def cancel(self) -> None:
        """Ask the agent to stop (cancel file + SIGTERM), SIGKILL after a grace, then finish."""
        if self.uses_agent and self.done is None:
            self._retrying(lambda: self._signal_agent("TERM", touch_cancel=True))
            end = time.monotonic() + CANCEL_GRACE
            while self.done is None and time.monotonic() < end:
                time.sleep(0.2)
                self._retrying(self._read_new)
            if self.done is None:
                self._retrying(lambda: self._signal_agent("KILL"))
                self.add_event(workbench_event("warning", message="the agent did not stop; it was killed"))
        self.finish()
        if self.done is None:  # a monitor, or an agent that had to be killed: the record says who ended it
            self.add_event(workbench_event("done", status="cancelled", error=""))
            self.done = self.events[-1]

    def abort(self) -> None:
        """After an error: kill what runs on the host and remove RUN, best effort, no reconnecting."""
        if not self.run_dir or self._removed:
            return
        steps = [self._stop_sampler, self._remove]
        if self.uses_agent:  # TERM first: the agent removes its test files; KILL what is left
            steps[1:1] = [lambda: time.sleep(1.0), lambda: self._signal_agent("KILL")]
            steps.insert(0, lambda: self._signal_agent("TERM", touch_cancel=True))
        for step in steps:
            try:
                step()
            except Exception as exc:
                log.warning("%s: cleanup after an error failed: %s", self.host, exc)
                return

    def _signal_agent(self, signal_name: str, touch_cancel: bool = False) -> None:
        if signal_name == "KILL":   # also the processes that left the agent's group (fio's jobs)
            self.transport.run(kill_run_script(self.run_dir), timeout=self.command_timeout)
            return
        script = signal_agent_script(self.run_dir, signal_name, touch_cancel)
        self.transport.run(script, timeout=self.command_timeout)

    def _stop_sampler(self) -> None:
        script = stop_sampler_script(self.run_dir)
        self.transport.run(script, timeout=self.command_timeout)

    def _drain(self) -> None:
        before = -1
        while before != (self.event_tail.offset, self.sample_tail.offset):
            before = (self.event_tail.offset, self.sample_tail.offset)
            self._read_new()

    def _remove(self) -> None:
        if not self._removed:
            self.transport.remove_dir(self.run_dir)
            self._removed = True

    def _remove_quietly(self) -> None:
        try:
            self._remove()
        except Exception as exc:  # must not hide the error that brought us here
            log.warning("%s: could not remove run directory %s: %s", self.host, self.run_dir, exc)
