"""`agent.pyz run --run-dir RUN`: one detached test run, reported through RUN/events.jsonl.

The workbench starts us in the background and may go away at any time. We stop by ourselves:
- RUN/cancel appears, or SIGTERM/SIGINT/SIGHUP: stop the test, remove what it wrote, "done" cancelled;
- the host's uptime passes RUN/deadline (the workbench stopped renewing it), or RUN vanished:
  stop the test, kill the sampler, remove RUN and exit without a word (nobody is listening).
"""
import contextlib
import json
import os
import platform
import shutil
import signal
import threading
import time
from typing import Any, Dict, Optional

from . import AGENT_VERSION, benches
from .common import no_space_error, no_space_message, one_line
from .run_context import EVENTS_FILE, Cancelled, EventWriter, RunContext
from .run_secrets import check_spec_params, read_secrets

PID_FILE = "agent.pid"
SPEC_FILE = "spec.json"
CANCEL_FILE = "cancel"
DEADLINE_FILE = "deadline"
SAMPLER_PID_FILE = "sampler.pid"
SAMPLER_SCRIPT = "sampler.sh"
WATCH_TICK = 0.2          # seconds between looks at signals
WATCH_FILES_EVERY = 1.0   # seconds between looks at RUN/cancel and RUN/deadline
ORPHAN_GRACE = 5.0        # seconds the test gets to stop before the watchdog removes RUN anyway
EXIT_ORPHANED = 3
RESERVE_FILE = ".agent-reserve"   # freed on a full disk, so the last events can still be written
RESERVE_BYTES = 64 * 1024


def host_uptime() -> Optional[float]:
    try:
        with open("/proc/uptime") as handle:
            return float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def read_number(path: str) -> Optional[float]:
    try:
        with open(path) as handle:
            return float(handle.read().strip())
    except (OSError, ValueError):
        return None


def _runs(pid: int, script: str) -> bool:
    """Whether `pid` still runs `script` (an argument of its command line): a pid file may be stale."""
    try:
        with open("/proc/{}/cmdline".format(pid), "rb") as handle:
            args = handle.read().split(b"\0")
    except OSError:
        return False
    return any(os.path.normpath(os.fsdecode(arg)) == script for arg in args if arg)


def _kill_group_from(pid_file: str, sig: int = signal.SIGTERM, script: Optional[str] = None) -> None:
    pid = read_number(pid_file)
    if pid and pid > 1 and int(pid) != os.getpgrp() and (script is None or _runs(int(pid), script)):
        with contextlib.suppress(OSError):
            os.killpg(int(pid), sig)


class Watchdog(threading.Thread):
    """Turns signals, RUN/cancel and the deadline into stop requests; removes RUN when orphaned."""

    def __init__(self, ctx: RunContext, run_dir: str) -> None:
        super().__init__(name="benchbay-watchdog", daemon=True)
        self.ctx = ctx
        self.run_dir = run_dir
        self.signalled = 0          # set by the signal handler; nothing else happens in there
        self.main_finished = threading.Event()
        self._orphan_lock = threading.Lock()

    def on_signal(self, signum: int, _frame: Any) -> None:
        self.signalled = signum

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self.on_signal)

    def run(self) -> None:
        next_files = 0.0
        orphaned_at = None  # type: Optional[float]
        while True:
            now = time.monotonic()
            if self.signalled:
                self.ctx.request_stop("cancelled")
            if now >= next_files:
                next_files = now + WATCH_FILES_EVERY
                if not os.path.isdir(self.run_dir):
                    self.ctx.request_stop("deadline")
                elif os.path.exists(os.path.join(self.run_dir, CANCEL_FILE)):
                    self.ctx.request_stop("cancelled")
                else:
                    deadline = read_number(os.path.join(self.run_dir, DEADLINE_FILE))
                    uptime = host_uptime()
                    if deadline is not None and uptime is not None and uptime > deadline:
                        self.ctx.request_stop("deadline")
            if self.ctx.stop_reason == "deadline":
                orphaned_at = orphaned_at or now
                if now - orphaned_at > ORPHAN_GRACE or self.main_finished.is_set():
                    self.orphan_exit()
            time.sleep(WATCH_TICK)

    def orphan_exit(self) -> None:
        """Nobody will read what we wrote: kill what we started, remove RUN, exit now."""
        with self._orphan_lock:
            self.ctx.cleanup()
            _kill_group_from(os.path.join(self.run_dir, SAMPLER_PID_FILE),
                             script=os.path.join(self.run_dir, SAMPLER_SCRIPT))
            shutil.rmtree(self.run_dir, ignore_errors=True)
            os._exit(EXIT_ORPHANED)


class NamedEventWriter(EventWriter):
    """An EventWriter whose write errors name its file (os.write on a descriptor names none)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path

    def emit(self, event_type: str, **data: Any) -> Dict[str, Any]:
        try:
            return super().emit(event_type, **data)
        except OSError as exc:
            if exc.filename is None:
                exc.filename = self.path
            raise


def _reserve_space(run_dir: str) -> None:
    # already full: the run fails soon, and says so if it can
    with contextlib.suppress(OSError), open(os.path.join(run_dir, RESERVE_FILE), "wb") as handle:
        handle.write(b"\0" * RESERVE_BYTES)


def _release_space(run_dir: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(run_dir, RESERVE_FILE))


def _emit_last(ctx: RunContext, event_type: str, **data: Any) -> None:
    """The events that end a run: on a full disk, free the reserve and try once more."""
    try:
        ctx.emit(event_type, **data)
    except OSError as exc:
        if no_space_error(exc) is None:
            raise
        _release_space(ctx.run_dir)
        ctx.emit(event_type, **data)


def _become_group_leader() -> None:
    """Our own session: the workbench stops us and our children with one `kill -- -PID`."""
    with contextlib.suppress(OSError):  # EPERM: already a session leader
        os.setsid()


def _write_pid(run_dir: str) -> None:
    tmp = os.path.join(run_dir, PID_FILE + ".tmp")
    with open(tmp, "w") as handle:
        handle.write("{}\n".format(os.getpid()))
    os.rename(tmp, os.path.join(run_dir, PID_FILE))


def _read_spec(run_dir: str) -> Dict[str, Any]:
    with open(os.path.join(run_dir, SPEC_FILE), "rb") as handle:
        spec = json.loads(handle.read().decode("utf-8"))
    if not isinstance(spec, dict) or not isinstance(spec.get("test"), str):
        raise ValueError("spec.json must be an object with a test name")
    if not isinstance(spec.get("params", {}), dict):
        raise ValueError("spec.json: params must be an object")
    return spec


def _facts(ctx: RunContext, params: Dict[str, Any]) -> None:
    from .facts import collect_facts

    # as `agent facts`: describe where test files go (the test dir, else where run dirs live)
    test_dir = params.get("test_dir") or os.path.dirname(ctx.run_dir.rstrip("/"))
    ctx.emit("facts", facts=collect_facts(test_dir=test_dir))


def run(run_dir: str) -> int:
    run_dir = os.path.abspath(run_dir)
    _become_group_leader()
    os.chdir(run_dir)   # stay here: the workbench's last-resort kill recognises the agent by this cwd
    _write_pid(run_dir)
    writer = NamedEventWriter(os.path.join(run_dir, EVENTS_FILE))
    _reserve_space(run_dir)
    ctx = RunContext(writer, run_dir, {})
    ctx.own_process_tree(run_dir)   # before any child starts: each inherits the mark
    watchdog = Watchdog(ctx, run_dir)
    watchdog.install_signal_handlers()
    watchdog.start()
    status, error = "done", ""
    try:
        try:
            spec = _read_spec(run_dir)
        except (OSError, ValueError) as exc:
            spec = {"test": "", "params": {}}
            raise ValueError("cannot read {}: {}".format(SPEC_FILE, exc)) from None
        finally:
            ctx.emit("start", agent_version=AGENT_VERSION, test=spec["test"],
                     params=benches.redact(spec.get("params") or {}),
                     python=platform.python_version(), pid=os.getpid(), run_id=spec.get("run_id", ""))
        params = dict(spec.get("params") or {})
        check_spec_params(params)
        if spec.get("secrets"):   # the workbench writes them into a fifo, never into spec.json
            params.update(read_secrets(run_dir, lambda: ctx.stopping))
        bench = benches.load(spec["test"])
        params = bench.validate(params)
        ctx.params = params
        ctx.check()
        _facts(ctx, params)
        ctx.check()
        bench.run(ctx, params)
    except Cancelled:
        status = "cancelled"
    except Exception as exc:  # the test failed: say why, clean up, and still end with "done"
        status, error = "failed", one_line("{}: {}".format(type(exc).__name__, exc))
        full = no_space_message(exc, run_dir)
        if full:  # one plain line, and room to write it
            error = full
            _release_space(run_dir)
        if ctx.stopping:
            status, error = "cancelled", ""
        else:
            _emit_last(ctx, "error", message=error)
    finally:
        leftovers = ctx.cleanup()
    if ctx.stop_reason == "deadline":
        watchdog.main_finished.set()
        watchdog.orphan_exit()
    if leftovers:
        ctx.warning("could not remove: " + "; ".join(leftovers))
    _emit_last(ctx, "done", status=status, error=error)
    writer.close()
    return 0
