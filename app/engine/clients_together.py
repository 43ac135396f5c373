"""Several client hosts started together: one test as an ordinary run on each, their clocks measured, one go
instant sent to every agent once all are ready (each in its own clock). The shared-storage test and the
database load from several clients both run this way (app.engine.shared_run, app.engine.dbload_multi); their
requests and outcomes share the fields below.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.engine.orchestrator import EventCallback, RunControl, RunRequest, SampleCallback
from app.errors import USER_ERRORS, AppError
from remote.clock_offset import ClockOffset, measure_offset
from remote.transport import Transport

LEAD = 3.0                 # seconds from the go signal to the first step: time to write every go file
GO_TIMEOUT = 30.0          # seconds to write one go file
GO_FILE = "go"             # the agent's start signal (remote/agent/client_sync.py reads it)


class ClientUnreachable(AppError):
    """A client host could not be reached before the sweep: nothing ran on any host."""


@dataclass(frozen=True)
class TogetherRequest:
    hosts: tuple[str, ...]
    params: Mapping[str, Any]                 # the agent's parameters
    interval: float = 1.0


@dataclass
class TogetherOutcome:
    group: str
    hosts: tuple[str, ...]
    outcomes: list[Any]                                       # RunOutcome or the exception, per host
    offsets: dict[str, ClockOffset] = field(default_factory=dict)
    total_run_id: int | None = None
    error: str = ""
    started: float | None = None                              # the go instant (workbench clock)


def client_name(index: int, host: str) -> str:
    return f"c{index + 1}-{re.sub(r'[^A-Za-z0-9_.-]', '_', host)}"[:64]


class _Starter:
    """Waits for every agent's "shared_ready", then sends each the same start instant in its own clock."""

    def __init__(self, hosts: Sequence[str], clocks: Mapping[str, Transport], control: RunControl) -> None:
        self.hosts, self.clocks, self.control = list(hosts), clocks, control
        self.ready: dict[str, str] = {}
        self.ended: set[str] = set()
        self.offsets: dict[str, ClockOffset] = {}
        self.start: float | None = None
        self.error = ""
        self._cond = threading.Condition()

    def event(self, host: str, event: dict) -> None:
        if event.get("type") == "shared_ready":
            with self._cond:
                self.ready[host] = str(event.get("run_dir") or "")
                self._cond.notify_all()

    def host_ended(self, host: str) -> None:
        with self._cond:
            self.ended.add(host)
            self._cond.notify_all()

    def run(self) -> None:
        with self._cond:
            while len(self.ready) < len(self.hosts) and not (self.ended - set(self.ready)) \
                    and not self.control.cancelled:
                self._cond.wait(0.2)
            missing = [h for h in self.hosts if h not in self.ready]
            ended = [h for h in missing if h in self.ended]
        if missing:
            if not self.control.cancelled:
                self.error = (f"{', '.join(ended or missing)} ended before it was ready to start: the other clients "
                              "were stopped too, no step ran")
            self.control.cancel()
            return
        try:
            self.offsets = _in_parallel({h: (lambda h=h: measure_offset(self.clocks[h])) for h in self.hosts})
            self.start = time.time() + LEAD
            _in_parallel({h: (lambda h=h: self._send_go(h)) for h in self.hosts})
        except Exception as exc:   # any host that cannot be told: nobody starts
            self.error = f"could not send the start signal: {exc}"
            self.control.cancel()

    def _send_go(self, host: str) -> None:
        at = self.offsets[host].to_host(self.start or 0.0)
        data = json.dumps({"start_at": round(at, 6)}).encode()
        run_dir = self.ready[host]
        self.clocks[host].put_bytes(data, f"{run_dir}/{GO_FILE}.part")
        moved = self.clocks[host].run(["mv", "-f", f"{run_dir}/{GO_FILE}.part",
                                       f"{run_dir}/{GO_FILE}"], timeout=GO_TIMEOUT)
        if not moved.ok:
            raise RuntimeError(f"{host}: {moved.error_text() or 'mv failed'}")


def _in_parallel(jobs: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    """Each job in its own thread; the results by key; the first exception raised again."""
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def work(key: str) -> None:
        try:
            results[key] = jobs[key]()
        except BaseException as exc:   # raised again below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(key,), daemon=True) for key in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def _connect_all(bench: Any, hosts: Sequence[str], passwords: Mapping[str, str | None]) -> dict[str, Transport]:
    """One connection per host for its clock and its start signal; none left open when one fails."""
    opened: dict[str, Transport] = {}

    def connect(host: str) -> Transport:
        try:
            opened[host] = bench.connect(host, passwords.get(host))
        except USER_ERRORS as exc:   # which client, and why: the sweep cannot run without it
            raise ClientUnreachable(f"{host}: {exc}; no client started") from None
        return opened[host]

    try:
        return _in_parallel({h: (lambda h=h: connect(h)) for h in hosts})
    except BaseException:
        for transport in opened.values():
            transport.close()
        raise


@dataclass
class Together:
    """What running one test on every client host together gave."""
    outcomes: list[Any]                                       # RunOutcome or the exception, per host
    offsets: dict[str, ClockOffset] = field(default_factory=dict)
    error: str = ""
    started: float | None = None                              # the go instant (workbench clock)


def run_together(bench: Any, test: str, hosts: Sequence[str], per_host: Sequence[Mapping[str, Any]],
                 interval: float, control: RunControl, passwords: Mapping[str, str | None],
                 on_event: EventCallback | None = None, on_sample: SampleCallback | None = None) -> Together:
    """`test` as an ordinary run on every host (a worker each, per_host[i] its parameters, wait_for_start):
    the clocks measured, one go instant sent once all are ready; blocks until every run has ended. A host that
    fails is its outcome (an exception); the others go on. ClientUnreachable when a host cannot be reached."""
    clocks = _connect_all(bench, hosts, passwords)
    together = Together([None] * len(hosts))
    starter = _Starter(hosts, clocks, control)
    try:
        together.offsets = _in_parallel({h: (lambda h=h: measure_offset(clocks[h])) for h in hosts})

        def events(host: str, event: dict) -> None:
            starter.event(host, event)
            if on_event is not None:
                on_event(host, event)

        def one(index: int) -> None:
            req = RunRequest(host=hosts[index], test=test, params=dict(per_host[index]), interval=interval)
            try:
                together.outcomes[index] = bench.run(req, control, on_sample, events, passwords.get(hosts[index]))
            except BaseException as exc:   # this host's failure; the others go on
                together.outcomes[index] = exc
            finally:
                starter.host_ended(hosts[index])

        threads = [threading.Thread(target=one, args=(i,), name=f"{test}-{i}", daemon=True)
                   for i in range(len(hosts))]
        for thread in threads:
            thread.start()
        starter.run()
        for transport in clocks.values():   # told (or stopped): a long sweep needs no extra connection
            transport.close()
        for thread in threads:
            thread.join()
        together.offsets = starter.offsets or together.offsets
        together.error = starter.error
        together.started = starter.start
    finally:
        for transport in clocks.values():
            transport.close()
    return together
