"""Run blocking work (SSH, SQL) off the GUI thread and hand plain results back through signals.

A Worker wraps one call. Its signals object is created in the GUI thread, so the results are
delivered there (queued connection) and slots may update widgets. The function itself runs in a
pool thread and must never touch a widget; it returns plain data (dataclasses, dicts), never ORM
objects.
"""
from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

log = logging.getLogger(__name__)
_live_pools: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


def live_pools() -> list[WorkerPool]:
    """Every WorkerPool still alive (tests use it to find leaked work).

    A deleted pool has no work left: QThreadPool's destructor waits for its threads.
    """
    return [pool for pool in list(_live_pools) if shiboken6.isValid(pool)]


class WorkerSignals(QObject):
    """The QObject a QRunnable cannot be: it carries the results to the GUI thread."""

    finished = Signal(object)   # the function's return value
    failed = Signal(object)     # the exception it raised (with __traceback__)
    done = Signal(object)       # the Worker itself, always last (after finished/failed, or cancelled)


class Worker(QRunnable):
    """One call of `fn(*args, **kwargs)` in a pool thread."""

    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__()
        # Python owns the runnable: the pool keeps a reference until `done`, so Qt must not delete it
        self.setAutoDelete(False)
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.signals = WorkerSignals()
        self.finished = self.signals.finished
        self.failed = self.signals.failed
        self.done = self.signals.done
        self._cancelled = threading.Event()
        self._returned = threading.Event()   # set before the result is emitted: the job is over
        self.ended = threading.Event()       # set when run() is about to return
        self.started = threading.Event()

    def cancel(self) -> None:
        """Drop the result: the call cannot be interrupted, but nobody hears about it any more."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def active(self) -> bool:
        """Still working and still wanted: a slot reacting to the result sees it as no longer active."""
        return not self._cancelled.is_set() and not self._returned.is_set()

    def run(self) -> None:  # runs in a pool thread
        self.started.set()
        if self.cancelled:
            self.ended.set()
            self._emit(self.signals.done, self)
            return
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the GUI, never kill the thread
            self._returned.set()
            if not self.cancelled:
                self._emit(self.signals.failed, exc)
        else:
            self._returned.set()
            if not self.cancelled:
                self._emit(self.signals.finished, result)
        finally:
            self.ended.set()
            self._emit(self.signals.done, self)

    @staticmethod
    def _emit(signal: Any, value: Any) -> None:
        # quitting right after start-up can delete the signals object (with the application) while a job
        # still runs: nobody is left to hear its result, and a raise here would only print a traceback
        try:
            signal.emit(value)
        except RuntimeError:
            log.debug("a background job ended after its window was gone")


class WorkerPool(QObject):
    """A QThreadPool that remembers its workers, so a window can cancel and wait for them on close."""

    busy_changed = Signal(bool)
    job_done = Signal(str)      # the key the worker was started with ("" without one), after its result

    def __init__(self, parent: QObject | None = None, max_threads: int | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        # hosts that do not answer hold a thread for the whole connect timeout: allow several
        self._pool.setMaxThreadCount(max_threads or max(8, QThreadPool.globalInstance().maxThreadCount()))
        self._workers: dict[Worker, str | None] = {}
        _live_pools.add(self)

    def start(self, worker: Worker, key: str | None = None) -> Worker:
        """Queue a worker; `key` (e.g. a host name) lets callers ask whether that job is running."""
        was_busy = bool(self._workers)
        self._workers[worker] = key
        worker.done.connect(self._forget)
        self._pool.start(worker)
        if not was_busy:
            self.busy_changed.emit(True)
        return worker

    def submit(self, fn: Callable[..., Any], *args: Any, key: str | None = None, **kwargs: Any) -> Worker:
        """Shortcut: wrap `fn` in a Worker and start it. Connect to its signals right away."""
        return self.start(Worker(fn, *args, **kwargs), key=key)

    @Slot(object)
    def _forget(self, worker: Worker) -> None:
        if worker not in self._workers:
            return
        key = self._workers.pop(worker)
        self.job_done.emit(key or "")
        if not self._workers:
            self.busy_changed.emit(False)

    def is_running(self, key: str) -> bool:
        return any(k == key and w.active for w, k in self._workers.items())

    def running_keys(self) -> set[str]:
        return {k for w, k in self._workers.items() if k is not None and w.active}

    def active_count(self) -> int:
        return len(self._workers)

    def cancel_all(self) -> None:
        """Drop queued workers and silence running ones."""
        for worker in list(self._workers):
            worker.cancel()
            if self._pool.tryTake(worker):
                # never started: it will not emit `done`, so forget it here
                self._workers.pop(worker, None)
        if not self._workers:
            self.busy_changed.emit(False)

    def wait(self, timeout_ms: int = -1) -> bool:
        """Block until every started worker returned (True) or the timeout passed (False)."""
        finished = self._pool.waitForDone(timeout_ms)
        # their `done` signals are still queued: forget finished workers now, not on the next event loop
        for worker in [w for w in self._workers if w.ended.is_set()]:
            self._forget(worker)
        if not finished:
            log.warning("still %d background job(s) running", self._pool.activeThreadCount())
        return finished
