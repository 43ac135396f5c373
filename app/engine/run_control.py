"""How the GUI or the command line steers a run a worker follows: stop, cancel, or leave it to its host."""
from __future__ import annotations

import threading


class RunControl:
    """Thread-safe: the GUI or the CLI's main thread asks, the worker running the run obeys."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._cancelled = threading.Event()
        self._left = threading.Event()
        self._wake = threading.Event()

    def stop(self) -> None:
        """End normally and store (open-ended monitors); an agent test is stopped as cancelled."""
        self._stopped.set()
        self._wake.set()

    def cancel(self) -> None:
        """Stop the agent, remove the run directory, store the run as cancelled."""
        self._cancelled.set()
        self._wake.set()

    def leave(self) -> None:
        """Stop following: the run goes on on its host and is collected later; nothing stored, nothing removed."""
        self._left.set()
        self._wake.set()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    @property
    def left(self) -> bool:
        return self._left.is_set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to `timeout` seconds; True at once when stop(), cancel() or leave() was called."""
        return self._wake.wait(timeout)
