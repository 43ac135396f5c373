"""The connection of a long run: reconnects with backoff when it drops, and drops it when it hangs.

A run outlives many things (Wi-Fi roaming, a VPN blip, a server's sshd restart); the host side keeps
going on its own, so losing the connection costs nothing as long as we come back within the budget
and resume reading where we stopped.
"""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from remote.errors import AuthError, CommandTimeout, ConnectError, HostKeyError, RemoteCommandError, RemoteError
from remote.run_tail import backoff_delays, is_missing_file, workbench_event
from remote.transport import Transport

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFAULT_RECONNECT_BUDGET = 120.0    # seconds of reconnect attempts before a run is given up
STALL_LIMIT = 30.0                  # a poll hanging this long means a dead connection: drop it


class RunLost(ConnectError):
    """The host stayed unreachable for the whole reconnect budget."""


class Link:
    """Owns the current transport of one run. Not thread-safe, except for the stall guard."""

    def __init__(
        self,
        transport: Transport,
        connect: Callable[[], Transport] | None = None,
        budget: float = DEFAULT_RECONNECT_BUDGET,
        on_event: Callable[[dict], None] | None = None,
        stall_limit: float = STALL_LIMIT,
        give_up: Callable[[], bool] | None = None,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        self.transport = transport
        self.host = transport.name
        self.budget = float(budget)
        self.reconnects = 0
        self.stall_limit = stall_limit
        self._connect = connect
        self._on_event = on_event or (lambda event: None)
        self._give_up = give_up or (lambda: False)    # the user stopped the run: stop trying
        self._sleep = sleep
        self._busy_since: float | None = None
        self._silent_for: float | None = None      # set by the stall guard: why the connection was dropped
        self._guard_stop = threading.Event()
        self._guard: threading.Thread | None = None

    def is_connection_problem(self, exc: BaseException) -> bool:
        if isinstance(exc, (HostKeyError, AuthError)):
            return False   # a reconnect would meet the same refusal
        if isinstance(exc, (ConnectError, CommandTimeout)):
            return True
        if isinstance(exc, RemoteCommandError) and not is_missing_file(exc):
            # paramiko may report a dying connection as a read error before it knows it is dead
            is_active = getattr(self.transport, "is_active", None)
            return is_active is not None and not is_active()
        return False

    def retrying(self, step: Callable[[Transport], T]) -> T:
        """Run `step` on the transport; after a lost connection, reconnect and run it again."""
        while True:
            try:
                return step(self.transport)
            except RemoteError as exc:
                if not self.is_connection_problem(exc):
                    raise
                self.reconnect(exc)

    @contextlib.contextmanager
    def watched(self) -> Iterator[None]:
        """Mark a stretch of remote calls: if it hangs longer than stall_limit, the transport is closed."""
        if self._guard is None:
            self._guard = threading.Thread(target=self._stall_guard, name=f"stall-guard-{self.host}", daemon=True)
            self._guard.start()
        self._busy_since = time.monotonic()
        try:
            yield
        finally:
            self._busy_since = None

    def reconnect(self, cause: BaseException) -> None:
        """Reconnect with backoff (0.5, 1, 2 ... 10 s) until the budget is spent; RunLost then."""
        if self._connect is None:
            raise RunLost(f"{self.host}: the connection was lost ({cause})") from None
        with contextlib.suppress(Exception):
            self.transport.close()   # never waits on the dead link (SSHTransport.close)
        silent, self._silent_for = self._silent_for, None
        why = (f"no answer for {silent:g} s (the link went silent)" if silent is not None
               else _short(cause))
        self._on_event(workbench_event("disconnected", message=f"{why}; reconnecting for up to {self.budget:g} s",
                                       silent_s=silent))
        lost_at, delay, attempts = time.monotonic(), backoff_delays(), 0
        while True:
            attempts += 1
            try:
                self.transport = self._connect()
                break
            except (HostKeyError, AuthError):
                raise
            except ConnectError as exc:
                last = exc
            wait = delay()
            if self._give_up():
                raise RunLost(f"{self.host}: stopped while the host was unreachable ({last}); the run on the host "
                              "stops by itself at its deadline and removes its files") from None
            if time.monotonic() - lost_at + wait > self.budget:
                raise RunLost(f"{self.host}: link lost: could not reconnect within {self.budget:g} s "
                              f"({_short(last)})") from None
            (self._sleep or time.sleep)(wait)
        self.reconnects += 1
        self._on_event(workbench_event("reconnected", outage_s=round(time.monotonic() - lost_at, 3),
                                       attempts=attempts))

    def _stall_guard(self) -> None:
        """A read blocked on a silently dead network would wait for TCP's own timeout (many minutes):
        close the transport under it instead, so it fails now and the run reconnects."""
        while not self._guard_stop.wait(1.0):
            since = self._busy_since
            if since is not None and time.monotonic() - since > self.stall_limit:
                # said to the user once, as the "disconnected" event of the reconnect that follows
                log.info("%s: no answer for %g s; dropping the connection", self.host, self.stall_limit)
                self._busy_since = None
                self._silent_for = self.stall_limit
                with contextlib.suppress(Exception):
                    self.transport.close()

    def stop_guard(self) -> None:
        self._guard_stop.set()

    def close(self) -> None:
        """Stop the stall guard and close the transport."""
        self._guard_stop.set()
        with contextlib.suppress(Exception):
            self.transport.close()


def _short(cause: BaseException) -> str:
    """The cause without the host's name in front (the line names the host already)."""
    text = str(cause) or type(cause).__name__
    host, sep, rest = text.partition(": ")
    return rest if sep and " " not in host else text
