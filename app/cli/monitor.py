"""`benchbay monitor HOST`: live iostat-style telemetry of one host, one line per tick, stored as a run.

NFS mounts get a column group each with nfsiostat's figures; a network filesystem without counters
(a FUSE one such as sshfs, or cifs) is named once in a comment line, with what cannot be shown for it.
"""
from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from app.cli.commands import command_help
from app.cli.common import UsageError, interactive, one_host
from app.cli.exits import Exit
from app.engine.orchestrator import MAX_INTERVAL, MIN_INTERVAL, RunControl, RunOutcome, RunRequest
from app.workbench import Workbench
from remote.run_session import MONITOR
from remote.telemetry.sample import TelemetrySample
from storage.records import RunStatus

HIDDEN_BY_DEFAULT = ("loop", "ram", "zram", "fd", "sr")   # shown only when named with --device
_DISK_HEADER = ("r/s", "w/s", "rMB/s", "wMB/s", "await", "%util")
_NFS_HEADER = ("ops/s", "rkB/s", "wkB/s", "r_rtt", "w_rtt", "r_exe", "w_exe", "retrans")


def add_parser(sub: argparse._SubParsersAction) -> None:
    mon = sub.add_parser("monitor", help=command_help("monitor"))
    mon.add_argument("host")
    mon.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds (default: until Ctrl-C)")
    add_interval_option(mon)
    mon.add_argument("--json", action="store_true", help="one JSON object per tick")
    mon.add_argument("--device", action="append", metavar="D", default=[],
                     help="show only this device, a partition or an NFS mount point too (repeatable); "
                          "default: the whole disks and every NFS mount")
    mon.set_defaults(handler=_monitor)


def add_interval_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--interval", type=float, default=1.0, metavar="S",
                        help=f"seconds between samples, {MIN_INTERVAL:g}-{MAX_INTERVAL:g} (default 1)")


def check_interval(interval: float) -> None:
    if not MIN_INTERVAL <= interval <= MAX_INTERVAL:
        raise UsageError(f"--interval must be between {MIN_INTERVAL:g} and {MAX_INTERVAL:g} seconds, not {interval:g}")


def ask_password(bench: Workbench, host: str) -> str | None:
    """Ask in the main thread, before any worker starts; None when no password is needed (or no terminal)."""
    if interactive() and bench.needs_password(host):
        spec = bench.get_host(host)
        return getpass.getpass(f"SSH password for {spec.user + '@' if spec.user else ''}{host}: ")
    return None


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (`timeout`, CI, a logout) does what Ctrl-C does: the runs stop cleanly and are stored."""
    if threading.current_thread() is not threading.main_thread():
        yield   # signal handlers belong to the main thread (in-process callers, tests)
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def collect_lost_runs(bench: Workbench) -> None:
    """Before a command that runs something: store runs whose workbench went away and are over on
    their host; one line each on stderr (those still running are left to `benchbay runs attach`)."""
    for outcome in bench.collect_orphans(follow=False):
        print(f"benchbay: {outcome.message}", file=sys.stderr, flush=True)


def run_workers(jobs: list[Callable[[], Any]], on_interrupt: Callable[[int], None]) -> list[Any]:
    """Run each job in its own thread; Ctrl-C (or SIGTERM) calls on_interrupt(count) instead of killing them.

    Returns each job's result, or the exception it raised.
    """
    results: list[Any] = [None] * len(jobs)
    finished = [False] * len(jobs)

    def work(index: int) -> None:
        # Ctrl-C and SIGTERM go to the main thread only: the kernel may hand a process signal to any thread,
        # and one that lands in a worker's write() to a pipe ends the write early (a JSON line cut in two when
        # stdout is unbuffered, e.g. PYTHONUNBUFFERED=1). Threads the job starts inherit the mask.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            results[index] = jobs[index]()
        except BaseException as exc:  # handed to the main thread, which reports it
            results[index] = exc
        finally:
            finished[index] = True

    with sigterm_as_ctrl_c():
        for index in range(len(jobs)):
            threading.Thread(target=work, args=(index,), name=f"run-{index}", daemon=True).start()
        interrupts = 0
        # sleep, not Thread.join: a join interrupted by Ctrl-C may report a running thread as ended
        while not all(finished):
            try:
                time.sleep(0.1)
            except KeyboardInterrupt:
                interrupts += 1
                on_interrupt(interrupts)
    return results


def cancel_on_interrupt(control: RunControl, cleans_up: str) -> Callable[[int], None]:
    """run_workers' on_interrupt for a test: the first Ctrl-C cancels (the hosts clean up), the second leaves."""
    def interrupted(count: int) -> None:
        if count > 1:
            raise KeyboardInterrupt
        print(f"benchbay: cancelling ({cleans_up}; Ctrl-C again to leave now)", file=sys.stderr, flush=True)
        control.cancel()

    return interrupted


def _monitor(bench: Workbench, args: argparse.Namespace) -> int:
    one_host(args.host, "monitor", f"name one of its hosts, or record all of them at once with "
             f"`benchbay run {args.host} --test idle` (`benchbay host list` shows each host's tags)")
    check_interval(args.interval)
    if args.seconds is not None and not 0 < args.seconds < math.inf:   # also refuses nan and 1e400 (inf)
        raise UsageError(f"--seconds must be a positive number of seconds, not {args.seconds:g}")
    request = RunRequest(host=args.host, test=MONITOR, interval=args.interval, duration=args.seconds,
                         devices=tuple(args.device))
    password = ask_password(bench, args.host)
    collect_lost_runs(bench)
    control = RunControl()
    printer = _JsonPrinter() if args.json else _TextPrinter(args.device, args.interval)

    def interrupted(count: int) -> None:
        if count == 1:
            print("benchbay: stopping (Ctrl-C again to cancel)", file=sys.stderr, flush=True)
            control.stop()
        elif count == 2:
            control.cancel()
        else:
            raise KeyboardInterrupt

    [outcome] = run_workers([lambda: bench.run(request, control, printer.sample, printer.event, password)],
                            interrupted)
    if isinstance(outcome, BaseException):
        raise outcome
    return report_outcome(outcome)


def report_outcome(outcome: RunOutcome) -> int:
    if outcome.status == RunStatus.FAILED:
        print(f"benchbay: {outcome.error or 'run failed'} (run {outcome.run_id})", file=sys.stderr, flush=True)
        return Exit.FAILED
    print(f"benchbay: run {outcome.run_id} on {outcome.host} {outcome.status}: {outcome.samples} samples stored "
          f"(benchbay runs show {outcome.run_id})", file=sys.stderr, flush=True)
    return Exit.CANCELLED if outcome.status == RunStatus.CANCELLED else Exit.OK


class _Events:
    """What a monitor says besides its ticks, on stderr: warnings, a lost and found link. It also learns the
    host's clock offset, so times are shown on this computer's clock, as they are stored."""

    offset = 0.0

    def event(self, host: str, event: dict) -> None:
        kind = event.get("type")
        if kind == "clock" and isinstance(event.get("offset_s"), (int, float)):
            self.offset = float(event["offset_s"])
        elif kind in ("warning", "disconnected"):
            print(f"benchbay: {host}: {kind}: {event.get('message', '')}", file=sys.stderr, flush=True)
        elif kind == "reconnected":
            print(f"benchbay: {host}: reconnected after {event.get('outage_s', 0):.1f} s", file=sys.stderr,
                  flush=True)


class _JsonPrinter(_Events):
    def sample(self, host: str, sample: TelemetrySample) -> None:
        tick = sample.to_json(host)
        if self.offset and isinstance(tick.get("t"), (int, float)):
            tick["host_t"], tick["t"] = tick["t"], tick["t"] - self.offset   # this computer's clock
        sys.stdout.write(json.dumps(tick) + "\n")
        sys.stdout.flush()


class _TextPrinter(_Events):
    """One aligned line per tick: time, CPU, load 1, then per disk r/s w/s rMB/s wMB/s await %util, then
    per NFS mount nfsiostat's ops/s, read and write kB/s, RTT and execution ms per op, retransmissions."""

    def __init__(self, devices: list[str], interval: float) -> None:
        self.devices = list(devices)
        self.tenths = interval % 1 != 0   # 0.5 s ticks need tenths to tell two lines apart
        self.shown: list[str] | None = None
        self.mounts: list[str] = []
        self.named: set[str] = set()      # network filesystems already described in a comment line

    def sample(self, host: str, sample: TelemetrySample) -> None:
        if self.devices:   # exactly what was named: a mount point starts with "/", a device never does
            found = [d for d in self.devices if not d.startswith("/")]
            mounts = [d for d in self.devices if d.startswith("/")]
        else:
            found = sorted(d for d in sample.disks if not d.startswith(HIDDEN_BY_DEFAULT))
            mounts = sorted(sample.nfs)
        if self.shown is None:
            print(f"# {host}", flush=True)
        for mount, fstype in sorted(sample.netfs.items()):
            if mount not in self.named and mount not in sample.nfs:
                self.named.add(mount)
                print(f"# {netfs_note(mount, fstype)}", flush=True)
        # a disk plugged in (or a share mounted) during the run gets a column of its own, under a new
        # header (as sar does)
        if self.shown is None or any(d not in self.shown for d in found) or any(m not in self.mounts for m in mounts):
            self.shown = (self.shown or []) + [d for d in found if d not in (self.shown or [])]
            self.mounts += [m for m in mounts if m not in self.mounts]
            head = f"{'TIME':<10}  {'%usr':>5} {'%sys':>5} {'%iow':>5} {'%stl':>5} {'load1':>6}"
            head += (f"  {'DEV':<8} " + " ".join(f"{h:>8}" for h in _DISK_HEADER)) * len(self.shown)
            head += (f"  {'NFS':<16} " + " ".join(f"{h:>8}" for h in _NFS_HEADER)) * len(self.mounts)
            print(head, flush=True)
        cpu = sample.cpu
        stamp = datetime.fromtimestamp(sample.t - self.offset)   # this computer's clock, as stored
        clock = stamp.strftime("%H:%M:%S") + (f".{stamp.microsecond // 100000}" if self.tenths else "")
        line = (f"{clock:<10}  "
                f"{cpu.get('user', 0):5.1f} {cpu.get('system', 0):5.1f} {cpu.get('iowait', 0):5.1f} "
                f"{cpu.get('steal', 0):5.1f} {sample.load[0]:6.2f}")
        for device in self.shown:
            line += f"  {device[:8]:<8} " + " ".join(f"{v:>8}" for v in _disk_cells(sample.disks.get(device)))
        for mount in self.mounts:
            label = mount if len(mount) <= 16 else "…" + mount[-15:]   # the end of a path tells more
            line += f"  {label:<16} " + " ".join(f"{v:>8}" for v in _nfs_cells(sample.nfs.get(mount)))
        print(line, flush=True)


def netfs_note(mount: str, fstype: str) -> str:
    """What is (not) shown for a network filesystem that has no NFS counters."""
    if fstype == "fuse" or fstype.startswith("fuse."):
        return (f"{mount}: {fstype}, a FUSE network filesystem: the kernel keeps no NFS or block-device "
                "counters for it, so no figures are shown (its traffic is in the CPU and network figures)")
    return f"{mount}: {fstype}, a network filesystem: only NFS mounts have per-mount counters, none are shown"


def _nfs_cells(stats: dict[str, float] | None) -> list[str]:
    if stats is None:
        return ["-"] * len(_NFS_HEADER)
    retrans = stats.get("read_retrans", 0.0) + stats.get("write_retrans", 0.0)
    return [f"{stats.get('ops_s', 0.0):.1f}", f"{stats.get('read_kB_s', 0.0):.1f}",
            f"{stats.get('write_kB_s', 0.0):.1f}",
            f"{stats.get('read_rtt_ms', 0.0):.2f}", f"{stats.get('write_rtt_ms', 0.0):.2f}",
            f"{stats.get('read_exe_ms', 0.0):.2f}", f"{stats.get('write_exe_ms', 0.0):.2f}", f"{retrans:.0f}"]


def _disk_cells(stats: dict[str, float] | None) -> list[str]:
    if stats is None:
        return ["-"] * len(_DISK_HEADER)
    reads, writes = stats.get("r/s", 0.0), stats.get("w/s", 0.0)
    ios = reads + writes
    # iostat's old combined await: the I/O-weighted mean of r_await and w_await
    wait = (stats.get("r_await", 0.0) * reads + stats.get("w_await", 0.0) * writes) / ios if ios else 0.0
    return [f"{reads:.1f}", f"{writes:.1f}", f"{stats.get('rkB/s', 0.0) / 1024:.2f}",
            f"{stats.get('wkB/s', 0.0) / 1024:.2f}", f"{wait:.2f}", f"{stats.get('util', 0.0):.1f}"]
