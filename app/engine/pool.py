"""The start of many runs at once, spread out: a bounded number of hosts connect and upload at a time.

Starting a run costs the workbench most of what the run costs it (SSH key exchange, authentication,
the agent's upload and the start script, all in one Python process). A hundred hosts starting in the
same second would make every handshake wait for our own CPU and hit its timeout. So each run takes a
turn: at most SLOTS_PER_CPU x CPUs hosts connect, upload and start at the same time, and a new one
begins at most every SPACING seconds. Once its run is started on the host a run leaves its turn and
only polls, which is cheap. A host that hangs holds one slot until its own timeout; the others go on.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Protocol

from app.errors import AppError
from remote.command_timeouts import BUSY

SLOTS_PER_CPU = 12    # hosts starting at once per workbench CPU: a start mostly waits for its host
MIN_SLOTS = 12
SPACING = 0.05        # seconds between two hosts beginning to connect: 100 hosts begin over 5 s
_WAIT_STEP = 0.2      # seconds between two looks at the run's control while queued


class Cancellable(Protocol):
    @property
    def stopped(self) -> bool: ...

    @property
    def cancelled(self) -> bool: ...

    def wait(self, timeout: float) -> bool: ...


class NotStarted(AppError):
    """The run was stopped or cancelled while it waited for its turn: nothing ran, nothing is stored."""


def default_slots(cpus: int | None = None) -> int:
    return max(MIN_SLOTS, SLOTS_PER_CPU * max(1, cpus if cpus is not None else (os.cpu_count() or 1)))


class _Queued:
    """Stands for a run in its start-up among the busy runs (a weak set: plain object() cannot be held)."""


class Turn:
    """One run's turn to start; leave() (idempotent) lets the next host in."""

    def __init__(self, gate: StartGate, waited: float) -> None:
        self._gate = gate
        self.waited = waited         # seconds spent queued
        self._left = False
        self._token = _Queued()      # counts as a busy run from the queue on: timeouts stretch meanwhile
        BUSY.add(self._token)

    def counted(self) -> None:
        """The run's session counts itself among the busy runs from now on: stop counting it twice."""
        BUSY.discard(self._token)

    def leave(self) -> None:
        if not self._left:
            self._left = True
            BUSY.discard(self._token)
            self._gate._slots.release()

    @property
    def active(self) -> bool:
        return not self._left


class StartGate:
    """At most `slots` hosts in their start-up at once, each beginning `spacing` s after the last."""

    def __init__(self, slots: int | None = None, spacing: float = SPACING) -> None:
        self.slots = slots if slots is not None else default_slots()
        self.spacing = spacing
        self._slots = threading.BoundedSemaphore(self.slots)
        self._lock = threading.Lock()
        self._next = 0.0
        self._waiting = 0

    @property
    def waiting(self) -> int:
        """Runs queued for a turn now."""
        with self._lock:
            return self._waiting

    def enter(self, host: str, control: Cancellable | None = None) -> Turn:
        """Block until this run may start; NotStarted when it is stopped or cancelled meanwhile."""
        began = time.monotonic()
        with self._lock:
            self._waiting += 1
        try:
            while not self._slots.acquire(timeout=_WAIT_STEP):
                _check(host, control)
            with self._lock:
                now = time.monotonic()
                at = max(now, self._next)
                self._next = at + self.spacing
            try:
                _check(host, control)
                if at > now:
                    if control is not None:
                        control.wait(at - now)
                    else:
                        time.sleep(at - now)
                    _check(host, control)
            except BaseException:
                self._slots.release()
                raise
        finally:
            with self._lock:
                self._waiting -= 1
        return Turn(self, time.monotonic() - began)


def _check(host: str, control: Cancellable | None) -> None:
    if control is not None and (control.cancelled or control.stopped):
        raise NotStarted(f"{host}: stopped before it started (it waited for its turn to connect); "
                         "nothing ran on the host")


START_GATE = StartGate()   # one per process: every run of the window or the command line takes a turn here
