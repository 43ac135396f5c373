"""One telemetry interval of one host, with sysstat's names, and its stored form (series).

NFS mounts carry nfsiostat's figures (nfs_compute: "ops_s", "read_kB_s", "write_rtt_ms" ...) under
their mount point; every network filesystem, NFS or not (a FUSE one such as sshfs), is named in
`netfs` with its type, and stored as a series "netfs.TYPE" of 1s for the ticks it was mounted.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

CPU_KEYS = ("user", "nice", "system", "iowait", "steal", "idle")
DISK_KEYS = ("r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "r_await", "w_await", "rareq-sz", "wareq-sz",
             "aqu-sz", "util")
MEM_KEYS = ("total", "memused", "avail", "dirty", "writeback", "memused-percent")
PSI_KEYS = ("%scpu", "%sio", "%fio", "%smem", "%fmem")
LOAD_KEYS = ("1", "5", "15")
TASK_KEYS = ("running", "total")

UNITS = {
    "cpu": "%", "psi": "%", "load": "", "tasks": "",
    "r/s": "1/s", "w/s": "1/s", "rrqm/s": "1/s", "wrqm/s": "1/s", "rkB/s": "kB/s", "wkB/s": "kB/s",
    "r_await": "ms", "w_await": "ms", "rareq-sz": "kB", "wareq-sz": "kB", "aqu-sz": "", "util": "%",
    "memused-percent": "%",
    "ops_s": "1/s", "kB_s": "kB/s", "kB_op": "kB", "retrans": "", "retrans_pct": "%", "rtt_ms": "ms",
    "exe_ms": "ms", "queue_ms": "ms", "errors": "", "errors_pct": "%", "rpc_bklog": "", "netfs": "",
}


@dataclass
class TelemetrySample:
    t: float                       # host epoch seconds at the end of the interval
    interval: float                # seconds, from /proc/uptime
    cpu: dict[str, float] = field(default_factory=dict)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tasks: dict[str, int] = field(default_factory=dict)
    disks: dict[str, dict[str, float]] = field(default_factory=dict)
    mem: dict[str, float] = field(default_factory=dict)
    psi: dict[str, float] = field(default_factory=dict)
    nfs: dict[str, dict[str, float]] = field(default_factory=dict)   # mount point -> nfsiostat figures
    netfs: dict[str, str] = field(default_factory=dict)              # mount point -> fstype (nfs4, fuse.sshfs)

    def to_json(self, host: str) -> dict:
        return {
            "t": round(self.t, 3), "host": host, "interval": round(self.interval, 3), "cpu": self.cpu,
            "load": list(self.load), "tasks": self.tasks, "disks": self.disks, "mem": self.mem, "psi": self.psi,
            "nfs": self.nfs, "netfs": self.netfs,
        }


@dataclass(frozen=True)
class TelemetrySeries:
    """One curve in column form: sysstat-style name, device ("" = host-wide), t in seconds since t0."""

    name: str
    device: str
    unit: str
    t: list[float]
    values: list[float]


class SeriesLike(Protocol):
    """What series_to_samples reads of a curve: the store's own series records have it too."""

    @property
    def name(self) -> str: ...

    @property
    def device(self) -> str: ...

    @property
    def t(self) -> Sequence[float]: ...

    @property
    def values(self) -> Sequence[float]: ...


def _unit(group: str, key: str) -> str:
    if group == "mem":
        return UNITS.get(key, "kB")
    if group == "nfs":   # read_rtt_ms -> rtt_ms
        return UNITS.get(key.split("_", 1)[1] if key.startswith(("read_", "write_")) else key, "")
    return UNITS.get(key, UNITS.get(group, ""))


def samples_to_series(samples: Iterable[TelemetrySample], t0: float) -> list[TelemetrySeries]:
    """Column form for the store: one series per (metric, device), t in seconds since t0.

    A device or PSI key that appears late (hot-plugged disk) gets a series from its first sample on.
    """
    columns: dict[tuple[str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))

    def put(name: str, device: str, t: float, value: float) -> None:
        ts, vs = columns[(name, device)]
        ts.append(t)
        vs.append(float(value))

    for s in samples:
        t = s.t - t0
        for key, value in s.cpu.items():
            put(f"cpu.{key}", "", t, value)
        for key, value in zip(LOAD_KEYS, s.load, strict=True):
            put(f"load.{key}", "", t, value)
        for key, value in s.tasks.items():
            put(f"tasks.{key}", "", t, value)
        for key, value in s.mem.items():
            put(f"mem.{key}", "", t, value)
        for key, value in s.psi.items():
            put(f"psi.{key}", "", t, value)
        for device, stats in s.disks.items():
            for key, value in stats.items():
                put(f"disk.{key}", device, t, value)
        for mount, stats in s.nfs.items():
            for key, value in stats.items():
                put(f"nfs.{key}", mount, t, value)
        for mount, fstype in s.netfs.items():
            put(f"netfs.{fstype}", mount, t, 1.0)
        put("interval", "", t, s.interval)
    return [
        TelemetrySeries(name=name, device=device, unit=_unit(*name.split(".", 1)) if "." in name else "s",
                        t=ts, values=vs)
        for (name, device), (ts, vs) in columns.items()
    ]


TELEMETRY_GROUPS = frozenset({"cpu", "load", "tasks", "mem", "psi", "disk", "nfs", "netfs"})


def is_telemetry(name: str) -> bool:
    """A series samples_to_series writes (a run also stores others: its results' rates, a mail queue)."""
    return name == "interval" or name.partition(".")[0] in TELEMETRY_GROUPS


def series_to_samples(series: Iterable[SeriesLike], t0: float) -> list[TelemetrySample]:
    """The inverse of samples_to_series (for replay and for opening a stored run's graphs).

    Only the telemetry series make samples: a rate series has times of its own (the agent's intervals),
    and a sample made at those times would hold nothing but zeros for the charts to draw."""
    by_t: dict[float, TelemetrySample] = {}

    def sample_at(t: float) -> TelemetrySample:
        found = by_t.get(t)
        if found is None:
            found = by_t[t] = TelemetrySample(t=t0 + t, interval=0.0)
        return found

    loads: dict[float, dict[str, float]] = defaultdict(dict)
    for s in series:
        if not is_telemetry(s.name):
            continue
        group, _, key = s.name.partition(".")
        for t, value in zip(s.t, s.values, strict=True):
            sample = sample_at(t)
            if s.name == "interval":
                sample.interval = value
            elif group == "cpu":
                sample.cpu[key] = value
            elif group == "load":
                loads[t][key] = value
            elif group == "tasks":
                sample.tasks[key] = int(value)
            elif group == "mem":
                sample.mem[key] = value
            elif group == "psi":
                sample.psi[key] = value
            elif group == "disk":
                sample.disks.setdefault(s.device, {})[key] = value
            elif group == "nfs":
                sample.nfs.setdefault(s.device, {})[key] = value
            elif group == "netfs":
                sample.netfs[s.device] = key
    for t, values in loads.items():
        by_t[t].load = tuple(values.get(k, 0.0) for k in LOAD_KEYS)  # type: ignore[assignment]
    return [by_t[t] for t in sorted(by_t)]
