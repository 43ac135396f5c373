"""What a test sees while it runs detached: the event stream, phases, progress, stop requests, cleanup.

events.jsonl: one JSON object per line, seq 1, 2, 3 ... without gaps. Each line is written whole
with one os.write on an O_APPEND descriptor, so a reader never sees half a line followed by another.
"""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from . import process_tree

EVENTS_FILE = "events.jsonl"
CLEANUP_WAIT = 300.0   # seconds a second cleanup waits for the first one's undo steps (each bounds its own time)


class Cancelled(Exception):
    """Raised inside a test when the run must stop (cancel, signal, deadline)."""


class EventWriter:
    """Appends events with gapless sequence numbers; safe to call from several threads."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._seq = 0
        self._lock = threading.Lock()

    @property
    def last_seq(self) -> int:
        return self._seq

    def emit(self, event_type: str, **data: Any) -> Dict[str, Any]:
        with self._lock:
            event = {"seq": self._seq + 1, "t": time.time(), "type": event_type}  # type: Dict[str, Any]
            event.update(data)
            line = (json.dumps(event, default=str) + "\n").encode("utf-8")
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            self._seq += 1  # only once the line is out: a failed write leaves no gap
            return event

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class RunContext:
    """Handed to a test's run(ctx, params). Tests call sleep()/check() often enough to stop promptly."""

    def __init__(self, writer: EventWriter, run_dir: str, params: Dict[str, Any]) -> None:
        self.writer = writer
        self.run_dir = run_dir
        self.params = params
        self.stop_reason = ""  # "" while running; "cancelled" or "deadline" once asked to stop
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._paths = []  # type: List[str]
        self._children = []  # type: List[subprocess.Popen]
        self._callbacks = []  # type: List[Callable[[], None]]
        self._owns_tree = False  # True in the agent's run: every process below us belongs to the run
        # A stop's kill of the run's processes walks /proc until none is left: on a loaded host that
        # takes long enough for the cleanup to start its undo tools (psql dropping a scratch database),
        # which the walk would then kill too. The cleanup waits for a kill under way, and once it has
        # begun a stop leaves the killing to it.
        self._tree_lock = threading.Lock()
        self._cleanup_lock = threading.Lock()
        self._cleaning = False

    # -- events ------------------------------------------------------------------------------------

    def emit(self, event_type: str, **data: Any) -> Dict[str, Any]:
        return self.writer.emit(event_type, **data)

    @contextlib.contextmanager
    def phase(self, phase_id: str, label: str) -> Iterator[None]:
        self.check()
        self.emit("phase_start", phase=phase_id, label=label)
        try:
            yield
        finally:  # also on cancel: the workbench closes the phase marker
            self.emit("phase_end", phase=phase_id, label=label)

    def marker(self, marker_id: str, label: str, at: Optional[float] = None) -> None:
        """A point in time the live graphs mark with a labelled line, e.g. "Last accept".

        Written as {"type": "marker", "marker": marker_id, "label": label, "t": host wall clock};
        `at` (time.time() scale) places it at a moment already past, as a result found out afterwards.
        """
        data = {"marker": marker_id, "label": label}  # type: Dict[str, Any]
        if at is not None:
            data["t"] = float(at)
        self.emit("marker", **data)

    def progress(self, phase_id: str, fraction: float, eta_s: Optional[float] = None, message: str = "") -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        eta = None if eta_s is None else round(max(float(eta_s), 0.0), 3)
        self.emit("progress", phase=phase_id, fraction=round(fraction, 4), eta_s=eta, message=message)

    def result(self, test: str, metric: str, value: float, unit: str,
               metadata: Optional[Dict[str, Any]] = None) -> None:
        self.emit("result", test=test, metric=metric, value=float(value), unit=unit, metadata=metadata or {})

    def warning(self, message: str) -> None:
        self.emit("warning", message=message)

    # -- stopping ----------------------------------------------------------------------------------

    def own_process_tree(self, run_dir: str) -> bool:
        """The agent's run: mark what we start and adopt orphans, so a stop kills all of it.

        Returns whether this kernel lets us adopt orphans (the mark works without it).
        """
        process_tree.mark_environment(run_dir)
        self._owns_tree = True
        return process_tree.become_subreaper()

    def request_stop(self, reason: str) -> None:
        with self._lock:
            first = not self.stop_reason
            if first:
                self.stop_reason = reason
        self._stop.set()
        with self._tree_lock:
            if self._cleaning:   # the cleanup has killed the run's processes; what runs now are its undo tools
                return
            self.kill_children()
            if first:  # only once: later calls (the watchdog repeats them) must spare the cleanup's own tools
                self.kill_run_processes()

    def kill_run_processes(self) -> None:
        """Everything the run started, also processes that left our group (fio's jobs call setsid)."""
        if not self._owns_tree:
            return
        survivors = process_tree.kill_run_processes()
        if survivors:
            self.warning("could not kill process(es) {}: check the host".format(
                ", ".join(str(p) for p in sorted(survivors))))

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def check(self) -> None:
        if self._stop.is_set():
            raise Cancelled(self.stop_reason)

    def sleep(self, seconds: float) -> None:
        """Sleep, but raise Cancelled as soon as a stop is requested."""
        if self._stop.wait(max(seconds, 0.0)):
            raise Cancelled(self.stop_reason)

    # -- what the test leaves behind ---------------------------------------------------------------

    def add_cleanup_path(self, path: str) -> None:
        """A file or directory the test creates: removed at the end, whatever happens."""
        with self._lock:
            self._paths.append(path)

    def add_cleanup_callback(self, callback: "Callable[[], None]") -> None:
        """Something to undo at the end, whatever happens (e.g. a changed read-ahead setting)."""
        with self._lock:
            self._callbacks.append(callback)

    def popen(self, argv: Sequence[str], **kwargs: Any) -> "subprocess.Popen":
        """A child in its own process group: killed with everything it started when the run stops."""
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        with self._lock:
            self.check()
            proc = subprocess.Popen(list(argv), start_new_session=True, **kwargs)
            self._children.append(proc)
        return proc

    def kill_children(self) -> None:
        with self._lock:
            children = list(self._children)
        for proc in children:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)

    def cleanup(self) -> List[str]:
        """Kill children, run the undo steps, remove the registered paths; returns what could not be undone.

        A second call (the watchdog giving up on an orphaned run) waits for the first one's undo steps,
        so its kill does not end their tools half-way."""
        waited = self._cleanup_lock.acquire(timeout=CLEANUP_WAIT)
        try:
            with self._tree_lock:   # a stop's kill under way finishes before any undo tool starts
                self._cleaning = True
            return self._cleanup()
        finally:
            if waited:
                self._cleanup_lock.release()

    def _cleanup(self) -> List[str]:
        self.kill_children()
        self.kill_run_processes()
        with self._lock:
            paths, self._paths = list(reversed(self._paths)), []
            callbacks, self._callbacks = list(reversed(self._callbacks)), []
        failed = []
        for callback in callbacks:
            try:
                callback()
            except Exception as exc:  # one failed undo must not keep the files from being removed
                name = getattr(callback, "__qualname__", "")
                # a lambda's name (_postgres.<locals>.create.<locals>.<lambda>) tells a reader nothing
                failed.append("{}: {}".format(name, exc) if name and "<" not in name else str(exc))
        if callbacks:
            self.kill_run_processes()   # whatever an undo step left running
        for path in paths:
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                elif os.path.lexists(path):
                    os.unlink(path)
            except OSError as exc:
                failed.append("{}: {}".format(path, exc.strerror or exc))
        return failed
