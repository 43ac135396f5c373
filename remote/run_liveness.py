"""Whether a quiet run is still alive on its host: the run directory, the agent, the sampler, the boot.

A part of RunSession (remote.run_session), kept apart so each stays readable. Asked when nothing new
arrived for a while: a run directory gone, an agent dead without "done", a sampler stopped, or a host
that rebooted (its boot id changed since the start) each end the run with a line that says which.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from remote.command_timeouts import ResponseTimes
from remote.errors import RemoteError
from remote.run_reattach import rebooted_text
from remote.run_scripts import boot_id_in, liveness_script
from remote.run_tail import workbench_event
from remote.transport import Transport


class RunLiveness:
    """The liveness half of RunSession: relies on the attributes and calls RunSession defines."""

    host: str
    run_dir: str
    uses_agent: bool
    done: dict[str, Any] | None
    failure: str
    boot_id: str
    transport: Transport
    command_timeout: float
    response_times: ResponseTimes
    _last_check: float
    _sampler_warned: bool
    _read_new: Callable[[], None]
    add_event: Callable[[dict[str, Any]], None]
    _signal_agent: Callable[..., None]

    def _check_alive(self) -> None:
        self._last_check = time.monotonic()
        script = liveness_script(self.run_dir)
        words = self.response_times.timed(lambda: self.transport.run(script, timeout=self.command_timeout)).text()
        state = set(words.split())
        boot = boot_id_in(words.split())
        if self.boot_id and boot and boot != self.boot_id:
            self.failure = rebooted_text(self.host)
            return
        if "gone" in state:
            self.failure = (f"{self.host}: the run directory {self.run_dir} vanished "
                            "(removed by someone, or the run passed its deadline)")
            return
        self._read_new()   # it may have finished between the two reads
        if self.uses_agent and self.done is None and "agent=dead" in state:
            self.failure = f"{self.host}: the agent stopped without finishing: {self._log_tail('agent.log')}"
            self._signal_agent("KILL")   # what it started can outlive it (fio's jobs): the run's mark finds them
        elif "sampler=dead" in state and not self.uses_agent:
            self.failure = f"{self.host}: the telemetry sampler stopped: {self._log_tail('sampler.log')}"
        elif "sampler=dead" in state and not self._sampler_warned:
            self._sampler_warned = True
            self.add_event(workbench_event(
                "warning", message=f"the telemetry sampler stopped: {self._log_tail('sampler.log')}"))

    def _log_tail(self, name: str) -> str:
        with contextlib.suppress(RemoteError, FileNotFoundError):
            text = self.transport.get_bytes(f"{self.run_dir}/{name}").decode("utf-8", "replace")
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines:
                return lines[-1][:300]
        return f"no message in {name}"
