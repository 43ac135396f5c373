"""One host's telemetry as ring buffers, in the units the dashboard shows; phases and status from events.

Qt-free: the dashboard's plots read these buffers on their frame timer. x = host time - t0 (the run
start on that host), so hosts whose clocks differ still line up in an overlay.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from widgets.dbload_series import DbLoadSeries
from widgets.dns_series import DnsSeries
from widgets.ring_buffer import RingBuffer
from widgets.run_data import RunState
from widgets.telemetry_data import TelemetryPoint

# per-device buffers: sysstat keys plus derived ones (MB/s = kB/s / 1024, iops = r/s + w/s)
DISK_BUFFERS = ("util", "aqu-sz", "r/s", "w/s", "rMB/s", "wMB/s", "MB/s", "iops", "r_await", "w_await")
CPU_STACK = ("user", "system", "iowait", "steal")
HOST_BUFFERS = (*(f"cpu.{k}" for k in CPU_STACK), "cpu.busy", *(f"stack.{k}" for k in CPU_STACK),
                "load.1", "load.5", "load.15", "mem.dirty", "mem.writeback", "psi.%sio")
AUTO_SWITCH_RATIO = 1.5    # the automatic disk choice moves only to a clearly busier disk
KB_PER_MB = 1024.0


@dataclass(frozen=True)
class Metric:
    """A curve the overlay view can show for every host."""

    key: str                   # "disk.util", "cpu.busy", ...: disk.* come from the host's chosen device
    label: str
    axis: str                  # what the chart shows, with its unit, along its y axis (as Grid's charts say it)
    y_range: tuple[float, float] | None = None
    min_top: float = 1.0

    @property
    def per_device(self) -> bool:
        return self.key.startswith("disk.")


METRICS = (
    Metric("disk.util", "Disk busy — %util", "%util", (0.0, 100.0)),
    Metric("disk.aqu-sz", "Queue length — aqu-sz", "aqu-sz"),
    Metric("disk.iops", "IOPS — r/s + w/s", "IOPS", min_top=10.0),
    Metric("disk.r/s", "Reads/s — r/s", "Reads/s", min_top=10.0),
    Metric("disk.w/s", "Writes/s — w/s", "Writes/s", min_top=10.0),
    Metric("disk.MB/s", "MB/s — read + write", "MB/s"),
    Metric("disk.rMB/s", "Read MB/s", "Read MB/s"),
    Metric("disk.wMB/s", "Write MB/s", "Write MB/s"),
    Metric("disk.r_await", "Read latency — r_await ms", "Read latency (ms)"),
    Metric("disk.w_await", "Write latency — w_await ms", "Write latency (ms)"),
    Metric("cpu.busy", "CPU busy % (100 − idle)", "CPU busy %", (0.0, 100.0)),
    Metric("cpu.iowait", "CPU iowait %", "iowait %", (0.0, 100.0)),
    Metric("cpu.user", "CPU user %", "user %", (0.0, 100.0)),
    Metric("cpu.system", "CPU system %", "system %", (0.0, 100.0)),
    Metric("cpu.steal", "CPU steal %", "steal %", (0.0, 100.0)),
    Metric("load.1", "Load average — 1 min", "Load (1 min)"),
    Metric("load.5", "Load average — 5 min", "Load (5 min)"),
    Metric("load.15", "Load average — 15 min", "Load (15 min)"),
    Metric("mem.dirty", "Dirty MB", "Dirty MB"),
    Metric("mem.writeback", "Writeback MB", "Writeback MB"),
    Metric("psi.%sio", "I/O pressure — some %", "I/O pressure %", (0.0, 100.0)),
    # a database load's own figures, per second (widgets.dbload_live): empty on a host that runs none
    Metric("dbload.ops.total", "Database load — ops/s (all operations)", "ops/s", min_top=10.0),
    Metric("dbload.p99.max", "Database load — p99 ms (slowest operation)", "p99 (ms)"),
    Metric("dbload.errors", "Database load — errors/s", "errors/s"),
)
METRICS_BY_KEY = {m.key: m for m in METRICS}


@dataclass(frozen=True)
class Marker:
    x: float
    label: str
    kind: str        # "start" or "end" of a phase, or "point": a moment the test names (e.g. "Last accept")


MERGE_S = 1.5   # markers closer than this share one line: their labels would overlap


def _merged_label(point: str, phase: str) -> str:
    """ "Storm start (synthetic)" already says "Storm (synthetic)"; otherwise both names on the one line."""
    same = point.split()[:1] == phase.split()[:1] or point.lower().startswith(phase.lower())
    return point if same else f"{point} · {phase}"


def _disk_values(stats: dict[str, float]) -> dict[str, float]:
    r, w = stats.get("r/s", 0.0), stats.get("w/s", 0.0)
    rmb, wmb = stats.get("rkB/s", 0.0) / KB_PER_MB, stats.get("wkB/s", 0.0) / KB_PER_MB
    return {"util": stats.get("util", 0.0), "aqu-sz": stats.get("aqu-sz", 0.0), "r/s": r, "w/s": w,
            "rMB/s": rmb, "wMB/s": wmb, "MB/s": rmb + wmb, "iops": r + w,
            "r_await": stats.get("r_await", 0.0), "w_await": stats.get("w_await", 0.0)}


def _host_values(sample: TelemetryPoint) -> dict[str, float]:
    cpu = sample.cpu
    values = {f"cpu.{k}": cpu.get(k, 0.0) for k in CPU_STACK}
    values["cpu.busy"] = max(0.0, 100.0 - cpu["idle"]) if "idle" in cpu else 0.0
    total = 0.0
    for k in CPU_STACK:
        total += cpu.get(k, 0.0)
        values[f"stack.{k}"] = total
    values.update({"load.1": sample.load[0], "load.5": sample.load[1], "load.15": sample.load[2],
                   "mem.dirty": sample.mem.get("dirty", 0.0) / KB_PER_MB,
                   "mem.writeback": sample.mem.get("writeback", 0.0) / KB_PER_MB,
                   "psi.%sio": sample.psi.get("%sio", 0.0)})
    return values


class HostSeries:
    """Buffers of one host; `device` is the disk its disk graphs show."""

    def __init__(self, name: str, t0: float | None = None, capacity: int | None = None) -> None:
        self.name = name
        self.host_name = name       # the host it shows (a stored run's "db-beta #5" shows db-beta)
        self.colour: str | None = None   # its host's colour in the view (widgets.host_colours)
        self.t0 = t0
        self._capacity = capacity
        self.host: dict[str, RingBuffer] = {key: self._buffer() for key in HOST_BUFFERS}
        self.disks: dict[str, dict[str, RingBuffer]] = {}
        self.empty = self._buffer()            # what disk curves show before a disk is known
        self.device: str | None = None
        self.auto_device = True                # until the user picks a disk: the test's disk, else the busiest
        self.test_device: str | None = None    # the disk holding the run's test directory, when the run says
        self._activity: dict[str, float] = {}
        self.markers: list[Marker] = []
        self.samples = 0
        self.phase = ""
        self.progress: float | None = None
        self.eta: float | None = None
        self.message = ""
        self.state = ""                        # "", running, reconnecting, error, done, failed, cancelled
        # the newest interval's network filesystems (widgets.nfs_table reads these two as an NfsPoint)
        self.nfs: dict[str, dict[str, float]] = {}
        self.netfs: dict[str, str] = {}
        self.dbload = DbLoadSeries(capacity)     # a database load's ticks (empty unless the host runs one)
        self.dns = DnsSeries(capacity)           # a dns run's ticks per resolver and pass (likewise)

    def _buffer(self) -> RingBuffer:
        return RingBuffer(self._capacity) if self._capacity else RingBuffer()

    # -- data ------------------------------------------------------------------------------------

    def x(self, t: float) -> float:
        if self.t0 is None:
            self.t0 = t
        return t - self.t0

    def buffer(self, key: str, device: str | None = None) -> RingBuffer:
        """The buffer behind a METRICS key; disk.* of `device` (default: the chosen one)."""
        if key.startswith("disk."):
            per_device = self.disks.get(device or self.device or "")
            return per_device[key[5:]] if per_device else self.empty
        if key.startswith("dbload."):
            return self.dbload.buffer(key.removeprefix("dbload."))
        return self.host[key]

    def add_sample(self, sample: TelemetryPoint) -> bool:
        """Append one sample; True when the chosen device changed or a new device appeared."""
        if self.t0 is None:
            self.t0 = sample.t - sample.interval
        x = sample.t - self.t0
        for key, value in _host_values(sample).items():
            self.host[key].append(x, value)
        changed = False
        for device, stats in sample.disks.items():
            buffers = self.disks.get(device)
            if buffers is None:
                buffers = self.disks[device] = {key: self._buffer() for key in DISK_BUFFERS}
                changed = True
            values = _disk_values(stats)
            for key, value in values.items():
                buffers[key].append(x, value)
            self._activity[device] = self._activity.get(device, 0.0) + values["util"] + values["iops"]
        self.samples += 1
        self._take_netfs(sample)
        return self._choose_device() or changed

    def _take_netfs(self, sample: TelemetryPoint) -> None:
        # samples from before the sampler read mountstats (stored runs, replays) have no such fields
        self.nfs = dict(getattr(sample, "nfs", None) or {})
        self.netfs = dict(getattr(sample, "netfs", None) or {})

    @property
    def has_netfs(self) -> bool:
        """A network filesystem was mounted in the newest interval."""
        return bool(self.nfs or self.netfs)

    def add_samples(self, samples: Iterable[TelemetryPoint]) -> bool:
        """Append many samples at once (a stored run): one numpy copy per buffer."""
        samples = list(samples)
        if not samples:
            return False
        if self.t0 is None:
            self.t0 = samples[0].t - samples[0].interval
        xs = np.array([s.t for s in samples]) - self.t0
        rows = [_host_values(s) for s in samples]
        for key, buffer in self.host.items():
            buffer.extend(xs, [row[key] for row in rows])
        changed = False
        devices = sorted({d for s in samples for d in s.disks}, key=lambda d: (d not in self.disks, d))
        for device in devices:
            index = [i for i, s in enumerate(samples) if device in s.disks]
            values = [_disk_values(samples[i].disks[device]) for i in index]
            buffers = self.disks.get(device)
            if buffers is None:
                buffers = self.disks[device] = {key: self._buffer() for key in DISK_BUFFERS}
                changed = True
            for key in DISK_BUFFERS:
                buffers[key].extend(xs[index], [v[key] for v in values])
            self._activity[device] = self._activity.get(device, 0.0) + sum(v["util"] + v["iops"] for v in values)
        self.samples += len(samples)
        self._take_netfs(samples[-1])
        return self._choose_device() or changed

    def prefer_device(self, device: str) -> bool:
        """The disk holding the run's test directory: shown until the user picks another. True when the
        chosen device changed."""
        self.test_device = device
        if self.auto_device and device in self.disks and device != self.device:
            self.device = device
            return True
        return False

    def set_device(self, device: str, by_user: bool = True) -> None:
        if device in self.disks:
            self.device = device
            if by_user:
                self.auto_device = False

    def _choose_device(self) -> bool:
        if not self.disks:
            return False
        if self.auto_device and self.test_device in self.disks:
            # the run's own disk, once it has samples; "busiest" would follow a neighbour's burst
            changed = self.device != self.test_device
            self.device = self.test_device
            return changed
        if self.device not in self.disks:
            self.device = max(self.disks, key=lambda d: self._activity.get(d, 0.0))
            return True
        if not self.auto_device:
            return False
        best = max(self.disks, key=lambda d: self._activity.get(d, 0.0))
        if best != self.device and self._activity[best] > AUTO_SWITCH_RATIO * self._activity.get(self.device, 0.0):
            self.device = best
            return True
        return False

    def newest_x(self) -> float | None:
        return self.host["cpu.busy"].last_t

    def clear(self) -> None:
        for buffer in self.host.values():
            buffer.clear()
        for buffers in self.disks.values():
            for buffer in buffers.values():
                buffer.clear()
        self.markers.clear()
        self.samples = 0
        for buffer in (*self.dbload.buffers.values(), *self.dns.buffers.values()):
            buffer.clear()

    # -- events ----------------------------------------------------------------------------------

    @staticmethod
    def test_disk(event: dict) -> str | None:
        """The disk a run's facts name as holding its test directory (facts.test_dir.disk)."""
        facts = event.get("facts") if event.get("type") == "facts" else None
        test_dir = facts.get("test_dir") if isinstance(facts, dict) else None
        disk = test_dir.get("disk") if isinstance(test_dir, dict) else None
        return disk if isinstance(disk, str) and disk else None

    def add_event(self, event: dict) -> tuple[bool, bool]:
        """Apply a run event (the run directory protocol's schema); (markers changed, status changed)."""
        kind = str(event.get("type", ""))
        t = event.get("t")
        if kind in ("phase_start", "phase_end") and isinstance(t, (int, float)):
            label = str(event.get("label") or event.get("phase") or "phase")
            x = self.x(float(t))
            near = [m for m in self.markers if abs(m.x - x) < MERGE_S]
            point = next((m for m in near if m.kind == "point"), None)
            if kind == "phase_start":
                self.phase, self.progress, self.eta, self.state = label, None, None, RunState.RUNNING
                if point is not None:
                    self._replace(point, Marker(point.x, _merged_label(point.label, label), "point"))
                    return True, True
                # a phase that starts where the last one ended needs one line, not two
                if self.markers and self.markers[-1].kind == "end" and x - self.markers[-1].x < MERGE_S:
                    self.markers.pop()
                self.markers.append(Marker(x, label, "start"))
            else:
                if self.phase == label:
                    self.progress = 1.0
                if point is None:
                    self.markers.append(Marker(x, f"{label} end", "end"))
            return True, True
        if kind == "marker" and isinstance(t, (int, float)):
            label = str(event.get("label") or event.get("marker") or "marker")
            x = self.x(float(t))
            # a phase line at the same moment gives way; another named moment keeps its own line
            near = [m for m in self.markers if abs(m.x - x) < MERGE_S and m.kind != "point"]
            for other in near:
                self.markers.remove(other)
            phase = next((m.label for m in near if m.kind == "start"), None)
            self.markers.append(Marker(x, _merged_label(label, phase) if phase else label, "point"))
            self.markers.sort(key=lambda m: m.x)
            return True, False
        if kind == "progress":
            fraction = event.get("fraction")
            self.progress = float(fraction) if isinstance(fraction, (int, float)) else None
            eta = event.get("eta_s")
            self.eta = float(eta) if isinstance(eta, (int, float)) else None
            self.message = str(event.get("message") or "")
            return False, True
        if kind == "error":
            self.state, self.message = RunState.ERROR, str(event.get("message") or "error")
            return False, True
        if kind == "done":
            status = str(event.get("status") or RunState.DONE)
            self.state = status
            self.message = str(event.get("error") or "")
            return False, True
        if kind == "disconnected":
            self.state, self.message = RunState.RECONNECTING, str(event.get("message") or "connection lost")
            return False, True
        if kind == "reconnected":
            outage = event.get("outage_s")
            self.state = RunState.RUNNING
            self.message = f"reconnected after {outage:.0f} s" if isinstance(outage, (int, float)) else "reconnected"
            return False, True
        if kind == "warning":
            self.message = str(event.get("message") or "")
            return False, True
        if kind in ("start", "started", "facts", "result"):
            if self.state in ("", RunState.CONNECTING):
                self.state = RunState.RUNNING
                self.phase, self.progress, self.eta = "", None, None   # a new run here: the last phase is over
                interval = event.get("interval")
                self.message = f"sampling every {interval:g} s" if isinstance(interval, (int, float)) else ""
                return False, True
            return False, False
        return False, False

    def _replace(self, old: Marker, new: Marker) -> None:
        self.markers[self.markers.index(old)] = new

    def status_text(self) -> str:
        """One line: what the host is doing (its phase) or why it stopped."""
        parts = []
        if self.state in (RunState.ERROR, RunState.FAILED):
            return f"error: {self.message}" if self.message else "failed"
        if self.state in (RunState.DONE, RunState.CANCELLED, RunState.STOPPED):
            return self.message or self.state
        if self.state == RunState.RECONNECTING:
            return f"reconnecting… {self.message}".strip()
        # The phase alone: its own percentage and time left beside the run's overall ones (progress
        # area) read as two contradicting progress figures.
        if self.phase:
            parts.append(self.phase)
        if self.message:
            parts.append(self.message)
        return " · ".join(parts)
